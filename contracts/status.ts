/**
 * Statuses and stop reasons, as the seeds' cross-language contract (`subagent_status_contract.json`) spells
 * them: version 2's lists as the seeds have them, version 3's additions for durable batches, and the tree
 * budget's `cost_capped` (issue 45, additive). `test/unit/status-contract.test.ts` pins these lists to the JSON fixture.
 */

export const SUBAGENT_STATUSES = [
  'completed',
  'failed',
  'cancelled',
  'timed_out',
  'polling_timed_out',
] as const;
export type SubagentStatus = (typeof SUBAGENT_STATUSES)[number];

/** Guard stop reasons: additive beside a normal status, never a status of their own. */
export const SUBAGENT_STOP_REASONS = ['token_capped', 'turn_capped', 'loop_capped', 'cost_capped'] as const;
export type SubagentStopReason = (typeof SUBAGENT_STOP_REASONS)[number];

/** How a guard's cap reads in the text handed to the lead: `Task Succeeded (capped: token budget). …`. */
export const STOP_REASON_LABELS: Record<SubagentStopReason, string> = {
  token_capped: 'token budget',
  turn_capped: 'turn budget',
  loop_capped: 'repeated tool-call loop',
  cost_capped: 'cost budget',
};

/** The delegation limits' stop: an agent that asked for delegations after its run's total was spent. */
export const DELEGATION_LIMIT_STOP_REASON = 'subagent_limit_capped';

/** The lead run can also stop for reasons no subagent has. */
export const RUN_STOP_REASONS = [
  ...SUBAGENT_STOP_REASONS,
  DELEGATION_LIMIT_STOP_REASON,
  'model_length_capped',
] as const;
export type RunStopReason = (typeof RUN_STOP_REASONS)[number];

/** `queued`: waiting for an execution slot (admission); `in_progress`: the child runs. */
export const LEDGER_STATUSES = ['queued', 'in_progress', ...SUBAGENT_STATUSES] as const;
export type LedgerStatus = (typeof LEDGER_STATUSES)[number];

/** Keys under which status metadata travels beside a tool message (DeerFlow's additional_kwargs). */
export const METADATA_KEYS = {
  status: 'subagent_status',
  stop_reason: 'subagent_stop_reason',
  error_fallback: 'deerflow_error_fallback',
  model_name: 'subagent_model_name',
  token_usage: 'subagent_token_usage',
  result_brief: 'subagent_result_brief',
  result_sha256: 'subagent_result_sha256',
  error: 'subagent_error',
  admission_failure: 'subagent_admission_failure',
} as const;

/** A batch as a whole (`batch_status`'s `status`, a batch's result). */
export const BATCH_STATUSES = ['running', 'completed', 'cancelled'] as const;
/** Where one batch item stands; `waiting`: its slot asked for (queued at admission, or granted, not started). */
export const BATCH_ITEM_STATES = [
  'pending',
  'waiting',
  'running',
  'completed',
  'failed',
  'cancelled',
] as const;
/** A batch's ledger entry (`kind: batch`): running, then how it ended (`failed`: the batch workflow itself). */
export const BATCH_LEDGER_STATUSES = ['in_progress', 'completed', 'cancelled', 'failed'] as const;

export const STATUS_CONTRACT_VERSION = 3;
