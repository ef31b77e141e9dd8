/**
 * Skills in DeerFlow's shape: `skills:` in the config file (where the packages are on the host and where an
 * agent sees them), an agent's `skills: [..]` list, and the `skills` object of DeerFlow's
 * extensions_config.json (`{<name>: {enabled: bool}}`), which says which skills are switched on. Pure: no Node
 * APIs; `activities/skills/` reads the folders.
 */
import { z } from 'zod';
import { DEFAULT_SKILLS_CONTAINER_PATH, skillNameProblem } from '../skills';
import { bool, ConfigError, configIssueProblems, listOf, mappingOf, section, text } from './fields';
import { isMapping } from './deerflow';
import { typeError, type RawIssue } from './value-types';

/** The skills folder when the config names none: `skills` beside the config file (DeerFlow: the project's). */
export const DEFAULT_SKILLS_PATH = './skills';

/** A skill name as an agent's list writes it. */
export const skillName = z
  .string({ error: typeError('a skill name', 'e.g. csv-summary') })
  .superRefine((name, ctx) => {
    const problem = skillNameProblem(name);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', input: name, message: problem });
  });

/** An agent's `skills:`: absent = every enabled skill, `[]` = none, names = those (DeerFlow's meaning). */
export const agentSkillsList = listOf(skillName, 'skill names');

/** An absolute folder inside the sandbox: `/`-separated, no `.` or `..` segment, not `/` itself. */
const containerPath = z
  .string({ error: typeError('an absolute path', 'e.g. /mnt/skills') })
  .superRefine((path, ctx) => {
    const segments = path.split('/').slice(1);
    const problem = !path.startsWith('/')
      ? 'is not an absolute path (e.g. /mnt/skills)'
      : segments.every((segment) => segment === '')
        ? 'is the root folder (a folder for the skills alone, e.g. /mnt/skills)'
        : segments.some((segment) => segment === '.' || segment === '..')
          ? 'has a . or .. segment (write the folder itself, e.g. /mnt/skills)'
          : undefined;
    if (problem !== undefined) ctx.addIssue({ code: 'custom', input: path, message: problem });
  })
  // `/mnt/skills/` and `/mnt//skills` are `/mnt/skills`: the catalog joins paths onto it.
  .transform((path) => `/${path.split('/').filter(Boolean).join('/')}`);

export const skillsSection = section('skills', {
  // DeerFlow's SkillStorage class; here the folder layout is the storage (accepted and ignored, as sandbox.use).
  use: text.optional(),
  // The host folder holding public/ and users/<user_id>/custom/ (relative: to the config file's folder).
  path: text.default(DEFAULT_SKILLS_PATH),
  // Where an agent sees them, read-only.
  container_path: containerPath.default(DEFAULT_SKILLS_CONTAINER_PATH),
  // DeerFlow's deferred skill discovery: names only in the prompt, details on request.
  deferred_discovery: bool.default(false),
}).transform(({ use: _use, ...settings }) => settings);

export type SkillsSettings = z.output<typeof skillsSection>;

/**
 * extensions_config.json's `skills`: skill name → its state. Strict as a section is, but not one of the config
 * file's (section() would list it among the YAML keys).
 */
const skillState = z.strictObject(
  { enabled: bool.default(true) },
  {
    error: (issue: RawIssue) =>
      issue.code === 'unrecognized_keys' ? 'enabled' : typeError('a mapping', 'keys: enabled')(issue),
  },
);
const skillStates = mappingOf(skillState, 'skill states ({"<name>": {"enabled": true}})');

export type SkillStates = z.output<typeof skillStates>;

/** The `skills` object of DeerFlow's extensions_config.json (absent: every skill enabled), and its problems. */
export function checkSkillStates(raw: unknown): { states: SkillStates; problems: string[] } {
  if (!isMapping(raw) || raw.skills === undefined || raw.skills === null) return { states: {}, problems: [] };
  const parsed = skillStates.safeParse(raw.skills, { reportInput: true });
  if (parsed.success) return { states: parsed.data, problems: [] };
  const problems = parsed.error.issues.flatMap((issue) =>
    configIssueProblems({ ...issue, path: ['skills', ...issue.path] }),
  );
  return { states: {}, problems };
}

/** The problems of an extensions_config file, in one error that names it. */
export function extensionsConfigError(file: string, problems: string[]): ConfigError {
  return new ConfigError(
    problems,
    `extensions_config ${file} has ${problems.length === 1 ? '1 problem' : `${problems.length} problems`}:`,
  );
}

/** The `skills` object of DeerFlow's extensions_config.json, checked. */
export function parseSkillStates(raw: unknown, file: string): SkillStates {
  const { states, problems } = checkSkillStates(raw);
  if (problems.length > 0) throw extensionsConfigError(file, problems);
  return states;
}

/** Whether extensions_config's states switch the skill on (DeerFlow: no entry, enabled). */
export function skillEnabled(states: SkillStates, name: string): boolean {
  return Object.hasOwn(states, name) ? states[name].enabled : true;
}

/** Names in extensions_config's `skills` that no package has: they switch nothing (a typo?). */
export function unknownSkillStateWarnings(
  states: SkillStates,
  known: readonly string[],
  file: string,
): string[] {
  const strangers = Object.keys(states).filter((name) => !known.includes(name));
  return strangers.length === 0
    ? []
    : [`extensions_config ${file}: skills names no skill package here: ${strangers.join(', ')}`];
}
