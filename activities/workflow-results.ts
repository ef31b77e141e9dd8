/**
 * A closed workflow's result, whichever way it closed (contracts/closing.ts): returned (Completed), in the
 * failure's details (a failed or timed-out run, subagent or batch), or in the memo of one that ended Canceled.
 * Read from the server alone: no worker needed. The client's readers and the lead's batch tools share it.
 */
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { isCancelledFailure, RESULT_MEMO, resultInFailure } from '../contracts/closing';

/** The result of the workflow behind `handle`, waiting for it to close; other failures throw as they are. */
export async function workflowResult<R>(
  handle: Pick<WorkflowHandle, 'describe'> & { result(): Promise<R> },
): Promise<R> {
  try {
    return await handle.result();
  } catch (err) {
    const failed = resultInFailure(err);
    if (failed !== undefined) return failed as R;
    if (err instanceof WorkflowFailedError && isCancelledFailure(err)) {
      const recorded = (await handle.describe()).memo?.[RESULT_MEMO];
      if (typeof recorded === 'object' && recorded !== null) return recorded as R;
    }
    throw err;
  }
}
