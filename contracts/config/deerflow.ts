/**
 * DeerFlow's spellings of the sections this project reads, so a DeerFlow `config.yaml` works as written.
 */
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
    'pricing',
  ],
};
const SANDBOX_COMPAT: Compat = {
  aliases: { bash_command_timeout: 'bash_timeout_seconds', bash_output_max_chars: 'output_cap_chars' },
  ignored: ['mounts', 'read_file_output_max_chars', 'ls_output_max_chars'],
};
const LOOP_DETECTION_COMPAT: Compat = { ignored: ['max_tracked_threads'] };
const SUMMARIZATION_COMPAT: Compat = {
  aliases: { model_name: 'model' },
  ignored: ['trim_tokens_to_summarize', 'skill_file_read_tool_names'],
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
