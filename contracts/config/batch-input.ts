/** A batch's input, from the config as a user writes it: beside the lead's (lead-input.ts), the same one place. */
import { resolveAgent, resolveSummarization } from './agents';
import type { Config } from './index';
import type { BatchInput, BatchItem, BatchLimits } from '../batch';
import { resolveTreeBudget } from './budget';
import { configBatchLimits, runSkillsSettings, withGuardrails } from './lead-input';

export interface BatchRequest {
  description: string;
  /** An agent the config knows (`general-purpose`, `bash`, or one of its own). */
  subagent_type: string;
  items: BatchItem[];
  workspace: string;
  limits?: Partial<BatchLimits>;
  /** The lead run it belongs to (default: the batch's own id, set by the workflow). */
  run_id?: string;
  fairness_key?: string;
  /** The skills folder on this machine when it exists (as a lead run's request says it); absent: no skills. */
  skills_root?: string;
}

/** The batch's workflow input, its agent and settings resolved from the config as a `task` child's are. */
export function buildBatchInput(config: Config, request: BatchRequest): BatchInput {
  const agent = resolveAgent(config, request.subagent_type);
  const summarization = resolveSummarization(config);
  // One budget for the whole batch (its items share it), as a lead run's covers its tree.
  const treeBudget = resolveTreeBudget(config.token_budget);
  return {
    ...(request.run_id !== undefined && { run_id: request.run_id }),
    description: request.description,
    subagent_type: agent.name,
    agent,
    items: request.items,
    limits: { ...configBatchLimits(config), ...request.limits },
    scope: {
      workspace: request.workspace,
      sandbox: config.sandbox,
      loop_detection: config.loop_detection,
      ...(summarization && { summarization }),
      ...(request.fairness_key !== undefined && { fairness_key: request.fairness_key }),
      ...(config.lead.user_id !== undefined && { user_id: config.lead.user_id }),
      ...(request.skills_root !== undefined && { skills: runSkillsSettings(config, request.skills_root) }),
      ...withGuardrails(config),
      ...(treeBudget && { tree_budget: treeBudget }),
    },
    depth: 1,
    honest_close: true,
  };
}
