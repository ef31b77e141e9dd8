/**
 * Why an Update sent to a run for a person's answer (`answer_clarification`, `approve_tool_call`,
 * `deny_tool_call`) did not land, in the user's terms: a refusal of its validator, a workflow that has not come
 * as far as registering the handler, one that has ended, or a subagent that does not exist.
 */
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type WorkflowClient } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

export interface UpdateTarget<K extends string> {
  client: WorkflowClient;
  runId: string;
  leadWorkflowId: string;
  /** The workflow the Update went to. */
  workflowId: string;
  /** The subagent's holder as the user named it (`the subagent that asked a/q1`). */
  subagentName: string;
  /** What the user named (a question's or a call's ref), for "has no subagent for …". */
  ref: string | undefined;
  /** `an answer`, `a decision`: what the workflow is not waiting for. */
  awaited: string;
  /** The validator's refusal kinds; the one for "not waiting" and for "unknown". */
  refusals: readonly string[];
  notWaiting: K;
  unknown: K;
  refused: (message: string, kind: K) => Error;
}

export async function updateFailure<K extends string>(err: unknown, target: UpdateTarget<K>): Promise<Error> {
  const cause = err instanceof WorkflowUpdateFailedError ? err.cause : undefined;
  if (cause instanceof ApplicationFailure && cause.type && target.refusals.includes(cause.type)) {
    return target.refused(cause.message, cause.type as K);
  }
  const lead = target.workflowId === target.leadWorkflowId;
  const who = lead ? `run ${target.runId}` : target.subagentName;
  // A workflow that never registered the handler has not come as far as that (queued for a slot).
  if (cause instanceof ApplicationFailure && /No registered handler for update/.test(cause.message)) {
    return target.refused(`${who} is not waiting for ${target.awaited}`, target.notWaiting);
  }
  // The server answers an Update to a closed workflow as to a missing one: which it is, describe says.
  if (err instanceof WorkflowNotFoundError) {
    const exists = await target.client
      .getHandle(target.workflowId)
      .describe()
      .then(
        () => true,
        () => false,
      );
    if (exists)
      return target.refused(`${who} has ended: it is not waiting for ${target.awaited}`, target.notWaiting);
    return lead
      ? err
      : target.refused(
          `run ${target.runId} has no subagent for ${target.ref} (${target.workflowId})`,
          target.unknown,
        );
  }
  return err instanceof Error ? err : new Error(String(err));
}
