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

/** The activities a subagent runs only while it holds its slot: its model calls and its tool calls. */
const WORK = new Set(['callModel', 'executeToolCall']);

/**
 * When each subagent held its slot at least: from its first model or tool call scheduled (in a task after its
 * slot was granted) to its last one closed (before the task in which it gives the slot back). One that never
 * called its model has none. Workflow task times are no bound: under load a task that waits on a local activity
 * (the slot's release among them) is followed by more.
 */
export async function workIntervals(client: Client, workflowIds: readonly string[]): Promise<WorkInterval[]> {
  const intervals = await Promise.all(
    workflowIds.map(async (workflowId) => {
      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const work = new Set(
        events
          .filter((e) => WORK.has(e.activityTaskScheduledEventAttributes?.activityType?.name ?? ''))
          .map((e) => String(e.eventId)),
      );
      const starts = events.filter((e) => work.has(String(e.eventId))).map((e) => millis(e.eventTime));
      const ends = events
        .filter((e) => {
          const closed =
            e.activityTaskCompletedEventAttributes ??
            e.activityTaskFailedEventAttributes ??
            e.activityTaskTimedOutEventAttributes ??
            e.activityTaskCanceledEventAttributes;
          return work.has(String(closed?.scheduledEventId ?? ''));
        })
        .map((e) => millis(e.eventTime));
      if (starts.length === 0 || ends.length === 0) return [];
      return [{ workflowId, start: Math.min(...starts), end: Math.max(...ends) }];
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
