/**
 * A cancelled child's result, for the workflow that started it. Temporal keeps no details with a cancellation,
 * so a subagent that ends Canceled records its result in its memo first (contracts/closing.ts), and a workflow
 * cannot read another's memo: this reads it through the worker's own client. It is asked only once the child
 * has closed, so every attempt reads the same memo and a retry is harmless.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type WorkflowExecutionDescription } from '@temporalio/client';
import { RESULT_MEMO } from '../contracts/closing';
import type { CancelledResultAnswer, CancelledResultRequest, SubagentResult } from '../contracts/subagent';

/** The result the closed child `workflow_id` recorded when it ended Canceled; none for any other ending. */
export async function readCancelledResult(request: CancelledResultRequest): Promise<CancelledResultAnswer> {
  let description: WorkflowExecutionDescription;
  try {
    description = await Context.current().client.workflow.getHandle(request.workflow_id).describe();
  } catch (err) {
    // Past the namespace's retention: nothing is left to read, and asking again changes nothing.
    if (err instanceof WorkflowNotFoundError) return {};
    throw err;
  }
  if (description.status.name !== 'CANCELLED') return {};
  const recorded: unknown = description.memo?.[RESULT_MEMO];
  return isCancelledResult(recorded) ? { result: recorded } : {};
}

function isCancelledResult(value: unknown): value is SubagentResult {
  if (typeof value !== 'object' || value === null) return false;
  const { status, turns } = value as Partial<Record<keyof SubagentResult, unknown>>;
  return status === 'cancelled' && typeof turns === 'number';
}
