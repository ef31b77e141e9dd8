/**
 * The delegation ledger: one entry per `task` call the lead ran as a child workflow. It lives in the lead's
 * workflow state (rebuilt from history on replay, carried across continue-as-new), is read through the
 * `lead_ledger` query and is rendered into the lead's context so it does not delegate finished work again.
 * The functions that build and read it are in `workflows/lead/ledger.ts`; only the wire shape lives here.
 */
import type { TokenUsage } from './messages';
import type { LedgerStatus, SubagentStopReason } from './status';

/** Characters of the task's description kept in an entry; the model is asked for 3–5 words anyway. */
export const LEDGER_DESCRIPTION_MAX_CHARS = 200;

/** A batch's items by outcome, as the batch last reported them. */
export interface LedgerBatchCounts {
  total: number;
  completed?: number;
  failed?: number;
  cancelled?: number;
}

export interface LedgerEntry {
  /** The tool_call_id of the `task` (or `batch_task`) call. */
  id: string;
  /**
   * `batch`: a `batch_task` call's batch (a `batchWorkflow`; `subagent_type` is its items' agent, `status` the
   * batch's: `in_progress` until it ends, then `completed`, `cancelled` or `failed`). Absent: a `task` call.
   * Batches do not count toward `max_total_per_run`.
   */
  kind?: 'batch';
  /** A batch's item counts. */
  batch?: LedgerBatchCounts;
  /** The lead run that delegated it: only the current run's entries count toward `max_total_per_run`. */
  run_id: string;
  description: string;
  subagent_type: string;
  /** `queued` while waiting for a slot, `in_progress` until the child returns; a terminal status stays. */
  status: LedgerStatus;
  /** Refused at admission (capacity full, queue timeout): the subagent made no model call. */
  admission_failure?: true;
  /** ≤ 2,000 chars, head and tail kept. */
  result_brief?: string;
  result_sha256?: string;
  stop_reason?: SubagentStopReason;
  error?: string;
  model_name?: string;
  /** Absent when the provider reported no usage: absent usage stays absent rather than estimated as zero. */
  token_usage?: TokenUsage;
  /**
   * What its tokens cost in USD, priced by `models[].pricing` of the model(s) it used (the child's own calls,
   * as `token_usage` counts them); absent when none of its calls was priced: no pricing, no cost (not 0).
   */
  cost_usd?: number;
  /** ISO 8601, from the workflow clock. */
  created_at: string;
  /** When its child started, after waiting for a slot from `created_at` (absent: not started, or no admission). */
  started_at?: string;
  updated_at: string;
  /** The child workflow's id. */
  workflow_id: string;
  /** Taken over by a fork from the run it forked (`run_id`): its result reused, not run or billed again. */
  reused?: true;
}
