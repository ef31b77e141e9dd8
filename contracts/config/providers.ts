/**
 * `subagent_providers:` and `subagent_tools:` in the config file (issue 32, the `dsh-tool-subagent` registry):
 * named remote providers beside the built-in `spawn` and `fork`, and the tool loads that bind one provider each
 * to one model-facing tool. A load asking its provider for a capability it lacks, two loads with one tool name,
 * a name `task` or another built-in tool has, an unknown provider: each is refused where the file is read,
 * before anything starts. `$NAME` values in headers and env stay references: the worker that calls reads them.
 * Pure: no Node APIs.
 */
import { z } from 'zod';
import { SUBAGENT_PROVIDERS } from '../lead';
import type { ProblemPath } from '../problems';
import { TASK_TOOL_NAME } from '../tools';
import {
  capabilityRefusal,
  loadToolNameProblem,
  PROVIDER_CAPABILITIES,
  type ProviderCapability,
  type SubagentProviderType,
} from '../subagent-providers';
import { REMOTE_PROVIDER_TYPES, type RemoteProviderType } from '../remote-subagent';
import { httpUrl, listOf, mappingOf, section, text, toolName, wholeNumber } from './fields';
import { isMapping } from './deerflow';
import { typeError, type RawIssue } from './value-types';

const anyText = z.string({ error: 'is not text' });

/** A provider's name: what a load's `provider` says, the memo and the Web UI show. */
const PROVIDER_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

const CWD_REFUSAL =
  "is not a setting: an ACP agent always runs in the run's workspace (its cwd), where the run's files are";

const providerType = z.enum(REMOTE_PROVIDER_TYPES, {
  error: (issue: RawIssue) =>
    issue.input === undefined
      ? `is missing (${REMOTE_PROVIDER_TYPES.join(', ')})`
      : `is not a provider type here (${REMOTE_PROVIDER_TYPES.join(', ')}; spawn and fork are built in)`,
});

const providerEntry = section('subagent_providers.<name>', {
  type: providerType,
  url: httpUrl.optional(),
  headers: mappingOf(anyText, 'HTTP headers').optional(),
  command: text.optional(),
  args: listOf(anyText, 'arguments').optional(),
  env: mappingOf(anyText, 'environment variables').optional(),
}).transform((entry, ctx) => {
  const issue = (key: string, message: string) =>
    ctx.issues.push({ code: 'custom', path: [key], input: undefined, message });
  if (entry.type === 'a2a') {
    if (entry.url === undefined) issue('url', "is missing (an a2a provider's agent card or endpoint)");
    for (const key of ['command', 'args', 'env'] as const) {
      if (entry[key] !== undefined) issue(key, 'is for acp providers (an a2a provider is reached at url)');
    }
    if (entry.url === undefined) return z.NEVER;
    return { type: entry.type, url: entry.url, ...(entry.headers && { headers: entry.headers }) };
  }
  if (entry.command === undefined) issue('command', 'is missing (the command that starts the ACP agent)');
  for (const key of ['url', 'headers'] as const) {
    if (entry[key] !== undefined) issue(key, 'is for a2a providers (an acp provider is started by command)');
  }
  if (entry.command === undefined) return z.NEVER;
  return { type: entry.type, command: entry.command, args: entry.args ?? [], env: entry.env ?? {} };
});

/** Where an ACP agent runs is not the config's to say: a `cwd` key is refused with the reason. */
const providerEntryWithoutCwd = z.preprocess((value, ctx) => {
  if (!isMapping(value) || !Object.hasOwn(value, 'cwd')) return value;
  ctx.issues.push({ code: 'custom', path: ['cwd'], input: undefined, message: CWD_REFUSAL });
  const { cwd: _cwd, ...rest } = value;
  return rest;
}, providerEntry);

/** `subagent_providers:`: name → an a2a or acp provider. */
export const subagentProvidersSection = z.record(z.string().regex(PROVIDER_NAME), providerEntryWithoutCwd, {
  error: (issue: RawIssue) =>
    issue.code === 'invalid_key'
      ? 'is not a usable provider name (letters, digits, _ and -, up to 64)'
      : typeError('a mapping of subagent providers')(issue),
});

const toolLoad = section('subagent_tools[]', {
  tool_name: text,
  provider: text,
  description: text.optional(),
  agent_options: section('subagent_tools[].agent_options', { model: text.optional() }).optional(),
  persona: text.optional(),
  tool_filter: section('subagent_tools[].tool_filter', {
    allow: listOf(toolName, 'tool names').optional(),
    deny: listOf(toolName, 'tool names').optional(),
  }).optional(),
  max_depth: wholeNumber(0).optional(),
});

/** `subagent_tools:`: the loads besides DeerFlow's `task` (which stays, bound to `subagents.provider`). */
export const subagentToolsSection = listOf(toolLoad, 'subagent tool loads');

export type SubagentProvidersConfig = z.output<typeof subagentProvidersSection>;
export type SubagentToolConfig = z.output<typeof toolLoad>;

/** A named provider's type: a built-in's own name, a configured one's `type`; undefined when none has it. */
export function providerTypeOf(
  providers: SubagentProvidersConfig,
  name: string,
): SubagentProviderType | undefined {
  if ((SUBAGENT_PROVIDERS as readonly string[]).includes(name)) return name as SubagentProviderType;
  return Object.hasOwn(providers, name) ? (providers[name].type as RemoteProviderType) : undefined;
}

type LoadProblem = [path: ProblemPath, input: unknown, message: string];

/** What a load asks of its provider, by the key that asks it. */
const ASKED: readonly [key: 'persona' | 'tool_filter' | 'max_depth', capability: ProviderCapability][] = [
  ['persona', 'persona'],
  ['tool_filter', 'tool_filter'],
  ['max_depth', 'depth_limit'],
];

/**
 * The registry's checks that span entries: built-in names kept, tool names unique and free, providers that
 * exist and can do what their loads ask. `checkModel` checks a local load's model against `models:`.
 */
export function toolLoadProblems(
  providers: SubagentProvidersConfig,
  loads: readonly SubagentToolConfig[],
  checkModel: (path: ProblemPath, name: string | undefined) => void,
): LoadProblem[] {
  const out: LoadProblem[] = [];
  for (const name of Object.keys(providers)) {
    if ((SUBAGENT_PROVIDERS as readonly string[]).includes(name)) {
      out.push([
        ['subagent_providers', name],
        undefined,
        'is a built-in provider (spawn and fork always exist)',
      ]);
    }
  }
  const known = [...SUBAGENT_PROVIDERS, ...Object.keys(providers)];
  loads.forEach((load, index) => {
    const at = (...keys: string[]): ProblemPath => ['subagent_tools', index, ...keys];
    const nameProblem = loadToolNameProblem(load.tool_name);
    const first = loads.findIndex((other) => other.tool_name === load.tool_name);
    if (nameProblem !== undefined) out.push([at('tool_name'), load.tool_name, nameProblem]);
    else if (first !== index) {
      out.push([
        at('tool_name'),
        load.tool_name,
        `is listed twice (subagent_tools[${first}] has it; each load needs a tool name of its own)`,
      ]);
    }
    const type = providerTypeOf(providers, load.provider);
    if (type === undefined) {
      out.push([at('provider'), load.provider, `is not a provider (${known.join(', ')})`]);
      return;
    }
    for (const [key, capability] of ASKED) {
      if (load[key] !== undefined && !PROVIDER_CAPABILITIES[type][capability]) {
        out.push([at(key), undefined, capabilityRefusal({ name: load.provider, type }, capability)]);
      }
    }
    const local = (SUBAGENT_PROVIDERS as readonly string[]).includes(type);
    // A remote agent's model is its own business: the name is passed on as written.
    if (local) checkModel(at('agent_options', 'model'), load.agent_options?.model);
    if (local && load.tool_filter?.allow?.includes(TASK_TOOL_NAME)) {
      out.push([
        at('tool_filter', 'allow'),
        undefined,
        `lists ${TASK_TOOL_NAME}, but a child a load starts does not delegate in turn`,
      ]);
    }
  });
  return out;
}
