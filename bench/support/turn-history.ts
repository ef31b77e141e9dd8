/**
 * Where one subagent turn's time goes, from the subagent's history and the fake provider's stamps (one host, one
 * clock): the window from answer k handed to the network to request k+1 arriving, cut at the history's events.
 */
import type { temporal } from '@temporalio/proto';
import type { TurnWindow } from './turn-stamps';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The parts of one turn, in ms; they add up to `total`. */
export interface TurnPhases {
  /** Answer sent → the model activity's completion recorded (the worker reads the stream and reports). */
  modelActivityClose: number;
  /** Workflow tasks scheduled → started: waiting for the worker to take them. */
  workflowTaskQueued: number;
  /** Workflow tasks started → completed: the worker's activations, local activities (an `ls`) included. */
  workflowTaskRunning: number;
  /** A tool run as a regular activity: scheduled → completed. */
  toolActivity: number;
  /** The next model activity scheduled → started. */
  modelActivityQueued: number;
  /** The next model activity started → its request arriving. */
  modelActivityOpen: number;
  /** What the history does not account for (between a task's completion and the next event it causes). */
  other: number;
  total: number;
}

/** A turn's phases, and how many workflow tasks and regular tool activities it took. */
export interface TurnAnatomy {
  phases: TurnPhases;
  workflowTasks: number;
  toolActivities: number;
}

export const PHASE_NAMES: Record<keyof TurnPhases, string> = {
  modelActivityClose: 'answer sent → model activity completed',
  workflowTaskQueued: 'workflow tasks queued (scheduled → started)',
  workflowTaskRunning: 'workflow tasks running (started → completed, local activities in)',
  toolActivity: 'tool as a regular activity (scheduled → completed)',
  modelActivityQueued: 'next model activity queued (scheduled → started)',
  modelActivityOpen: 'next model activity started → request arrives',
  other: 'other (between events)',
  total: 'turn, answer sent → next request',
};

function at(event: HistoryEvent | undefined): number {
  if (!event?.eventTime) return Number.NaN;
  return Number(event.eventTime.seconds ?? 0) * 1000 + (event.eventTime.nanos ?? 0) / 1e6;
}

function id(event: HistoryEvent): number {
  return Number(event.eventId ?? 0);
}

/** One entry per window, or none when the model activities and the windows do not pair up (a retried call). */
export function turnAnatomies(events: HistoryEvent[], windows: TurnWindow[]): TurnAnatomy[] {
  const byId = new Map(events.map((e) => [id(e), e]));
  const started = new Map<number, HistoryEvent>();
  const completed = new Map<number, HistoryEvent>();
  for (const e of events) {
    const start = e.activityTaskStartedEventAttributes;
    if (start) started.set(Number(start.scheduledEventId), e);
    const done = e.activityTaskCompletedEventAttributes;
    if (done) completed.set(Number(done.scheduledEventId), e);
  }
  const activity = (e: HistoryEvent) => e.activityTaskScheduledEventAttributes?.activityType?.name;
  const modelCalls = events.filter((e) => activity(e) === 'callModel');
  if (modelCalls.length !== windows.length + 1) return [];
  return windows.map((window, i) => {
    const previousDone = completed.get(id(modelCalls[i]));
    const next = modelCalls[i + 1];
    const nextStarted = started.get(id(next));
    const from = previousDone ? id(previousDone) : id(modelCalls[i]);
    const between = events.filter((e) => id(e) > from && id(e) < id(next));
    let workflowTaskQueued = 0;
    let workflowTaskRunning = 0;
    let toolActivity = 0;
    let workflowTasks = 0;
    let toolActivities = 0;
    for (const e of between) {
      const task = e.workflowTaskCompletedEventAttributes;
      if (task) {
        const taskStarted = byId.get(Number(task.startedEventId));
        workflowTaskQueued += at(taskStarted) - at(byId.get(Number(task.scheduledEventId)));
        workflowTaskRunning += at(e) - at(taskStarted);
        workflowTasks += 1;
      }
      if (activity(e) === 'executeToolCall') {
        toolActivity += at(completed.get(id(e))) - at(e);
        toolActivities += 1;
      }
    }
    const total = window.arrivedAt - window.sentAt;
    const modelActivityClose = at(previousDone) - window.sentAt;
    const modelActivityQueued = at(nextStarted) - at(next);
    const modelActivityOpen = window.arrivedAt - at(nextStarted);
    const accounted =
      modelActivityClose +
      workflowTaskQueued +
      workflowTaskRunning +
      toolActivity +
      modelActivityQueued +
      modelActivityOpen;
    const phases: TurnPhases = {
      modelActivityClose,
      workflowTaskQueued,
      workflowTaskRunning,
      toolActivity,
      modelActivityQueued,
      modelActivityOpen,
      other: total - accounted,
      total,
    };
    return { phases, workflowTasks, toolActivities };
  });
}
