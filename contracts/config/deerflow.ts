/**
 * DeerFlow's spellings of the sections this project reads, so a DeerFlow `config.yaml` works as written.
 */
import type { z } from 'zod';
import { formatPath, isSecretPath, problem, type ProblemPath } from '../problems';
import { envReferenceName } from './fields';

interface Compat {
  aliases?: Record<string, string>;
  ignored?: readonly string[];
}

/** The LangChain classes' own spellings of one setting (ChatAnthropic's, ChatGoogleGenerativeAI's, …). */
const MODEL_COMPAT: Compat = {
  aliases: {
    request_timeout: 'request_timeout_seconds',
    timeout: 'request_timeout_seconds',
    default_request_timeout: 'request_timeout_seconds',
    api_base: 'base_url',
    anthropic_api_url: 'base_url',
    azure_endpoint: 'base_url',
    endpoint_url: 'base_url',
    openai_api_key: 'api_key',
    anthropic_api_key: 'api_key',
    google_api_key: 'api_key',
    gemini_api_key: 'api_key',
    azure_openai_api_key: 'api_key',
    model_name: 'model',
    model_id: 'model',
    max_tokens_to_sample: 'max_tokens',
    max_output_tokens: 'max_tokens',
    num_predict: 'max_tokens',
    region_name: 'region',
    credentials_profile_name: 'aws_profile',
    deployment_name: 'azure_deployment',
    openai_api_version: 'api_version',
  },
  ignored: [
    'supports_thinking',
    'supports_vision',
    'supports_reasoning_effort',
    'when_thinking_enabled',
    'when_thinking_disabled',
    'context_window',
    'max_retries',
  ],
};
const SANDBOX_COMPAT: Compat = {
  aliases: { bash_command_timeout: 'bash_timeout_seconds', bash_output_max_chars: 'output_cap_chars' },
  ignored: ['mounts', 'read_file_output_max_chars', 'ls_output_max_chars'],
};
const LOOP_DETECTION_COMPAT: Compat = { ignored: ['max_tracked_threads'] };
const SUMMARIZATION_COMPAT: Compat = {
  aliases: { model_name: 'model' },
  ignored: ['trim_tokens_to_summarize'],
};

export type Mapping = Record<string, unknown>;
export type Env = Readonly<Record<string, string | undefined>>;

export function isMapping(value: unknown): value is Mapping {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

interface Normalizer {
  warnings: string[];
  problems: string[];
}

/** Copies the value with `null` mapping entries dropped and `$NAME` strings read from `env` (keys excepted). */
function prepareValue(value: unknown, path: ProblemPath, env: Env | undefined, n: Normalizer): unknown {
  if (Array.isArray(value)) return value.map((item, index) => prepareValue(item, [...path, index], env, n));
  if (isMapping(value)) {
    const out: Mapping = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== null) out[key] = prepareValue(item, [...path, key], env, n);
    }
    return out;
  }
  if (typeof value === 'string' && env !== undefined && !isSecretPath(path)) {
    const name = envReferenceName(value);
    if (name !== undefined) {
      const resolved = env[name];
      if (resolved === undefined) n.problems.push(problem(path, value, 'is not set in the environment'));
      return resolved ?? value;
    }
  }
  return value;
}

function applyCompat(mapping: unknown, path: ProblemPath, compat: Compat, n: Normalizer): void {
  if (!isMapping(mapping)) return;
  for (const [alias, key] of Object.entries(compat.aliases ?? {})) {
    if (!Object.hasOwn(mapping, alias)) continue;
    if (Object.hasOwn(mapping, key))
      n.problems.push(problem([...path, alias], undefined, `and ${key} are the same setting (keep one)`));
    else mapping[key] = mapping[alias];
    delete mapping[alias];
  }
  const ignored = (compat.ignored ?? []).filter((key) => Object.hasOwn(mapping, key));
  if (ignored.length > 0) {
    n.warnings.push(
      `${formatPath(path)}: ignoring DeerFlow keys this project does not use: ${ignored.join(', ')}`,
    );
    for (const key of ignored) delete mapping[key];
  }
}

/** DeerFlow writes an agent's tools as a plain list: that list is the allow list. */
function toolListAsFilter(agent: unknown): void {
  if (isMapping(agent) && Array.isArray(agent.tools)) agent.tools = { allow: agent.tools };
}

/** DeerFlow's `trigger: [{type: tokens, value}]` and `keep: {type: messages, value}`. */
function summarizationCompat(mapping: unknown, n: Normalizer): void {
  if (!isMapping(mapping)) return;
  const convert = (
    key: string,
    target: string,
    type: string,
    entries: unknown[],
    path: (i: number) => ProblemPath,
  ) => {
    if (Object.hasOwn(mapping, target)) {
      n.problems.push(
        problem(['summarization', key], undefined, `and ${target} are the same setting (keep one)`),
      );
      return;
    }
    entries.forEach((entry, index) => {
      if (isMapping(entry) && entry.type === type) {
        // Several entries of the supported type: the first one decides.
        if (!Object.hasOwn(mapping, target)) mapping[target] = entry.value;
        return;
      }
      const entryType = isMapping(entry) ? entry.type : undefined;
      n.problems.push(
        problem([...path(index), 'type'], entryType, `is not supported here (${type}; or write ${target})`),
      );
    });
  };
  if (Object.hasOwn(mapping, 'trigger')) {
    const trigger = mapping.trigger;
    delete mapping.trigger;
    const entries = Array.isArray(trigger) ? trigger : [trigger];
    convert('trigger', 'trigger_tokens', 'tokens', entries, (i) =>
      Array.isArray(trigger) ? ['summarization', 'trigger', i] : ['summarization', 'trigger'],
    );
  }
  if (Object.hasOwn(mapping, 'keep')) {
    const keep = mapping.keep;
    delete mapping.keep;
    convert('keep', 'keep_messages', 'messages', [keep], () => ['summarization', 'keep']);
  }
}

export interface Normalized {
  /** The sections this project reads, in its own spellings. */
  sections: Mapping;
  warnings: string[];
  problems: string[];
}

/**
 * Copies the sections named in `read` out of a DeerFlow-style file, with DeerFlow spellings turned into
 * ours: aliases renamed, accepted-but-unused keys dropped (with a warning), `null` read as "unset", and
 * `$NAME` values taken from `env` when it is given (api keys stay references).
 */
export function normalizeDeerFlowConfig(
  raw: Mapping,
  read: readonly string[],
  env: Env | undefined,
): Normalized {
  const n: Normalizer = { warnings: [], problems: [] };
  const out: Mapping = {};
  for (const name of read) {
    if (raw[name] !== undefined && raw[name] !== null) out[name] = prepareValue(raw[name], [name], env, n);
  }
  if (Array.isArray(out.models))
    out.models.forEach((model, i) => applyCompat(model, ['models', i], MODEL_COMPAT, n));
  applyCompat(out.sandbox, ['sandbox'], SANDBOX_COMPAT, n);
  applyCompat(out.loop_detection, ['loop_detection'], LOOP_DETECTION_COMPAT, n);
  applyCompat(out.summarization, ['summarization'], SUMMARIZATION_COMPAT, n);
  summarizationCompat(out.summarization, n);
  const sub = out.subagents;
  if (isMapping(sub)) {
    for (const group of ['agents', 'custom_agents']) {
      const agents = sub[group];
      if (!isMapping(agents)) continue;
      for (const agent of Object.values(agents)) toolListAsFilter(agent);
    }
  }
  return { sections: out, ...n };
}

/**
 * The top-level sections DeerFlow's own `config.example.yaml` has (commented ones included). DeerFlow adds keys to
 * them every month, so an unknown key inside one reads as a newer DeerFlow key, dropped with a warning, not as a
 * typo; the sections only this project has stay strict, because a typo there would silently change a limit.
 */
export const DEERFLOW_SECTIONS: ReadonlySet<string> = new Set([
  'models',
  'subagents',
  'token_budget',
  'tool_groups',
  'tools',
  'tool_search',
  'tool_output',
  'loop_detection',
  'read_before_write',
  'safety_finish_reason',
  'sandbox',
  'skills',
  'summarization',
  'memory',
  'guardrails',
  'mcp_tasks',
  'circuit_breaker',
  'stream_bridge',
]);

/** The mapping at `path` inside `root`, if there is one. */
function mappingAt(root: Mapping, path: readonly PropertyKey[]): Mapping | undefined {
  let at: unknown = root;
  for (const segment of path) {
    if (Array.isArray(at) && typeof segment === 'number') at = at[segment];
    else if (isMapping(at) && typeof segment === 'string') at = at[segment];
    else return undefined;
  }
  return isMapping(at) ? at : undefined;
}

/**
 * Whether the mapping at `path` is one DeerFlow writes: a DeerFlow section itself, one entry of its lists
 * (`models[0]`, `tools[2]`), or one of its named agents. Mappings this project nests inside them
 * (`models[0].retry`, `subagents.batch`) stay strict.
 */
function isDeerFlowMapping(path: readonly PropertyKey[]): boolean {
  const [section, second, third] = path;
  if (!DEERFLOW_SECTIONS.has(String(section))) return false;
  if (path.length === 1) return true;
  // DeerMem's `backend_config` takes keys DeerFlow adds as freely as the section itself.
  if (path.length === 2)
    return typeof second === 'number' || (section === 'memory' && second === 'backend_config');
  return (
    path.length === 3 &&
    section === 'subagents' &&
    (second === 'agents' || second === 'custom_agents') &&
    typeof third === 'string'
  );
}

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** A key one or two edits from an accepted one is a typo of it, whatever section it is in. */
function looksLikeTypo(key: string, accepted: readonly string[]): boolean {
  const near = key.length >= 6 ? 2 : 1;
  return accepted.some((name) => editDistance(key, name) <= near);
}

/**
 * Parses `sections`, dropping each unknown key inside a DeerFlow section (its path added to `dropped`) and parsing
 * again, until what is left is a result or problems of other kinds. A key that looks like a typo of an accepted
 * one (`max_turn` for `max_turns`) stays a problem. `sections` is changed in place.
 */
export function parseDroppingDeerFlowKeys<T>(
  schema: z.ZodType<T>,
  sections: Mapping,
  dropped: string[],
): z.ZodSafeParseResult<T> {
  for (;;) {
    const parsed = schema.safeParse(sections, { reportInput: true });
    if (parsed.success) return parsed;
    let changed = false;
    for (const issue of parsed.error.issues) {
      if (issue.code !== 'unrecognized_keys' || !isDeerFlowMapping(issue.path)) continue;
      const at = mappingAt(sections, issue.path);
      // The section's error map words an unknown-keys issue as its accepted keys (config/fields.ts).
      const accepted = issue.message.split(', ');
      for (const key of issue.keys) {
        if (at === undefined || !Object.hasOwn(at, key) || looksLikeTypo(key, accepted)) continue;
        delete at[key];
        dropped.push(formatPath([...issue.path, key]));
        changed = true;
      }
    }
    if (!changed) return parsed;
  }
}
