import { CLOSING_FAILURE_TYPES, resultInFailure } from './closing';
import type { ForkOrigin } from './lead';
import type { TokenUsage } from './messages';
import type { SubagentStatus, SubagentStopReason } from './status';

/** Above `timeout_seconds`, the workflow execution timeout a starter sets as a hard backstop. */
export const SUBAGENT_TIMEOUT_GRACE_SECONDS = 60;

/** The longest `result_brief` (and the briefs of errors in events and the ledger): head and tail kept. */
export const RESULT_BRIEF_MAX_CHARS = 2000;

export type {
  LoopDetectionSettings,
  ResolvedAgent,
  SubagentInput,
  TokenBudgetSettings,
  ToolFrequencyOverride,
} from './input-schemas';

export interface SubagentResult {
  status: SubagentStatus;
  stop_reason?: SubagentStopReason;
  /** The final (or partial) answer, when there is one. */
  result?: string;
  error?: string;
  /** ≤ 2,000 chars, head and tail kept. */
  result_brief?: string;
  result_sha256?: string;
  model_name?: string;
  /** Absent when the provider reported no usage. */
  token_usage?: TokenUsage;
  /** USD of its model calls, priced by `models[].pricing`; absent when none was priced. */
  cost_usd?: number;
  turns: number;
  /** The failure came from a model provider error (the seeds' `deerflow_error_fallback`). */
  error_fallback?: boolean;
  /**
   * The subagent was refused an execution slot (capacity full, or the queue timeout passed) at its first step:
   * `status` is `failed`, no model was called. A batch requeues these; a subagent that ran and failed never has
   * it.
   */
  admission_failure?: true;
  /** A fork of a subagent (docs/fork.md), a run of its own: its id (its workflow id). */
  run_id?: string;
  /** A fork of a subagent: the subagent and turn it started from, and what it reused (not billed again). */
  forked_from?: ForkOrigin;
}

/**
 * A subagent that failed ends its workflow as failed (red in every Temporal view) with this failure type, and
 * its whole result as the failure's first detail: its parent, its batch and `batch results` read it from
 * there, as they read a completed one's result. One that timed out does the same with
 * `SUBAGENT_TIMED_OUT_TYPE` (contracts/closing.ts).
 */
export const SUBAGENT_FAILED_TYPE = CLOSING_FAILURE_TYPES.subagentFailed;
export const SUBAGENT_TIMED_OUT_TYPE = CLOSING_FAILURE_TYPES.subagentTimedOut;
/** How its failure's message starts (the Web UI shows it; the worker's log knows the failure by it). */
export const SUBAGENT_FAILED_PREFIX = 'Subagent failed: ';
export const SUBAGENT_TIMED_OUT_PREFIX = 'Subagent timed out: ';

/** The result a failed or timed-out subagent's failure carries, found on `err` or its causes. */
export function failedSubagentResult(err: unknown): SubagentResult | undefined {
  return resultInFailure(err) as SubagentResult | undefined;
}

/** The child whose memo holds its result: one its parent saw end Canceled (activities/cancelled-results.ts). */
export interface CancelledResultRequest {
  workflow_id: string;
}

/** The result a cancelled subagent recorded in its memo; absent when there is none to read. */
export interface CancelledResultAnswer {
  result?: SubagentResult;
}
