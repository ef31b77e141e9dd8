/**
 * What a clarification question (workflows/clarification.ts) and a tool call held for approval
 * (workflows/approvals.ts) have in common: the workflow that holds one, named for the person who must act on
 * it, and the notices that pass a subagent's up to the workflow that started it, so the lead's `status` lists
 * every one of the run.
 */
import {
  CancellationScope,
  getExternalWorkflowHandle,
  workflowInfo,
  type SignalDefinition,
} from '@temporalio/workflow';

/** The run (`run <run id>`) or the subagent (`subagent <type> (<workflow id>)`) that holds it, for messages. */
export function holderName(agent: { leadWorkflowId: string; runId: string; agentName: string }): string {
  const { workflowId } = workflowInfo();
  return workflowId === agent.leadWorkflowId
    ? `run ${agent.runId}`
    : `subagent ${agent.agentName} (${workflowId})`;
}

/**
 * A subagent tells the workflow that started it (a lead run has none). Also when the agent is being cancelled:
 * the parent must hear that what it held closed. A parent that has ended cannot take it; nothing is lost then.
 */
export function tellParent<T>(signal: SignalDefinition<[T]>, notice: T, leadWorkflowId: string): void {
  const parent = workflowInfo().parent;
  if (!parent || workflowInfo().workflowId === leadWorkflowId) return;
  const handle = getExternalWorkflowHandle(parent.workflowId, parent.runId);
  void CancellationScope.nonCancellable(() => handle.signal(signal, notice)).catch(() => undefined);
}
