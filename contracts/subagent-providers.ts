/**
 * The provider registry of `dsh-tool-subagent`: the providers a delegation can run on, what each type of
 * provider can do (its capabilities, one table), and the tool loads that bind one provider to one model-facing
 * tool. `spawn` and `fork` are built in (a child `subagentWorkflow` running our agent loop); `a2a` and `acp`
 * name agents that run elsewhere (contracts/remote-subagent.ts). Pure: the workflow bundle imports it.
 */
import { BATCH_TOOL_NAMES } from './batch';
import { CLARIFICATION_TOOL_NAME } from './clarification';
import { SUBAGENT_PROVIDERS, type SubagentProvider } from './lead';
import { MCP_TOOL_SEPARATOR, TOOL_NAME_PATTERN } from './mcp';
import { DESCRIBE_SKILL_TOOL_NAME } from './run-skills';
import { TOOL_SEARCH_TOOL_NAME } from './tool-search';
import { BUILTIN_TOOL_NAMES, TASK_TOOL_NAME } from './tools';
import {
  REMOTE_PROVIDER_TYPES,
  type RemoteProbeResult,
  type RemoteProviderSettings,
  type RemoteProviderType,
} from './remote-subagent';

export const SUBAGENT_PROVIDER_TYPES = [...SUBAGENT_PROVIDERS, ...REMOTE_PROVIDER_TYPES] as const;
export type SubagentProviderType = (typeof SUBAGENT_PROVIDER_TYPES)[number];

/**
 * What a provider can do for a child, as the seed names it:
 * - `inherits_parent_context`: the child starts from the delegating conversation's completed turns (the tool's
 *   wording follows it; it concerns conversation history only, not tools or authority);
 * - `persona`: a load's persona shadows the child's system prompt (a remote agent gets it before the prompt);
 * - `tool_filter`: a load's `{allow, deny}` restricts the child's tools;
 * - `depth_limit`: a load's `max_depth` bounds the delegation tree under it.
 */
export const PROVIDER_CAPABILITY_NAMES = [
  'inherits_parent_context',
  'persona',
  'tool_filter',
  'depth_limit',
] as const;
export type ProviderCapability = (typeof PROVIDER_CAPABILITY_NAMES)[number];
export type ProviderCapabilities = Readonly<Record<ProviderCapability, boolean>>;

/** The one definition of each provider type's capabilities. */
export const PROVIDER_CAPABILITIES: Readonly<Record<SubagentProviderType, ProviderCapabilities>> = {
  spawn: { inherits_parent_context: false, persona: true, tool_filter: true, depth_limit: true },
  fork: { inherits_parent_context: true, persona: true, tool_filter: true, depth_limit: true },
  // A remote agent has its own tools and its own delegation, which we cannot see or bound.
  a2a: { inherits_parent_context: false, persona: true, tool_filter: false, depth_limit: false },
  acp: { inherits_parent_context: false, persona: true, tool_filter: false, depth_limit: false },
};

/** The capabilities a provider type has, in the table's order. */
export function capabilityList(type: SubagentProviderType): ProviderCapability[] {
  return PROVIDER_CAPABILITY_NAMES.filter((capability) => PROVIDER_CAPABILITIES[type][capability]);
}

/** What a provider lacking a capability cannot do, in a config refusal's words. */
const CANNOT: Readonly<Record<ProviderCapability, string>> = {
  inherits_parent_context: 'cannot start from the conversation',
  persona: 'cannot take a persona',
  tool_filter: 'cannot filter tools',
  depth_limit: 'cannot limit the delegation depth',
};

/** `provider local_acp (acp) cannot filter tools (its capabilities: persona)`. */
export function capabilityRefusal(
  provider: { name: string; type: SubagentProviderType },
  capability: ProviderCapability,
): string {
  const has = capabilityList(provider.type);
  return (
    `provider ${provider.name} (${provider.type}) ${CANNOT[capability]} ` +
    `(its capabilities: ${has.length === 0 ? 'none' : has.join(', ')})`
  );
}

/** A built-in provider as a load names it: `spawn` and `fork` always exist, under their own names. */
export interface LocalProviderRef {
  type: SubagentProvider;
  name: string;
}

/** The provider a load is bound to: a built-in one, or a remote agent's settings (no secret: `$NAME`s only). */
export type SubagentProviderRef = LocalProviderRef | RemoteProviderSettings;

export function isRemoteProvider(provider: SubagentProviderRef): provider is RemoteProviderSettings {
  return (REMOTE_PROVIDER_TYPES as readonly string[]).includes(provider.type);
}

export function isRemoteProviderType(type: string): type is RemoteProviderType {
  return (REMOTE_PROVIDER_TYPES as readonly string[]).includes(type);
}

export type { SubagentToolLoad } from './input-schemas';

/** The names of the tools this project offers itself: no load may take one (`task` is DeerFlow's load). */
export const RESERVED_TOOL_NAMES: readonly string[] = [
  ...BUILTIN_TOOL_NAMES,
  TASK_TOOL_NAME,
  CLARIFICATION_TOOL_NAME,
  ...BATCH_TOOL_NAMES,
  DESCRIBE_SKILL_TOOL_NAME,
  TOOL_SEARCH_TOOL_NAME,
];

/** Why `name` cannot be a load's `tool_name`, or undefined when it can. */
export function loadToolNameProblem(name: string): string | undefined {
  if (RESERVED_TOOL_NAMES.includes(name)) {
    return name === TASK_TOOL_NAME
      ? 'is the default load (task stays as it is; give this load a name of its own, e.g. subagent_acp)'
      : 'is the name of a built-in tool (give this load a name of its own, e.g. subagent_acp)';
  }
  if (!TOOL_NAME_PATTERN.test(name) || name.includes(MCP_TOOL_SEPARATOR)) {
    return 'is not a tool name (1–64 letters, digits, _ and -, no __, which MCP tools use)';
  }
  return undefined;
}

/**
 * What the lead's `probeSubagentProviders` found when the run started, by provider name (the remote providers
 * its loads use). Kept in workflow state and carried across continue-as-new: the run's tools stay as they were.
 */
export type ProviderProbe = Record<string, RemoteProbeResult>;

/** The input of `probeSubagentProviders`: the remote providers one run's loads use, each once. */
export interface ProbeProvidersInput {
  providers: RemoteProviderSettings[];
}

/** The remote providers some of `loads` use, each once, in the order the loads name them. */
export function remoteProvidersOf(
  loads: readonly { provider: SubagentProviderRef }[],
): RemoteProviderSettings[] {
  const out: RemoteProviderSettings[] = [];
  for (const { provider } of loads) {
    if (isRemoteProvider(provider) && !out.some((seen) => seen.name === provider.name)) out.push(provider);
  }
  return out;
}

/** A provider as the Web UI, the memo and the event log name it: `local_acp (acp)`. */
export function providerLabel(provider: { name: string; type: string }): string {
  return provider.name === provider.type ? provider.name : `${provider.name} (${provider.type})`;
}
