/**
 * Agents and models as a run uses them: the built-in subagents, custom agents from config, and every
 * override applied in one place, so the lead workflow and the CLI can never disagree about a limit.
 */
import {
  BUILTIN_AGENT_NAMES,
  ConfigError,
  INHERIT_MODEL,
  type AgentOverride,
  type BuiltinAgentName,
  type Config,
  type CustomAgentConfig,
  type TokenBudgetOverride,
} from './index';
import { DEFAULT_NODES_PER_TURN, DEFAULT_ONE_TIME_NODES, parseGraphReference } from '../graph';
import type { ModelSettings } from '../model';
import { ownEntry } from '../records';
import { roleNotFor } from '../routing-policy';
import type { ResolvedAgent, TokenBudgetSettings } from '../subagent';
import type { SummarizationRuntime } from '../summarization';
import { CLARIFICATION_TOOL_NAME } from '../clarification';
import type { ClarificationSettings } from '../input-schemas';
import { BUILTIN_TOOL_NAMES, isBuiltinToolName, TASK_TOOL_NAME, TOOL_ACTIVITY_NAMES } from '../tools';
import { configuredToolNames, toolsInGroups } from './tools';
import type { McpToolFilter } from '../mcp';
import { hasMcpRouting, resolveMcpFilter } from './mcp';

interface BuiltinAgentDefinition {
  description: string;
  system_prompt: string;
  /** The agent's tools when config names none (absent: every configured tool); `task` is never among them. */
  tools?: readonly string[];
  max_turns: number;
}

const FINAL_ANSWER_RULE =
  'When you are done, reply with a concise final answer that stands on its own: the lead agent sees only ' +
  'that message, not your tool calls or notes. Say what you did, what you found (the key facts inline) and ' +
  'where any results are (file paths in the workspace). If part of the task could not be done, say which ' +
  'part and why.';

const BUILTIN_AGENTS: Readonly<Record<BuiltinAgentName, BuiltinAgentDefinition>> = {
  'general-purpose': {
    description:
      'A capable agent for multi-step work that needs both exploration and action: reading and searching ' +
      'files, editing them, running commands. Use it for a self-contained task whose working context ' +
      'would crowd your own. ' +
      roleNotFor('a quick lookup or a small edit you can do directly'),
    system_prompt: [
      'You are a general-purpose subagent. The lead agent has delegated one self-contained task to you; ' +
        'complete it on your own, without asking questions back.',
      'Work inside the workspace: it is your only project folder, and paths outside it are refused. Read ' +
        'before you edit, do the work rather than describe it, and check your result (re-read the file, run ' +
        'the test) before you finish.',
      FINAL_ANSWER_RULE,
    ].join('\n\n'),
    max_turns: 150,
  },
  bash: {
    description:
      'A command-line specialist: runs shell commands in the workspace (builds, tests, git, scripts, data ' +
      'wrangling) and reports what happened. Use it for a run of commands whose output would crowd your ' +
      'context. ' +
      roleNotFor('a single short command you can run yourself'),
    system_prompt: [
      'You are a command-line subagent. The lead agent has delegated one task to you that is done by ' +
        'running commands; complete it on your own, without asking questions back.',
      'Commands run in the workspace with a time limit and an output cap, and without network access. Keep ' +
        'them non-interactive, keep their output short (filter it, write long output to a file), and read ' +
        'exit codes rather than guessing.',
      FINAL_ANSWER_RULE +
        ' For commands, report the ones that mattered, their exit status and the output lines that decide ' +
        'the answer.',
    ].join('\n\n'),
    tools: ['bash', 'ls', 'read_file', 'write_file', 'str_replace'],
    max_turns: 60,
  },
};

/** DeerFlow's coupling: with compaction on, a subagent needs far fewer tokens for the same work. */
const DEFAULT_TOKEN_BUDGET = 2_000_000;
const DEFAULT_TOKEN_BUDGET_WITH_SUMMARIZATION = 1_000_000;
const TOKEN_BUDGET_HARD_THRESHOLD = 1.0;

/** A `subagent_type` that names no agent: the lead turns it into an error result for the model. */
export class UnknownAgentError extends Error {
  readonly available: string[];

  constructor(name: string, available: string[]) {
    super(`subagent_type ${JSON.stringify(name)} is not an available agent (${available.join(', ')})`);
    this.name = 'UnknownAgentError';
    this.available = available;
  }
}

/** Built-ins first, then custom agents in the order the config lists them. */
export function listAgentNames(config: Config): string[] {
  return [...BUILTIN_AGENT_NAMES, ...Object.keys(config.subagents.custom_agents)];
}

export function listAgents(config: Config): ResolvedAgent[] {
  return listAgentNames(config).map((name) => resolveAgent(config, name));
}

/** An agent with every default and override applied: per-agent beats global beats built-in. */
export function resolveAgent(config: Config, name: string): ResolvedAgent {
  const settings = config.subagents;
  const override: AgentOverride = ownEntry(settings.agents, name) ?? {};
  if (isBuiltin(name)) {
    const builtin = BUILTIN_AGENTS[name];
    return {
      name,
      description: builtin.description,
      system_prompt: builtin.system_prompt,
      tools: inToolGroups(
        config,
        filterTools(override.tools?.allow ?? builtin.tools ?? agentTools(config), override.tools?.deny ?? []),
        override.tool_groups,
      ),
      // The global turn and time limits are for built-ins only; custom agents carry their own.
      max_turns: override.max_turns ?? settings.max_turns ?? builtin.max_turns,
      timeout_seconds: override.timeout_seconds ?? settings.timeout_seconds,
      token_budget: resolveTokenBudget(config, undefined, override.token_budget),
      model: resolveAgentModel(config, override.model, settings.model),
      // `bash` stays a command-line specialist: MCP tools only when its allow list names them.
      ...withMcp(
        resolveMcpFilter(config.mcp_servers, override.tools?.allow, override.tools?.deny, name !== 'bash'),
        config,
      ),
    };
  }
  const custom: CustomAgentConfig | undefined = ownEntry(settings.custom_agents, name);
  if (custom === undefined) throw new UnknownAgentError(name, listAgentNames(config));
  if (custom.graph !== undefined) return resolveGraphAgent(config, name, custom, custom.graph, override);
  return {
    name,
    description: custom.description,
    // Checked when the config was parsed: only a graph agent may leave it out.
    system_prompt: custom.system_prompt ?? '',
    tools: inToolGroups(
      config,
      filterTools(
        override.tools?.allow ?? custom.tools?.allow ?? agentTools(config),
        override.tools?.deny ?? custom.tools?.deny ?? [],
      ),
      override.tool_groups ?? custom.tool_groups,
    ),
    max_turns: override.max_turns ?? custom.max_turns,
    timeout_seconds: override.timeout_seconds ?? custom.timeout_seconds,
    token_budget: resolveTokenBudget(config, custom.token_budget, override.token_budget),
    model: resolveAgentModel(config, override.model, custom.model, settings.model),
    ...withMcp(
      resolveMcpFilter(
        config.mcp_servers,
        override.tools?.allow ?? custom.tools?.allow,
        override.tools?.deny ?? custom.tools?.deny,
        true,
      ),
      config,
    ),
  };
}

/** A graph agent: no tools of ours (its graph binds its own), its graph and its turn mapping. */
function resolveGraphAgent(
  config: Config,
  name: string,
  custom: CustomAgentConfig,
  graph: string,
  override: AgentOverride,
): ResolvedAgent {
  const reference = parseGraphReference(graph);
  if (reference === undefined) {
    throw new ConfigError([
      `subagents.custom_agents.${name}.graph: ${JSON.stringify(graph)} is not <module>#<export>`,
    ]);
  }
  return {
    name,
    description: custom.description,
    system_prompt: custom.system_prompt ?? custom.description,
    tools: [],
    max_turns: override.max_turns ?? custom.max_turns,
    timeout_seconds: override.timeout_seconds ?? custom.timeout_seconds,
    token_budget: resolveTokenBudget(config, custom.token_budget, override.token_budget),
    model: resolveAgentModel(config, override.model, custom.model, config.subagents.model),
    graph: {
      ...reference,
      nodes_per_turn: custom.nodes_per_turn ?? DEFAULT_NODES_PER_TURN,
      one_time_nodes: custom.one_time_nodes ?? DEFAULT_ONE_TIME_NODES,
    },
  };
}

/**
 * The skills an agent's config names: `subagents.agents.<name>.skills` over a custom agent's own `skills`
 * (DeerFlow's order). Undefined: every enabled skill; `[]`: none. What those names find is the catalog's
 * business (contracts/skills.ts resolveSkills).
 */
export function agentSkillNames(config: Config, name: string): readonly string[] | undefined {
  const override = ownEntry(config.subagents.agents, name)?.skills;
  if (override !== undefined) return override;
  if (isBuiltin(name)) return undefined;
  const custom = ownEntry(config.subagents.custom_agents, name);
  if (custom === undefined) throw new UnknownAgentError(name, listAgentNames(config));
  return custom.skills;
}

/** The skills the lead's config names (`lead.skills`): undefined, every enabled skill; `[]`, none. */
export function leadSkillNames(config: Config): readonly string[] | undefined {
  return config.lead.skills;
}

/** The lead's budget: `lead.token_budget` over `subagents.token_budget`, the default following summarization. */
export function resolveLeadTokenBudget(config: Config): TokenBudgetSettings {
  return resolveTokenBudget(config, undefined, config.lead.token_budget);
}

/** Compaction as a run uses it: absent when `summarization.enabled` is false. */
export function resolveSummarization(config: Config): SummarizationRuntime | undefined {
  const settings = config.summarization;
  if (!settings.enabled) return undefined;
  return {
    trigger_tokens: settings.trigger_tokens,
    keep_messages: settings.keep_messages,
    ...(settings.summary_prompt !== undefined && { summary_prompt: settings.summary_prompt }),
    ...(settings.model !== undefined && { model: resolveModel(config, settings.model) }),
  };
}

/** `ask_clarification` as a run uses it: absent when `clarification.enabled` is false. */
export function resolveClarification(config: Config): ClarificationSettings | undefined {
  const settings = config.clarification;
  return settings.enabled ? { timeout_seconds: settings.timeout_seconds } : undefined;
}

/** The lead uses the first model listed, as DeerFlow does. */
export function resolveLeadModel(config: Config): ModelSettings {
  return config.models[0];
}

export function resolveModel(config: Config, name: string): ModelSettings {
  if (name === INHERIT_MODEL) return resolveLeadModel(config);
  const model = config.models.find((candidate) => candidate.name === name);
  if (model === undefined) {
    const names = config.models.map((candidate) => candidate.name);
    throw new ConfigError([`model: ${JSON.stringify(name)} is not a configured model (${names.join(', ')})`]);
  }
  return model;
}

/** `{ mcp }` when the agent gets MCP tools, else nothing: an agent without them keeps its old shape. */
export function withMcp(filter: McpToolFilter | undefined, config: Config): { mcp?: McpToolFilter } {
  if (filter === undefined) return {};
  // tool_search: after the filter, what is left goes to the model by name until promoted.
  if (!config.tool_search.enabled) return { mcp: filter };
  // Routing metadata promotes up to `auto_promote_top_k` schemas before a call, when some server declares it.
  const routed = Object.values(config.mcp_servers).some(hasMcpRouting);
  return {
    mcp: {
      ...filter,
      deferred: true,
      ...(routed && { auto_promote_top_k: config.tool_search.auto_promote_top_k }),
    },
  };
}

function isBuiltin(name: string): name is BuiltinAgentName {
  return (BUILTIN_AGENT_NAMES as readonly string[]).includes(name);
}

/**
 * The tools an agent gets when nothing names its own: every tool of the `tools:` section (DeerFlow: every tool
 * but `task`), or the sandbox's five when the config has no such section.
 */
export function agentTools(config: Config): readonly string[] {
  return configuredToolNames(config.tools) ?? BUILTIN_TOOL_NAMES;
}

/** DeerFlow's `tool_groups` on an agent: of the configured tools, only those of these groups (others untouched). */
function inToolGroups(config: Config, tools: string[], groups: readonly string[] | undefined): string[] {
  if (groups === undefined) return tools;
  const inGroups = toolsInGroups(config.tools ?? [], groups);
  return tools.filter((tool) => !isBuiltinToolName(tool) || inGroups.includes(tool));
}

/** In the fixed order of the tool list, so the model sees the same tools in the same order every run. */
export function filterTools(allow: readonly string[], deny: readonly string[]): string[] {
  return [...TOOL_ACTIVITY_NAMES, TASK_TOOL_NAME, CLARIFICATION_TOOL_NAME].filter(
    (tool) => allow.includes(tool) && !deny.includes(tool),
  );
}

function resolveAgentModel(config: Config, ...chain: (string | undefined)[]): ModelSettings {
  const name = chain.find((candidate) => candidate !== undefined);
  return name === undefined ? resolveLeadModel(config) : resolveModel(config, name);
}

/** A value the user wrote (global, custom agent, then per-agent override) always beats the coupled default. */
function resolveTokenBudget(
  config: Config,
  custom: TokenBudgetOverride | undefined,
  override: TokenBudgetOverride | undefined,
): TokenBudgetSettings {
  const global = config.subagents.token_budget;
  const coupledDefault = config.summarization.enabled
    ? DEFAULT_TOKEN_BUDGET_WITH_SUMMARIZATION
    : DEFAULT_TOKEN_BUDGET;
  return {
    enabled: override?.enabled ?? custom?.enabled ?? global.enabled,
    max_tokens: override?.max_tokens ?? custom?.max_tokens ?? global.max_tokens ?? coupledDefault,
    warn_threshold: override?.warn_threshold ?? custom?.warn_threshold ?? global.warn_threshold,
    hard_threshold: TOKEN_BUDGET_HARD_THRESHOLD,
  };
}
