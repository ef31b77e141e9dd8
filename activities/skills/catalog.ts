/**
 * The skill catalog read from the host: every package under `<skills.path>/public/` and, per user,
 * `<skills.path>/users/<user_id>/custom/`, each with its front matter, enabled state and content hash. A
 * malformed package is left out with one problem line that names its file and the reason; two packages of
 * one name in one category are an error (which one an agent saw would depend on directory order).
 *
 * A package is the folder directly under its category that holds SKILL.md; everything inside it, a nested
 * SKILL.md included, belongs to that package (and to its hash), as DeerFlow stops its walk at a SKILL.md.
 */
import { readExtensionsFile } from '../extensions-file';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { ConfigError } from '../../contracts/config';
import {
  parseSkillStates,
  skillEnabled,
  unknownSkillStateWarnings,
  type SkillStates,
  type SkillsSettings,
} from '../../contracts/config/skills';
import { parseSkillFrontMatter } from '../../contracts/skill-front-matter';
import {
  SKILL_FILE,
  userIdProblem,
  type SkillCatalog,
  type SkillCategory,
  type SkillEntry,
} from '../../contracts/skills';

/** Far above a real SKILL.md; a larger one is a mistake (a data file named SKILL.md). */
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;
/** What one package may hold before it is left out: it is read whole for its hash, and mounted into sandboxes. */
export const MAX_PACKAGE_FILES = 10_000;
export const MAX_PACKAGE_BYTES = 64 * 1024 * 1024;

export interface CatalogOptions {
  /** The users whose custom skills to read; absent: every user folder under `users/`. */
  users?: readonly string[];
  /** extensions_config.json's `skills` states (readSkillStates); absent: every skill enabled. */
  states?: SkillStates;
  /** Named in problems about the states (the extensions_config file). */
  statesFile?: string;
}

/** `skills.path` as a folder on this machine: relative to the config file's folder, else to `cwd`. */
export function skillsRoot(settings: SkillsSettings, configFile?: string, cwd = process.cwd()): string {
  return resolve(configFile === undefined ? cwd : dirname(configFile), settings.path);
}

/** The `skills` states of DeerFlow's extensions_config.json (`extensions_config:`); no file, no states. */
export function readSkillStates(file: string | undefined): SkillStates {
  if (file === undefined) return {};
  const raw = readExtensionsFile(file);
  return parseSkillStates(raw, file);
}

/** Reads the catalog under `root` (absolute); `containerPath` is where agents see it. */
export function loadSkillCatalog(
  root: string,
  containerPath: string,
  options: CatalogOptions = {},
): SkillCatalog {
  const problems: string[] = [];
  const errors: string[] = [];
  const states = options.states ?? {};
  const read = (folder: string, category: SkillCategory, label: string) => {
    const entries = readCategory(root, folder, category, containerPath, states, problems);
    errors.push(...duplicateNames(entries, root, label));
    return entries;
  };

  const catalog: SkillCatalog = {
    root,
    container_path: containerPath,
    public: read(join(root, 'public'), 'public', 'public'),
    custom: {},
    problems,
  };
  if (isFolder(join(root, 'custom'))) {
    problems.push(
      'custom/: not read (custom skills belong to a user: users/<user_id>/custom/<name>/SKILL.md)',
    );
  }
  for (const user of userFolders(root, options.users, problems)) {
    const folder = join(root, 'users', user, 'custom');
    if (isFolder(folder)) catalog.custom[user] = read(folder, 'custom', `user ${user}'s custom`);
  }
  if (errors.length > 0) {
    throw new ConfigError(
      errors,
      `skills folder ${root} has ${errors.length === 1 ? '1 problem' : `${errors.length} problems`}:`,
    );
  }
  const known = [...catalog.public, ...Object.values(catalog.custom).flat()].map((entry) => entry.name);
  problems.push(...unknownSkillStateWarnings(states, known, options.statesFile ?? 'extensions_config'));
  return catalog;
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The users to read: the ones named (each checked), else every usable folder name under `users/`. */
function userFolders(root: string, users: readonly string[] | undefined, problems: string[]): string[] {
  if (users !== undefined) {
    for (const user of users) {
      const problem = userIdProblem(user);
      if (problem !== undefined) throw new ConfigError([`user id ${JSON.stringify(user)} ${problem}`]);
    }
    return [...users];
  }
  const folder = join(root, 'users');
  if (!isFolder(folder)) return [];
  const out: string[] = [];
  for (const name of readdirSync(folder).sort()) {
    if (!isFolder(join(folder, name))) continue;
    if (userIdProblem(name) === undefined) out.push(name);
    else if (!name.startsWith('.')) problems.push(`users/${name}/: not read (not a usable user id)`);
  }
  return out;
}

/** The packages of one category folder, in folder-name order; malformed ones become problem lines. */
function readCategory(
  root: string,
  folder: string,
  category: SkillCategory,
  containerPath: string,
  states: SkillStates,
  problems: string[],
): SkillEntry[] {
  if (!isFolder(folder)) return [];
  const out: SkillEntry[] = [];
  for (const name of readdirSync(folder).sort()) {
    const packageDir = join(folder, name);
    // Hidden folders (.git, .history) and plain files (a README) are not packages.
    if (name.startsWith('.') || !isFolder(packageDir)) continue;
    const skillFile = join(packageDir, SKILL_FILE);
    const shown = relative(root, skillFile).split(sep).join('/');
    const say = (reason: string) => problems.push(`${shown}: ${reason} (skipped)`);
    let stats: Stats;
    try {
      stats = statSync(skillFile);
    } catch {
      say(`is missing (a skill is a folder with ${SKILL_FILE} at its top)`);
      continue;
    }
    if (!stats.isFile()) {
      say('is not a file');
      continue;
    }
    if (stats.size > MAX_SKILL_FILE_BYTES) {
      say(`is over ${MAX_SKILL_FILE_BYTES / 1024} KB`);
      continue;
    }
    const text = utf8(readFileSync(skillFile));
    if (text === undefined) {
      say('is not UTF-8 text');
      continue;
    }
    const parsed = parseSkillFrontMatter(text);
    if (!parsed.ok) {
      say(parsed.reason);
      continue;
    }
    for (const warning of parsed.warnings) problems.push(`${shown}: ${warning}`);
    const hash = packageHash(packageDir);
    if (typeof hash !== 'string') {
      say(hash.problem);
      continue;
    }
    const front = parsed.front_matter;
    out.push({
      name: front.name,
      description: front.description,
      category,
      folder: name,
      container_path: `${containerPath}/${category}/${name}/${SKILL_FILE}`,
      host_path: skillFile,
      ...(front.license !== undefined && { license: front.license }),
      ...(front.allowed_tools !== undefined && { allowed_tools: front.allowed_tools }),
      required_secrets: front.required_secrets,
      enabled: skillEnabled(states, front.name),
      content_hash: hash,
    });
  }
  return out;
}

function utf8(bytes: Buffer): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** Two packages of one category with one name: both folders named. */
function duplicateNames(entries: SkillEntry[], root: string, label: string): string[] {
  const byName = new Map<string, string[]>();
  for (const entry of entries) {
    const folder = relative(root, dirname(entry.host_path)).split(sep).join('/');
    byName.set(entry.name, [...(byName.get(entry.name) ?? []), folder]);
  }
  return [...byName.entries()]
    .filter(([, folders]) => folders.length > 1)
    .map(
      ([name, folders]) =>
        `${name}: ${label} skills have two packages of this name (${folders.join(', ')}); rename one`,
    );
}

/**
 * `sha256:<hex>` over the package's entries in path order: each folder, file (its bytes) and link (its target,
 * not followed), so a changed, added, removed or renamed file changes it and nothing else does.
 */
export function packageHash(packageDir: string): string | { problem: string } {
  const hash = createHash('sha256');
  let files = 0;
  let bytes = 0;
  const walk = (dir: string, prefix: string): string | undefined => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const rel = prefix === '' ? name : `${prefix}/${name}`;
      const stats = lstatSync(path);
      if (stats.isDirectory()) {
        hash.update(`D\0${rel}\0`);
        const problem = walk(path, rel);
        if (problem !== undefined) return problem;
      } else if (stats.isSymbolicLink()) {
        hash.update(`L\0${rel}\0${readlinkSync(path)}\0`);
      } else if (stats.isFile()) {
        files += 1;
        bytes += stats.size;
        if (files > MAX_PACKAGE_FILES) return `holds over ${MAX_PACKAGE_FILES} files`;
        if (bytes > MAX_PACKAGE_BYTES) return `holds over ${MAX_PACKAGE_BYTES / (1024 * 1024)} MB`;
        const content = readFileSync(path);
        hash.update(`F\0${rel}\0${content.length}\0`);
        hash.update(content);
      } else {
        // A FIFO or a device would block or never end when read.
        return `holds ${rel}, which is not a file, folder or link`;
      }
    }
    return undefined;
  };
  const problem = walk(packageDir, '');
  return problem === undefined ? `sha256:${hash.digest('hex')}` : { problem };
}
