/**
 * Skills as DeerFlow packages them: a folder with a `SKILL.md` whose front matter names the skill. Public skills
 * are shared (`<skills path>/public/<name>/`), custom ones belong to one user
 * (`<skills path>/users/<user_id>/custom/<name>/`); an agent reads a skill read-only at
 * `<container_path>/<category>/<folder>/SKILL.md`. This module holds the catalog's shapes, the name rules and
 * `resolveSkills` (what one agent of one user gets). Pure: no Node APIs, no YAML parser (the front matter is
 * read in skill-front-matter.ts), so workflow code may import it.
 */

/** The file that makes a folder a skill package. */
export const SKILL_FILE = 'SKILL.md';

/** Where skills appear inside a sandbox, as DeerFlow mounts them. */
export const DEFAULT_SKILLS_CONTAINER_PATH = '/mnt/skills';

// Whose custom skills a run gets: its user's (DeerFlow's DEFAULT_USER_ID when none is named), a safe folder name.
export { DEFAULT_USER_ID, userIdProblem } from './user';

export const SKILL_CATEGORIES = ['public', 'custom'] as const;
export type SkillCategory = (typeof SKILL_CATEGORIES)[number];

/** DeerFlow's rule for a skill name: hyphen-case, at most 64 characters. */
export const SKILL_NAME_MAX_LENGTH = 64;
const SKILL_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Why `name` is not a skill name, or undefined when it is one. */
export function skillNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'is empty (a skill name: lowercase letters, digits and single hyphens)';
  if (name.length > SKILL_NAME_MAX_LENGTH)
    return `is longer than ${SKILL_NAME_MAX_LENGTH} characters (a skill name)`;
  if (!SKILL_NAME.test(name))
    return 'is not a skill name (lowercase letters, digits and single hyphens, e.g. csv-summary)';
  return undefined;
}

/** One skill package as the catalog found it. */
export interface SkillEntry {
  name: string;
  description: string;
  category: SkillCategory;
  /** The package's folder name (DeerFlow does not require it to equal `name`; the paths use it). */
  folder: string;
  /** Where an agent reads it: `<container_path>/<category>/<folder>/SKILL.md`. */
  container_path: string;
  /** Its SKILL.md on the machine that read the catalog. */
  host_path: string;
  license?: string;
  /** The tools the skill may use once active (front matter `allowed-tools`); absent: no restriction. */
  allowed_tools?: string[];
  /** Environment variables the skill needs at run time (front matter `required-secrets`); names only. */
  required_secrets: string[];
  /** From extensions_config.json's `skills` entry of this name; absent entry: enabled. */
  enabled: boolean;
  /** `sha256:<hex>` of the package's files (paths and contents, in path order): equal hashes, equal packages. */
  content_hash: string;
}

/** Every package under a skills folder: the public ones and, per user read, that user's custom ones. */
export interface SkillCatalog {
  /** The host folder the catalog was read from (`skills.path`, absolute). */
  root: string;
  container_path: string;
  public: SkillEntry[];
  /** user id → that user's custom skills; a user without a folder has no entry. */
  custom: Record<string, SkillEntry[]>;
  /** One line per package left out (file and reason), and other things worth a look. */
  problems: string[];
}

export interface ResolvedSkills {
  /** In name order. */
  skills: SkillEntry[];
  /** Names the agent's list gives that the catalog does not have for this user (or has disabled). */
  missing: string[];
}

/**
 * The packages one user sees, in name order, disabled ones included: the public skills with the user's custom
 * skills laid over them (a custom skill shadows the public one of the same name, for that user only).
 */
export function userSkills(catalog: SkillCatalog, userId: string): SkillEntry[] {
  const byName = new Map<string, SkillEntry>();
  for (const entry of catalog.public) byName.set(entry.name, entry);
  const custom = Object.hasOwn(catalog.custom, userId) ? catalog.custom[userId] : [];
  for (const entry of custom) byName.set(entry.name, entry);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The skills one agent of one user gets: the user's skills (userSkills), the disabled ones left out, then the
 * agent's list applied: absent = every enabled skill, `[]` = none, names = those.
 */
export function resolveSkills(
  catalog: SkillCatalog,
  userId: string,
  agentSkills: readonly string[] | undefined,
): ResolvedSkills {
  const wanted = agentSkills === undefined ? undefined : new Set(agentSkills);
  const skills = userSkills(catalog, userId).filter(
    (entry) => entry.enabled && (wanted === undefined || wanted.has(entry.name)),
  );
  const found = new Set(skills.map((entry) => entry.name));
  const missing = [...(wanted ?? [])].filter((name) => !found.has(name));
  return { skills, missing };
}
