/** A lead run's input, from the config as a user writes it: the one place config turns into a run. */
import {
  agentSkillNames,
  leadSkillNames,
  listAgentNames,
  listAgents,
  resolveClarification,
  resolveLeadModel,
  resolveLeadTokenBudget,
  resolveSummarization,
} from './agents';
import { agentTools, withMcp } from './agents';
import type { Config } from './index';
import type { BatchLimits, BatchToolSettings } from '../batch';
import type { LeadRunInput } from '../lead';
import type { RunSkillsSettings } from '../run-skills';
import { allMcpTools } from './mcp';
import { agentPolicy } from './guardrails';
import { resolveToolLoads } from './tool-loads';
import { resolveTreeBudget } from './budget';
import { resolveMemory } from './memory';
import { resolveDailyBudget } from './budgets';
import { resolveReadBeforeWrite, resolveToolOutput } from './tool-output';
import type { GuardrailPolicy, RunGuardrailsSettings } from '../guardrail-rules';

export interface LeadRunRequest {
  prompt: string;
  /** Absolute path of the run's workspace. */
  workspace: string;
  run_id?: string;
  /**
   * The skills folder on this machine (absolute), when it exists: contracts read no disk, so the caller looks
   * (worker/config.ts `existingSkillsRoot`). Absent: the run has no skills, and takes no snapshot.
   */
  skills_root?: string;
}

export function buildLeadRunInput(config: Config, request: LeadRunRequest): LeadRunInput {
  const { subagents } = config;
  const summarization = resolveSummarization(config);
  const clarification = resolveClarification(config);
  const agents = subagents.enabled ? listAgents(config) : [];
  const loads = resolveToolLoads(config);
  const skills =
    request.skills_root === undefined ? undefined : runSkillsSettings(config, request.skills_root);
  // The run's tree budget (`token_budget:` at the top, when enabled): the lead keeps it for the whole tree.
  const treeBudget = resolveTreeBudget(config.token_budget);
  const memory = resolveMemory(config.memory);
  // The user's daily budget (`budgets.per_user`): the lead asks the user's ledger before its first model call.
  const dailyBudget = resolveDailyBudget(config.budgets);
  return {
    prompt: request.prompt,
    ...(request.run_id !== undefined && { run_id: request.run_id }),
    scope: {
      ...(config.lead.user_id !== undefined && { user_id: config.lead.user_id }),
      ...(skills && { skills }),
      ...withGuardrails(config),
      workspace: request.workspace,
      sandbox: config.sandbox,
      loop_detection: config.loop_detection,
      ...(summarization && { summarization }),
      ...(clarification && { clarification }),
      ...(config.lead.fairness_key !== undefined && { fairness_key: config.lead.fairness_key }),
      ...(treeBudget && { tree_budget: treeBudget }),
      ...(memory && { memory }),
      ...(dailyBudget && { daily_budget: dailyBudget }),
      ...withToolOutput(config),
    },
    model: resolveLeadModel(config),
    tools: [...agentTools(config)],
    ...withMcp(allMcpTools(config.mcp_servers), config),
    agents,
    token_budget: resolveLeadTokenBudget(config),
    max_turns: config.lead.max_turns,
    // 0: no wall clock. The default is applied here, where the config is read: a running lead's input is its own.
    ...(config.lead.timeout_seconds > 0 && { timeout_seconds: config.lead.timeout_seconds }),
    limits: {
      // Defaulted and capped by subagent_runtime.max_running where the config is parsed.
      max_concurrent: subagents.max_concurrent,
      max_total_per_run: subagents.max_total_per_run,
      max_depth: subagents.max_depth,
      provider: subagents.provider,
      queue_timeout_seconds: config.subagent_runtime.queue_timeout_seconds,
    },
    ...(loads.length > 0 && { subagent_tools: loads }),
    ...(subagents.enabled && subagents.batch.enabled && { batch: batchToolSettings(config) }),
    depth: 0,
    asks_slot: true,
    uncancelled_timers: true,
    honest_close: true,
  };
}

/** The run's `tool_output` and `read_before_write` settings, when the config turns them on. */
function withToolOutput(config: Config): Pick<LeadRunInput['scope'], 'tool_output' | 'read_before_write'> {
  const toolOutput = resolveToolOutput(config.tool_output);
  return {
    ...(toolOutput && { tool_output: toolOutput }),
    ...(resolveReadBeforeWrite(config.read_before_write) && { read_before_write: true as const }),
  };
}

/**
 * The skills settings of a run whose skills folder is `root`: the config's `skills:` keys, and the `skills:` list
 * of the lead and of each agent that has one (an agent without one gets every enabled skill).
 */
export function runSkillsSettings(config: Config, root: string): RunSkillsSettings {
  const lead = leadSkillNames(config);
  const skillReads = config.summarization.skill_file_read_tool_names;
  const lists: Record<string, string[]> = {};
  for (const name of listAgentNames(config)) {
    const list = agentSkillNames(config, name);
    if (list !== undefined) lists[name] = [...list];
  }
  return {
    root,
    container_path: config.skills.container_path,
    deferred_discovery: config.skills.deferred_discovery,
    ...(skillReads !== undefined && { skill_file_read_tool_names: [...skillReads] }),
    ...(config.extensions_config !== undefined && { extensions_config: config.extensions_config }),
    ...(lead !== undefined && { lead: [...lead] }),
    ...(Object.keys(lists).length > 0 && { agents: lists }),
  };
}

/**
 * The run's guardrails: the top-level policy (the lead's, and every agent's without its own) and each agent's
 * override (`subagents.agents.<name>.guardrails` wins over `custom_agents.<name>.guardrails`). Nothing when no
 * policy is in force, so a run without guardrails carries no field and its workflows evaluate nothing.
 */
export function runGuardrailsSettings(config: Config): RunGuardrailsSettings | undefined {
  const run = config.guardrails;
  const agents: Record<string, GuardrailPolicy> = {};
  const { agents: overrides, custom_agents: customAgents } = config.subagents;
  for (const name of listAgentNames(config)) {
    const own =
      (Object.hasOwn(overrides, name) ? overrides[name].guardrails : undefined) ??
      (Object.hasOwn(customAgents, name) ? customAgents[name].guardrails : undefined);
    if (own !== undefined) agents[name] = agentPolicy(run, own);
  }
  const anyInForce = Object.values(agents).some((policy) => policy.provider !== 'none');
  if (run.policy === undefined && !anyInForce) return undefined;
  return {
    approval_timeout_seconds: run.approval_timeout_seconds,
    ...(run.policy && { run: run.policy }),
    ...(Object.keys(agents).length > 0 && { agents }),
  };
}

/** `{ guardrails }` for a workflow input when the config puts a policy in force; else nothing. */
export function withGuardrails(config: Config): { guardrails?: RunGuardrailsSettings } {
  const guardrails = runGuardrailsSettings(config);
  return guardrails ? { guardrails } : {};
}

/** The config's batch limits: the defaults of every batch, the ceiling of a lead's. */
export function configBatchLimits(config: Config): BatchLimits {
  const { max_running_items, max_live_items, max_attempts, retry_backoff_seconds } = config.subagents.batch;
  return { max_running_items, max_live_items, max_attempts, retry_backoff_seconds };
}

function batchToolSettings(config: Config): BatchToolSettings {
  return { limits: configBatchLimits(config), max_items: config.subagents.batch.max_items };
}
