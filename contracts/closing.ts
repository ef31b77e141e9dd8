/**
 * How a lead run, a subagent or a batch closes when its result is not a success, so that Temporal's own status
 * says so in every view (the Web UI's list, a parent's timeline, metrics and alerts on failed workflows), while
 * every reader still gets the whole result:
 * - `failed`: the workflow fails with `<Kind>Failed`, its result the failure's first detail;
 * - `timed_out`: the workflow fails with `<Kind>TimedOut`, its result likewise. Temporal's own TimedOut is the
 *   server's verdict on an execution it cut off (no code of the workflow ran at the end); a run whose wall clock
 *   ran out ended itself gracefully, kept its partial text and gave its slot back, so it fails with a type that
 *   says it timed out;
 * - `cancelled`: the workflow ends Canceled. Temporal keeps no details with a cancellation, so the result is
 *   written to the workflow's memo (`result`) first: a client reads it there without a worker.
 * Capped runs (`turn_capped`, `token_capped`, `loop_capped`, `subagent_limit_capped`) completed: Completed.
 */
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';

export const CLOSING_FAILURE_TYPES = {
  subagentFailed: 'SubagentFailed',
  subagentTimedOut: 'SubagentTimedOut',
  leadFailed: 'LeadRunFailed',
  leadTimedOut: 'LeadRunTimedOut',
} as const;

const RESULT_FAILURE_TYPES: readonly string[] = Object.values(CLOSING_FAILURE_TYPES);

/** The memo key under which a cancelled workflow records its result. */
export const RESULT_MEMO = 'result';
/** The memo key of a closed workflow's final line (what the Web UI's current details said at the close). */
export const OUTCOME_MEMO = 'outcome';

/** The result a closing failure carries, found on `err` or its causes (a child's, a client's). */
export function resultInFailure(err: unknown): unknown {
  let at: unknown = err;
  for (let depth = 0; depth < 4 && at instanceof Error; depth += 1) {
    if (at instanceof ApplicationFailure && at.type && RESULT_FAILURE_TYPES.includes(at.type)) {
      const [result] = at.details ?? [];
      return typeof result === 'object' && result !== null ? result : undefined;
    }
    at = at.cause;
  }
  return undefined;
}

/** Whether `err` (or a cause) is a cancellation: the workflow it came from ended Canceled. */
export function isCancelledFailure(err: unknown): boolean {
  let at: unknown = err;
  for (let depth = 0; depth < 4 && at instanceof Error; depth += 1) {
    if (at instanceof CancelledFailure) return true;
    at = at.cause;
  }
  return false;
}

/** What `workflowResult` reads a workflow through: a Temporal client's handle, or a test's stand-in. */
export interface ClosingWorkflowHandle<R> {
  result(): Promise<R>;
  describe(): Promise<{ memo?: Record<string, unknown> }>;
}

/**
 * A closed workflow's result, whichever way it closed: returned (Completed), in the failure's details (a failed
 * or timed-out run, subagent or batch), or in the memo of one that ended Canceled. Read from the server alone:
 * no worker needed. The client's readers and the lead's batch tools share it; other failures throw as they are.
 */
export async function workflowResult<R>(handle: ClosingWorkflowHandle<R>): Promise<R> {
  try {
    return await handle.result();
  } catch (err) {
    const failed = resultInFailure(err);
    if (failed !== undefined) return failed as R;
    // A handle's result() fails with the SDK's WorkflowFailedError, its cause the CancelledFailure.
    if (isCancelledFailure(err)) {
      const recorded = (await handle.describe()).memo?.[RESULT_MEMO];
      if (typeof recorded === 'object' && recorded !== null) return recorded as R;
    }
    throw err;
  }
}
