/**
 * `subagents skills list [--user U] [--json]`: the skill packages the config's `skills.path` holds, as one
 * user's agents would get them (public skills, that user's custom ones shadowing public ones of the same
 * name): name, category, enabled, allowed tools, and the problems of the packages left out. Reads files only:
 * no server, no worker. Exit code 0; 2 for a mistake in the config, the flags or the folder (two packages of
 * one name).
 */
import { existsSync } from 'node:fs';
import { DEFAULT_USER_ID, userIdProblem, userSkills, type SkillEntry } from '../contracts/skills';
import { loadConfig } from '../client/config';
import { userSkillCatalog } from '../worker/skills';
import { parseFlags, stringFlag, UsageError } from './flags';

export const SKILLS_USAGE = `Usage: subagents skills list [--user USER] [--json] [--config FILE]

  The skills in the config's skills.path (default ./skills beside the config file): public/<name>/SKILL.md,
  and USER's users/<USER>/custom/<name>/SKILL.md, which shadow public skills of the same name for that user.
  --user USER   whose custom skills to include (default: ${DEFAULT_USER_ID}; a user without a folder has
                the public skills alone)
  --json        one JSON object: root, container_path, user, skills, problems
  A package left out (no front matter, no name or description, bad YAML, …) is listed under problems.`;

interface SkillListing {
  name: string;
  category: string;
  enabled: boolean;
  shadows_public?: true;
  allowed_tools?: string[];
  required_secrets: string[];
  description: string;
  container_path: string;
  host_path: string;
  content_hash: string;
}

const say = (line: string) => process.stderr.write(`${line}\n`);

export async function skillsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === 'help') {
    process.stdout.write(`${SKILLS_USAGE}\n`);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'list') throw new UsageError(`skills: unknown subcommand ${JSON.stringify(sub)} (list)`);
  const { values, positionals } = parseFlags(rest, { user: { type: 'string' } }, 'skills list');
  if (values.help === true) {
    process.stdout.write(`${SKILLS_USAGE}\n`);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`skills list: unexpected argument ${JSON.stringify(positionals[0])}`);
  const user = stringFlag(values, 'user') ?? DEFAULT_USER_ID;
  const problem = userIdProblem(user);
  if (problem !== undefined) throw new UsageError(`--user: ${JSON.stringify(user)} ${problem}`);

  const loaded = loadConfig(stringFlag(values, 'config'));
  for (const warning of loaded.warnings) say(`warning: ${warning}`);
  const { root, catalog } = userSkillCatalog(loaded, user);
  const publicNames = new Set(catalog.public.map((entry) => entry.name));
  const skills = userSkills(catalog, user).map((entry) => listing(entry, publicNames));

  if (values.json === true) {
    const out = {
      root,
      container_path: catalog.container_path,
      user,
      skills,
      problems: catalog.problems,
    };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(
    `${listingLines(root, existsSync(root), user, skills, catalog.problems).join('\n')}\n`,
  );
  return 0;
}

function listing(entry: SkillEntry, publicNames: Set<string>): SkillListing {
  return {
    name: entry.name,
    category: entry.category,
    enabled: entry.enabled,
    ...(entry.category === 'custom' && publicNames.has(entry.name) && { shadows_public: true as const }),
    ...(entry.allowed_tools !== undefined && { allowed_tools: entry.allowed_tools }),
    required_secrets: entry.required_secrets,
    description: entry.description,
    container_path: entry.container_path,
    host_path: entry.host_path,
    content_hash: entry.content_hash,
  };
}

function listingLines(
  root: string,
  found: boolean,
  user: string,
  skills: SkillListing[],
  problems: string[],
): string[] {
  if (!found) return [`no skills folder at ${root} (skills.path): no skills`];
  const head = `skills in ${root} for user ${user}: ${skills.length === 0 ? 'none' : skills.length}`;
  const rows = skills.map((skill) => {
    const state = skill.enabled ? 'enabled' : 'disabled';
    const shadow = skill.shadows_public ? ', shadows public' : '';
    const tools = skill.allowed_tools === undefined ? 'any' : skill.allowed_tools.join(', ') || 'none';
    return `  ${skill.name} (${skill.category}, ${state}${shadow}) tools: ${tools}: ${skill.description.split('\n')[0]}`;
  });
  const trouble = problems.length === 0 ? [] : ['problems:', ...problems.map((line) => `  ${line}`)];
  return [head, ...rows, ...trouble];
}
