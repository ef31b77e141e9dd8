import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** Every execution of a workflow, first to last, following continue-as-new through each history's last event. */
export async function executionHistories(
  client: Client,
  workflowId: string,
  firstRunId: string,
): Promise<{ runId: string; history: temporal.api.history.v1.IHistory }[]> {
  const out: { runId: string; history: temporal.api.history.v1.IHistory }[] = [];
  for (let runId: string | undefined = firstRunId; runId;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    out.push({ runId, history });
    runId =
      history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return out;
}
