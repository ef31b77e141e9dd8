/**
 * The lead run's event log: one record per delegation milestone, appended in workflow state and read through
 * the `lead_events` query with an `after_seq` cursor (no signal per step, so history stays small). The names
 * are DeerFlow's `task_*` events; snake_case on the wire.
 */
import type { ClarificationType } from './clarification';
import type { TokenUsage } from './messages';
import type { LedgerBatchCounts } from './ledger';
import type { SubagentStatus, SubagentStopReason } from './status';

export const TERMINAL_TASK_EVENT_TYPES = [
  'task_completed',
  'task_failed',
  'task_cancelled',
  'task_timed_out',
] as const;
export type TerminalTaskEventType = (typeof TERMINAL_TASK_EVENT_TYPES)[number];

/** A batch the run started with `batch_task`, and its end (its items are followed in the batch itself). */
export const BATCH_EVENT_TYPES = ['batch_started', 'batch_finished'] as const;

/** A question asked with `ask_clarification` (by the lead or a subagent), and how it closed. */
export const CLARIFICATION_EVENT_TYPES = [
  'clarification_requested',
  'clarification_answered',
  'clarification_timed_out',
] as const;

/**
 * A tool call a guardrail kept from running (denied by its policy, by a person, or for want of one), and one a
 * person approved.
 */
export const GUARDRAIL_EVENT_TYPES = ['tool_denied', 'tool_approved'] as const;

/**
 * A tool load whose provider could not be used when the run started: the tool does not exist in this run (the
 * seed: "while the provider is absent the tool does not exist").
 */
export const PROVIDER_EVENT_TYPES = ['subagent_tool_unavailable'] as const;

/** The run's workspace moved to another host, or could not be saved (over its cap): contracts/workspace.ts. */
export const WORKSPACE_EVENT_TYPES = ['workspace_moved', 'workspace_not_saved'] as const;

export const TASK_EVENT_TYPES = [
  'task_queued',
  'task_started',
  'task_running',
  ...TERMINAL_TASK_EVENT_TYPES,
  ...BATCH_EVENT_TYPES,
  ...CLARIFICATION_EVENT_TYPES,
  ...GUARDRAIL_EVENT_TYPES,
  ...PROVIDER_EVENT_TYPES,
  ...WORKSPACE_EVENT_TYPES,
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

/** `batch_task` started a batch (`task_id`: its ledger entry's id). */
export interface BatchStartedEvent extends TaskEventBase {
  type: 'batch_started';
  description: string;
  /** Its items' agent. */
  subagent_type: string;
  workflow_id: string;
  items: number;
}

/** The batch ended: every item in a terminal state (`cancelled`: the rest were cancelled), or it failed. */
export interface BatchFinishedEvent extends TaskEventBase {
  type: 'batch_finished';
  status: 'completed' | 'cancelled' | 'failed';
  counts: LedgerBatchCounts;
  error?: string;
}

/**
 * A question waits for its answer (`subagents answer`). `task_id`: the question's name in the run (`q1` for the
 * lead's own, `<delegation id>/q1` for a subagent's), which `--question` takes.
 */
export interface ClarificationRequestedEvent extends TaskEventBase {
  type: 'clarification_requested';
  question_id: string;
  asked_by: string;
  workflow_id: string;
  question: string;
  clarification_type: ClarificationType;
  context?: string;
  options?: string[];
  timeout_seconds: number;
}

export interface ClarificationAnsweredEvent extends TaskEventBase {
  type: 'clarification_answered';
  question_id: string;
  /** Who answered, when the answer named them. */
  by?: string;
  /** Head and tail, at most 2,000 characters. */
  answer: string;
}

/** No answer came within `timeout_seconds`: the model was told so, and a late answer is refused. */
export interface ClarificationTimedOutEvent extends TaskEventBase {
  type: 'clarification_timed_out';
  question_id: string;
  timeout_seconds: number;
}

/**
 * `task_id`: the denied call's tool_call_id, after the delegation ids between the lead and the agent that made
 * it (`rm1` for the lead's, `t1/rm1` for its subagent's, as questions are named).
 */
export interface ToolDeniedEvent extends TaskEventBase {
  type: 'tool_denied';
  tool: string;
  /** `lead`, or the agent type of the subagent whose call it was. */
  agent: string;
  reason: string;
  policy_id: string;
  /** A subagent's denial: that subagent's workflow id. */
  workflow_id?: string;
}

/**
 * `task_id` as a denial's. A call a guardrail held for a person's decision, approved: who, and their note. It ran
 * as any other call.
 */
export interface ToolApprovedEvent extends TaskEventBase {
  type: 'tool_approved';
  tool: string;
  /** `lead`, or the agent type of the subagent whose call it was. */
  agent: string;
  by: string;
  note?: string;
  policy_id: string;
  /** A subagent's approval: that subagent's workflow id. */
  workflow_id?: string;
}

/** The decisions on a run's tool calls: what a closed run's result keeps of its event log (`decisions`). */
export type ToolDecisionEvent = ToolDeniedEvent | ToolApprovedEvent;

export function isToolDecisionEvent(event: TaskEvent): event is ToolDecisionEvent {
  return event.type === 'tool_denied' || event.type === 'tool_approved';
}

/**
 * A subagent's denied or approved call, told to its parent, which passes it up to the lead: every log on the way
 * keeps it. `approved` marks an approval (`by`, `note`); absent: a denial (`reason`).
 */
export interface GuardrailNotice {
  /** The subagent's workflow id. */
  workflow_id: string;
  /** The denied call's tool_call_id there. */
  call_id: string;
  at: string;
  tool: string;
  agent: string;
  reason: string;
  policy_id: string;
  approved?: { by: string; note?: string };
}

/** `task_id`: the absent tool's name (no delegation exists). */
export interface SubagentToolUnavailableEvent extends TaskEventBase {
  type: 'subagent_tool_unavailable';
  tool: string;
  provider: string;
  provider_type: string;
  /** Why the provider could not be used, in its probe's words. */
  reason: string;
}

/** `task_id`: `workspace`. Its home host was lost: the workspace was restored on another host. */
export interface WorkspaceMovedEvent extends TaskEventBase {
  type: 'workspace_moved';
  from_host: string;
  to_host: string;
  /** The new placement's epoch (the run's first home is epoch 1). */
  epoch: number;
  /** What the restore brought back, and what it took. */
  files: number;
  bytes: number;
  ms: number;
  /** The workflow whose call found the home gone. */
  workflow_id: string;
}

/** `task_id`: `workspace`. The workspace passed `workspace.snapshot.max_bytes`: from here on nothing is saved. */
export interface WorkspaceNotSavedEvent extends TaskEventBase {
  type: 'workspace_not_saved';
  bytes: number;
  max_bytes: number;
  workflow_id: string;
}

/** What a subagent tells the lead of the run's workspace (the lead logs it once). */
export type WorkspaceNotice =
  Omit<WorkspaceMovedEvent, 'seq' | 'task_id'> | Omit<WorkspaceNotSavedEvent, 'seq' | 'task_id'>;

export type ClarificationEvent =
  ClarificationRequestedEvent | ClarificationAnsweredEvent | ClarificationTimedOutEvent;

export type TaskEvent =
  | ClarificationEvent
  | TaskQueuedEvent
  | TaskStartedEvent
  | TaskRunningEvent
  | TaskTerminalEvent
  | BatchStartedEvent
  | BatchFinishedEvent
  | ToolDeniedEvent
  | ToolApprovedEvent
  | SubagentToolUnavailableEvent
  | WorkspaceMovedEvent
  | WorkspaceNotSavedEvent;

/** An event before the log gives it its `seq`. */
export type NewTaskEvent =
  | Omit<ClarificationRequestedEvent, 'seq'>
  | Omit<ClarificationAnsweredEvent, 'seq'>
  | Omit<ClarificationTimedOutEvent, 'seq'>
  | Omit<TaskQueuedEvent, 'seq'>
  | Omit<TaskStartedEvent, 'seq'>
  | Omit<TaskRunningEvent, 'seq'>
  | Omit<TaskTerminalEvent, 'seq'>
  | Omit<BatchStartedEvent, 'seq'>
  | Omit<BatchFinishedEvent, 'seq'>
  | Omit<ToolDeniedEvent, 'seq'>
  | Omit<ToolApprovedEvent, 'seq'>
  | Omit<SubagentToolUnavailableEvent, 'seq'>
  | Omit<WorkspaceMovedEvent, 'seq'>
  | Omit<WorkspaceNotSavedEvent, 'seq'>;

/** A delegation's end: `task_completed`, `task_failed`, `task_cancelled`, `task_timed_out`. */
export function isTaskTerminalEvent(event: TaskEvent): event is TaskTerminalEvent {
  return (TERMINAL_TASK_EVENT_TYPES as readonly string[]).includes(event.type);
}
