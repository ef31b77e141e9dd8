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

/** One line an event (id, type, and what it names), for a failure's message: where a replay parted. */
export function historyOutline(events: readonly temporal.api.history.v1.IHistoryEvent[]): string {
  return events
    .map((event) => {
      const type = String(event.eventType ?? '').replace(/^EVENT_TYPE_/, '');
      const scheduled = event.activityTaskScheduledEventAttributes;
      const named =
        (scheduled && `${scheduled.activityType?.name} @${scheduled.taskQueue?.name}`) ??
        event.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName ??
        event.workflowExecutionSignaledEventAttributes?.signalName ??
        event.timerStartedEventAttributes?.timerId ??
        event.markerRecordedEventAttributes?.markerName ??
        event.activityTaskTimedOutEventAttributes?.failure?.message ??
        event.activityTaskFailedEventAttributes?.failure?.message ??
        event.workflowTaskFailedEventAttributes?.failure?.message?.slice(0, 120) ??
        '';
      return `${String(event.eventId)} ${type} ${named}`.trimEnd();
    })
    .join('\n');
}
