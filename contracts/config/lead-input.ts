/** A lead run's input, from the config as a user writes it: the one place config turns into a run. */
import {
  listAgents,
  resolveClarification,
  resolveLeadModel,
  resolveLeadTokenBudget,
  resolveSummarization,
} from './agents';
import { withMcp } from './agents';
import type { Config } from './index';
import type { BatchLimits, BatchToolSettings } from '../batch';
import type { LeadRunInput } from '../lead';
import { BUILTIN_TOOL_NAMES } from '../tools';
import { allMcpTools } from './mcp';

export interface LeadRunRequest {
  prompt: string;
  /** Absolute path of the run's workspace. */
  workspace: string;
  run_id?: string;
}

export function buildLeadRunInput(config: Config, request: LeadRunRequest): LeadRunInput {
  const { subagents } = config;
  const summarization = resolveSummarization(config);
  const clarification = resolveClarification(config);
  return {
    prompt: request.prompt,
    ...(request.run_id !== undefined && { run_id: request.run_id }),
    ...(config.lead.user_id !== undefined && { user_id: config.lead.user_id }),
    model: resolveLeadModel(config),
    tools: [...BUILTIN_TOOL_NAMES],
    ...withMcp(allMcpTools(config.mcp_servers), config),
    agents: subagents.enabled ? listAgents(config) : [],
    workspace: request.workspace,
    sandbox: config.sandbox,
    loop_detection: config.loop_detection,
    token_budget: resolveLeadTokenBudget(config),
    max_turns: config.lead.max_turns,
    // 0: no wall clock. The default is applied here, where the config is read: a running lead's input is its own.
    ...(config.lead.timeout_seconds > 0 && { timeout_seconds: config.lead.timeout_seconds }),
    ...(summarization && { summarization }),
    ...(clarification && { clarification }),
    limits: {
      // Defaulted and capped by subagent_runtime.max_running where the config is parsed.
      max_concurrent: subagents.max_concurrent,
      max_total_per_run: subagents.max_total_per_run,
      max_depth: subagents.max_depth,
      provider: subagents.provider,
      ...(config.lead.fairness_key !== undefined && { fairness_key: config.lead.fairness_key }),
      queue_timeout_seconds: config.subagent_runtime.queue_timeout_seconds,
    },
    ...(subagents.enabled && subagents.batch.enabled && { batch: batchToolSettings(config) }),
    depth: 0,
    asks_slot: true,
    uncancelled_timers: true,
    honest_close: true,
  };
}

/** The config's batch limits: the defaults of every batch, the ceiling of a lead's. */
export function configBatchLimits(config: Config): BatchLimits {
  const { max_running_items, max_live_items, max_attempts, retry_backoff_seconds } = config.subagents.batch;
  return { max_running_items, max_live_items, max_attempts, retry_backoff_seconds };
}

function batchToolSettings(config: Config): BatchToolSettings {
  return { limits: configBatchLimits(config), max_items: config.subagents.batch.max_items };
}
