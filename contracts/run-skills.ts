/**
 * A run's skills (issue 30): the settings a run input carries, the snapshot one execution takes of the catalog
 * (an activity reads it; the workflow keeps it in state and carries it across continue-as-new), and the
 * pure rules an agent's run applies to it — the prompt blocks, `describe_skill`, activation and the
 * `allowed-tools` policy. Pure: no Node APIs, so workflow code imports it.
 */
import { mcpFilterAllows, type McpToolFilter } from './mcp';
import type { ToolCall, ToolMessage, ToolSpec } from './messages';
import { TOOL_SEARCH_TOOL_NAME } from './tool-search';
import type { SealedSecret } from './secrets';
import type { SkillCategory } from './skills';
import type { SkillMount } from './tools';

export type { RunSkillsSettings } from './input-schemas';

/** One skill as an agent's run sees it: what the catalog said when the run took its snapshot. */
export interface SnapshotSkill {
  name: string;
  description: string;
  category: SkillCategory;
  /** Where the agent reads it: `<container_path>/<category>/<folder>/SKILL.md`. */
  container_path: string;
  content_hash: string;
  /** The tools the skill may use once active; absent: no restriction. */
  allowed_tools?: string[];
  required_secrets: string[];
}

/** What `loadRunSkills` reads the catalog for: one agent of one user. */
export interface LoadRunSkillsInput {
  /** The skills folder on the worker's machine (absolute). */
  root: string;
  container_path: string;
  user_id: string;
  /** The agent's `skills:` list: absent = every enabled skill, `[]` = none. */
  skills?: string[];
  /** DeerFlow's extensions_config.json, whose `skills` switch skills off by name. */
  extensions_config?: string;
}

/** One execution's view of the catalog, kept in workflow state (replay and continue-as-new see the same). */
export interface RunSkillsSnapshot {
  /** The agent's skills, in name order. */
  skills: SnapshotSkill[];
  /** The folders the tools mount read-only: `<cp>/public`, and `<cp>/custom` when the user has a folder. */
  mounts: SkillMount[];
  /** Packages left out, names the agent's list gives that the catalog lacks, a catalog that could not be read. */
  problems: string[];
}

/** A skill that became active in an agent's run, and how: a `/name` prompt, or a read of its SKILL.md. */
export interface ActiveSkill {
  name: string;
  by: 'slash' | 'read';
}

/** The tool that answers what a skill is for, when the prompt lists only names (`deferred_discovery`). */
export const DESCRIBE_SKILL_TOOL_NAME = 'describe_skill';

/** Characters of one `describe_skill` query: a name or a few words. */
const DESCRIBE_QUERY_MAX_CHARS = 200;

function byName<T extends { name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The system prompt's skills block: DeerFlow's `<available_skills>` (name, description, where to read it), or
 * with `deferred` the `<skill_index>` of names alone. None when the agent has no skill. Sorted by name, so
 * the prompt's prefix is the same at every turn and every execution.
 */
export function skillsPromptBlock(skills: readonly SnapshotSkill[], deferred: boolean): string | undefined {
  if (skills.length === 0) return undefined;
  const sorted = byName(skills);
  if (deferred) {
    return [
      '<skill_index>',
      ...sorted.map((skill) => `- ${skill.name}`),
      '</skill_index>',
      `Skills are instructions for particular tasks. Call ${DESCRIBE_SKILL_TOOL_NAME} with a name (or a few ` +
        'words) to learn what a skill is for and where to read it; read its SKILL.md with read_file before ' +
        'you follow it.',
    ].join('\n');
  }
  return [
    '<available_skills>',
    ...sorted.map((skill) =>
      [
        '<skill>',
        `<name>${skill.name}</name>`,
        `<description>${skill.description}</description>`,
        `<location>${skill.container_path}</location>`,
        '</skill>',
      ].join('\n'),
    ),
    '</available_skills>',
    'Skills are instructions for particular tasks. When a task matches a skill, read its SKILL.md (the ' +
      'location above) with read_file first and follow it; its other files sit beside it.',
  ].join('\n');
}

/** `describe_skill` as the model sees it. */
export function describeSkillToolSpec(): ToolSpec {
  return {
    name: DESCRIBE_SKILL_TOOL_NAME,
    description:
      'Describe the skills of the skill index that match a name or a few words: what each is for, where to ' +
      'read its SKILL.md, and the tools it may use once you follow it.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'A skill name from the index, or a few words about the task.' },
      },
      required: ['query'],
      additionalProperties: false,
    },
  };
}

function describeOne(skill: SnapshotSkill): string {
  return [
    `name: ${skill.name}`,
    `description: ${skill.description}`,
    `read it at: ${skill.container_path}`,
    `allowed-tools: ${skill.allowed_tools === undefined ? 'any' : skill.allowed_tools.join(', ') || 'none'}`,
  ].join('\n');
}

/** The query of a `describe_skill` call (`{query}`, or `{name}` as a model may write it), or why not. */
function describeQuery(args: string): { query: string } | { error: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    return { error: `${DESCRIBE_SKILL_TOOL_NAME}: the arguments are not JSON (give {"query": "<name>"})` };
  }
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const value = fields.query ?? fields.name;
  if (typeof value !== 'string' || value.trim() === '') {
    return { error: `${DESCRIBE_SKILL_TOOL_NAME}: give a skill name or a few words as "query"` };
  }
  return { query: value.trim().slice(0, DESCRIBE_QUERY_MAX_CHARS).toLowerCase() };
}

/**
 * `describe_skill`'s answer, from the snapshot alone (no activity: a replay answers the same): the skill of that
 * name, else every skill whose name or description holds each word of the query.
 */
export function describeSkills(skills: readonly SnapshotSkill[], call: ToolCall): ToolMessage {
  const reply = (content: string, isError: boolean): ToolMessage => ({
    role: 'tool',
    tool_call_id: call.id,
    name: call.name,
    content,
    is_error: isError,
  });
  const parsed = describeQuery(call.args);
  if ('error' in parsed) return reply(parsed.error, true);
  const { query } = parsed;
  const sorted = byName(skills);
  const exact = sorted.filter((skill) => skill.name === query);
  const words = query.split(/\s+/).filter(Boolean);
  const found =
    exact.length > 0
      ? exact
      : sorted.filter((skill) => {
          const haystack = `${skill.name} ${skill.description}`.toLowerCase();
          return words.every((word) => haystack.includes(word));
        });
  if (found.length === 0) {
    return reply(
      `No skill matches ${JSON.stringify(query)}. Skills: ${sorted.map((skill) => skill.name).join(', ')}`,
      false,
    );
  }
  return reply(found.map(describeOne).join('\n\n'), false);
}

/** `/csv-summary do this` → the skill it names, when it is one of the agent's (DeerFlow's slash activation). */
export function slashSkill(prompt: string, skills: readonly SnapshotSkill[]): string | undefined {
  const match = /^\s*\/([a-z0-9]+(?:-[a-z0-9]+)*)(?=\s|$)/.exec(prompt);
  if (match === null) return undefined;
  return skills.some((skill) => skill.name === match[1]) ? match[1] : undefined;
}

/** `/mnt//skills/./a/SKILL.md` and `/mnt/skills/a/SKILL.md` name one file: `.` and empty segments dropped. */
function normalPath(path: string): string {
  return `/${path
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .join('/')}`;
}

/**
 * DeerFlow's `summarization.skill_file_read_tool_names` default: the tools whose read of a SKILL.md activates its
 * skill (and is kept through compaction). Only those this project has can be called; the others are harmless.
 */
export const DEFAULT_SKILL_FILE_READ_TOOL_NAMES: readonly string[] = ['read_file', 'read', 'view', 'cat'];

/**
 * The tools an active skill's `allowed-tools` never hides nor refuses (DeerFlow's always-available built-ins):
 * `describe_skill` and `tool_search` only describe or load what the policy still filters, and `read_file` reads
 * another skill's SKILL.md (a read of any other file needs it in the list).
 */
export const SKILL_POLICY_ALWAYS_SHOWN: readonly string[] = [
  DESCRIBE_SKILL_TOOL_NAME,
  'read_file',
  TOOL_SEARCH_TOOL_NAME,
];

/** The agent's skill whose SKILL.md a call of one of `readTools` reads (its `path`), if any. */
export function skillReadBy(
  call: ToolCall,
  skills: readonly SnapshotSkill[],
  readTools: readonly string[] = DEFAULT_SKILL_FILE_READ_TOOL_NAMES,
): SnapshotSkill | undefined {
  if (!readTools.includes(call.name)) return undefined;
  let path: unknown;
  try {
    path = (JSON.parse(call.args) as { path?: unknown } | null)?.path;
  } catch {
    return undefined;
  }
  if (typeof path !== 'string' || !path.startsWith('/')) return undefined;
  const wanted = normalPath(path);
  return skills.find((skill) => normalPath(skill.container_path) === wanted);
}

/** The tools the active skills allow, and which skills say so; undefined: no restriction. */
export interface SkillToolPolicy {
  allowed: string[];
  /** The skills whose `allowed-tools` make the list (named in a refusal). */
  by: string[];
}

/**
 * The tools an agent may call while these skills are active. A skill activated by a `/name` prompt dominates:
 * its list alone applies (none: no restriction). Otherwise the union of the lists the active skills declare; a
 * skill that declares none does not widen it (reading an unrestricted skill must not lift another's limit).
 */
export function skillToolPolicy(
  active: readonly ActiveSkill[],
  skills: readonly SnapshotSkill[],
): SkillToolPolicy | undefined {
  const entry = (name: string) => skills.find((skill) => skill.name === name);
  const slash = active.find((skill) => skill.by === 'slash');
  const ruling = (slash ? [slash] : active)
    .map((skill) => entry(skill.name))
    .filter((skill): skill is SnapshotSkill => skill?.allowed_tools !== undefined);
  if (ruling.length === 0) return undefined;
  const allowed = [...new Set(ruling.flatMap((skill) => skill.allowed_tools ?? []))];
  return { allowed, by: ruling.map((skill) => skill.name) };
}

/**
 * The tools the model is shown while the policy holds: those of `names` the list allows, and the ones it never
 * hides (SKILL_POLICY_ALWAYS_SHOWN); every one without a policy. In `names`' order.
 */
export function skillVisibleTools(names: readonly string[], policy: SkillToolPolicy | undefined): string[] {
  if (policy === undefined) return [...names];
  return names.filter((name) => policy.allowed.includes(name) || SKILL_POLICY_ALWAYS_SHOWN.includes(name));
}

/** How a response's calls are judged: which tools read a SKILL.md, and whether `tool_search` is always allowed. */
export interface ScreenOptions {
  readTools?: readonly string[];
  /** DeerFlow keeps `tool_search` usable under a restricting skill (its results are filtered by the policy). */
  toolSearchAllowed?: boolean;
}

/**
 * Why the policy refuses this call, or undefined when it may run. Always allowed: `describe_skill`, a read of
 * one of the agent's SKILL.md files (so another skill can still be read), and with `toolSearchAllowed`
 * `tool_search`. `task` and every other tool must be in the list.
 */
export function skillRefusal(
  call: ToolCall,
  policy: SkillToolPolicy | undefined,
  skills: readonly SnapshotSkill[],
  options: ScreenOptions = {},
): string | undefined {
  if (policy === undefined || policy.allowed.includes(call.name)) return undefined;
  if (call.name === DESCRIBE_SKILL_TOOL_NAME || skillReadBy(call, skills, options.readTools) !== undefined)
    return undefined;
  if (options.toolSearchAllowed && call.name === TOOL_SEARCH_TOOL_NAME) return undefined;
  const who =
    policy.by.length === 1 ? `skill ${policy.by[0]} is active` : `skills ${policy.by.join(', ')} are active`;
  return `Tool ${call.name} is not allowed while ${who} (allowed-tools: ${policy.allowed.join(', ') || 'none'})`;
}

/** The sealed secrets a bash call gets: those some active skill declares in `required-secrets`. */
export function secretsForActiveSkills(
  secrets: readonly SealedSecret[] | undefined,
  active: readonly ActiveSkill[],
  skills: readonly SnapshotSkill[],
): SealedSecret[] {
  if (secrets === undefined || secrets.length === 0) return [];
  const declared = new Set(
    active.flatMap((skill) => skills.find((entry) => entry.name === skill.name)?.required_secrets ?? []),
  );
  return secrets.filter((secret) => declared.has(secret.name));
}

/** What the policy decided for one call of a response. */
export interface ScreenedCall {
  /** The refusal, as the call's tool result: the call is never run. */
  refusal?: ToolMessage;
  /** The skill this call activated (a read of its SKILL.md). */
  activated?: string;
  /** For a bash call: the secrets its active skills declare. */
  secrets?: SealedSecret[];
}

/**
 * A response's calls through the policy, in the order the model issued them: each is judged by the skills
 * active before it, and a read of a SKILL.md activates its skill for the calls after it. Returns the decisions
 * and the active skills after the response.
 */
export function screenCalls(
  calls: readonly ToolCall[],
  active: readonly ActiveSkill[],
  skills: readonly SnapshotSkill[],
  secrets: readonly SealedSecret[] | undefined,
  options: ScreenOptions = {},
): { screened: ScreenedCall[]; active: ActiveSkill[] } {
  let now = [...active];
  const screened = calls.map((call): ScreenedCall => {
    const refusal = skillRefusal(call, skillToolPolicy(now, skills), skills, options);
    if (refusal !== undefined) {
      return {
        refusal: { role: 'tool', tool_call_id: call.id, name: call.name, content: refusal, is_error: true },
      };
    }
    const read = skillReadBy(call, skills, options.readTools);
    if (read !== undefined && !now.some((skill) => skill.name === read.name)) {
      now = [...now, { name: read.name, by: 'read' }];
      return { activated: read.name };
    }
    if (call.name !== 'bash') return {};
    const granted = secretsForActiveSkills(secrets, now, skills);
    return granted.length > 0 ? { secrets: granted } : {};
  });
  return { screened, active: now };
}

/**
 * The MCP tools an agent is shown and may find with `tool_search` while the policy holds: those of its filter the
 * list names (DeerFlow filters `tool_search`'s results by the same policy). The filter itself without a policy.
 */
export function skillMcpFilter(filter: McpToolFilter, policy: SkillToolPolicy | undefined): McpToolFilter {
  if (policy === undefined) return filter;
  return { ...filter, allow: policy.allowed.filter((name) => mcpFilterAllows(filter, name)) };
}

/**
 * After a compaction, the reminder of the active skills (DeerFlow's durable skill context): each one's name,
 * description and SKILL.md, to read again before following it, since the read itself was summarized away.
 * None without an active skill.
 */
export function activeSkillsReminder(
  active: readonly ActiveSkill[],
  skills: readonly SnapshotSkill[],
): string | undefined {
  const entries = active.flatMap((entry) => skills.find((skill) => skill.name === entry.name) ?? []);
  if (entries.length === 0) return undefined;
  return [
    '<active_skills>',
    'Active skills (loaded earlier; read the file again before applying its instructions):',
    ...entries.map((skill) => {
      const description = skill.description.split(/\s+/).join(' ').trim().slice(0, 200);
      return `- ${skill.name}${description ? `: ${description}` : ''} -> ${skill.container_path}`;
    }),
    '</active_skills>',
  ].join('\n');
}
