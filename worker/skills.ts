/**
 * The skill packages of the config's `skills.path` as one user's agents get them (public skills, that user's
 * custom ones), read as a worker's runs read them: for `subagents skills list`, which needs no worker.
 */
import type { SkillCatalog } from '../contracts/skills';
import { loadSkillCatalog, readSkillStates, skillsRoot } from '../activities/skills/catalog';
import type { LoadedConfig } from './config';

/** The catalog under the config's skills folder (`root`, absolute) for `user`, with the packages left out. */
export function userSkillCatalog(
  { config, path }: LoadedConfig,
  user: string,
): { root: string; catalog: SkillCatalog } {
  const root = skillsRoot(config.skills, path);
  const catalog = loadSkillCatalog(root, config.skills.container_path, {
    users: [user],
    states: readSkillStates(config.extensions_config),
    ...(config.extensions_config !== undefined && { statesFile: config.extensions_config }),
  });
  return { root, catalog };
}
