/**
 * `loadRunSkills`: one agent's snapshot of the skill catalog, taken when its run starts (workflows/skills.ts
 * keeps it in state). It reads the public skills and the one user's custom ones, applies extensions_config's
 * switches and the agent's `skills:` list, and names the folders the tools mount. A catalog that cannot be read
 * (two packages of one name, a bad extensions_config) gives no skills and says why: the run goes on without
 * them rather than failing on a folder it may not need.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../../contracts/config';
import type { LoadRunSkillsInput, RunSkillsSnapshot, SnapshotSkill } from '../../contracts/run-skills';
import { resolveSkills, type SkillEntry } from '../../contracts/skills';
import type { SkillMount } from '../../contracts/tools';
import { loadSkillCatalog, readSkillStates } from './catalog';

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function snapshotSkill(entry: SkillEntry): SnapshotSkill {
  return {
    name: entry.name,
    description: entry.description,
    category: entry.category,
    container_path: entry.container_path,
    content_hash: entry.content_hash,
    ...(entry.allowed_tools !== undefined && { allowed_tools: entry.allowed_tools }),
    required_secrets: entry.required_secrets,
  };
}

/** The snapshot of `input.root` for one agent of one user. */
export function loadRunSkills(input: LoadRunSkillsInput): RunSkillsSnapshot {
  const { root, container_path: containerPath, user_id: userId } = input;
  if (!isFolder(root)) return { skills: [], mounts: [], problems: [] };
  try {
    const catalog = loadSkillCatalog(root, containerPath, {
      users: [userId],
      states: readSkillStates(input.extensions_config),
      ...(input.extensions_config !== undefined && { statesFile: input.extensions_config }),
    });
    const { skills, missing } = resolveSkills(catalog, userId, input.skills);
    const mounts: SkillMount[] = [];
    if (isFolder(join(root, 'public'))) {
      mounts.push({ container_path: `${containerPath}/public`, host_path: join(root, 'public') });
    }
    if (Object.hasOwn(catalog.custom, userId)) {
      mounts.push({
        container_path: `${containerPath}/custom`,
        host_path: join(root, 'users', userId, 'custom'),
      });
    }
    return {
      skills: skills.map(snapshotSkill),
      mounts,
      problems: [
        ...catalog.problems,
        ...missing.map((name) => `${name}: named in the agent's skills, but no enabled skill has this name`),
      ],
    };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return {
      skills: [],
      mounts: [],
      problems: error.problems.map((problem) => `skills not loaded: ${problem}`),
    };
  }
}

/** The skill activities of a worker. */
export function createSkillActivities() {
  return { loadRunSkills: (input: LoadRunSkillsInput) => Promise.resolve(loadRunSkills(input)) };
}
