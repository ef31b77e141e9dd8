/**
 * How many subagents ran together, read from history rather than sampled: each child's work interval lies within
 * the time it held its admission slot, so the most intervals that overlap is at most the most slots held at once.
 * Sampling the admission workflow's state can miss a peak; this cannot.
 */
import type { Client } from '@temporalio/client';

export interface WorkInterval {
  workflowId: string;
  start: number;
  end: number;
}

const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined): number =>
  Number(time?.seconds ?? 0) * 1000 + Math.floor((time?.nanos ?? 0) / 1e6);

/** The children that `parents` started, as their histories name them, each parent's in order. */
export async function childrenOf(client: Client, parents: readonly string[]): Promise<string[]> {
  const histories = await Promise.all(parents.map((id) => client.workflow.getHandle(id).fetchHistory()));
  return histories.flatMap((history) =>
    (history.events ?? []).flatMap(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? [],
    ),
  );
}

/**
 * When each subagent held its slot at least: from its first model call's start (after its slot was granted) to
 * the start of its last workflow task (in which it gives the slot back). One that never called its model has none.
 */
export async function workIntervals(client: Client, workflowIds: readonly string[]): Promise<WorkInterval[]> {
  const intervals = await Promise.all(
    workflowIds.map(async (workflowId) => {
      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const modelCalls = new Set(
        events
          .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
          .map((e) => String(e.eventId)),
      );
      const firstCall = events.find((e) =>
        modelCalls.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '')),
      );
      const lastTask = events.filter((e) => e.workflowTaskStartedEventAttributes).at(-1);
      if (!firstCall || !lastTask) return [];
      return [{ workflowId, start: millis(firstCall.eventTime), end: millis(lastTask.eventTime) }];
    }),
  );
  return intervals.flat();
}

/** The most intervals that overlap at any instant (one that ends as another starts does not overlap it). */
export function peakOverlap(intervals: readonly WorkInterval[]): number {
  const points = intervals.flatMap(({ start, end }) => [
    { at: start, change: 1 },
    { at: end, change: -1 },
  ]);
  points.sort((a, b) => a.at - b.at || a.change - b.change);
  let now = 0;
  let peak = 0;
  for (const { change } of points) {
    now += change;
    peak = Math.max(peak, now);
  }
  return peak;
}
