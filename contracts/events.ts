/**
 * The lead run's event log: one record per delegation milestone, appended in workflow state and read through
 * the `lead_events` query with an `after_seq` cursor (no signal per step, so history stays small). The names
 * are DeerFlow's `task_*` events; snake_case on the wire.
 */
import type { TokenUsage } from './messages';
import type { SubagentStatus, SubagentStopReason } from './status';

export const TERMINAL_TASK_EVENT_TYPES = [
  'task_completed',
  'task_failed',
  'task_cancelled',
  'task_timed_out',
] as const;
export type TerminalTaskEventType = (typeof TERMINAL_TASK_EVENT_TYPES)[number];

export const TASK_EVENT_TYPES = [
  'task_queued',
  'task_started',
  'task_running',
  ...TERMINAL_TASK_EVENT_TYPES,
] as const;
export type TaskEventType = (typeof TASK_EVENT_TYPES)[number];

interface TaskEventBase {
  /** Position in the run's event log, from 1, so `after_seq: 0` reads everything. */
  seq: number;
  /** The tool_call_id of the `task` call (the ledger entry's id). */
  task_id: string;
  /** ISO 8601, from the workflow clock. */
  at: string;
}

/** The delegation waits for an execution slot (admission): no child runs yet. */
export interface TaskQueuedEvent extends TaskEventBase {
  type: 'task_queued';
  description: string;
  subagent_type: string;
  /** The deployment's running subagents and queued delegations when it joined the queue (it included). */
  running: number;
  queued: number;
}

export interface TaskStartedEvent extends TaskEventBase {
  type: 'task_started';
  description: string;
  subagent_type: string;
  /** The effective model the child runs with, after every override. */
  model_name: string;
  workflow_id: string;
}

/** A progress snapshot: usage is cumulative for the child, never a delta. */
export interface TaskRunningEvent extends TaskEventBase {
  type: 'task_running';
  turns: number;
  token_usage?: TokenUsage;
  model_name?: string;
}

export interface TaskTerminalEvent extends TaskEventBase {
  type: TerminalTaskEventType;
  /** The child's own status: `polling_timed_out` is reported as a `task_timed_out` event. */
  status: SubagentStatus;
  stop_reason?: SubagentStopReason;
  /** Refused at admission: the subagent stopped before any model call. */
  admission_failure?: true;
  error?: string;
  result_brief?: string;
  model_name?: string;
  token_usage?: TokenUsage;
  turns: number;
}

export type TaskEvent = TaskQueuedEvent | TaskStartedEvent | TaskRunningEvent | TaskTerminalEvent;

/** An event before the log gives it its `seq`. */
export type NewTaskEvent =
  | Omit<TaskQueuedEvent, 'seq'>
  | Omit<TaskStartedEvent, 'seq'>
  | Omit<TaskRunningEvent, 'seq'>
  | Omit<TaskTerminalEvent, 'seq'>;
