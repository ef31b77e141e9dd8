/**
 * Approvals (issue 31): a tool call whose guardrail decision is `ask` waits for a person. The shapes a waiting
 * call is listed with (`status`, the live tree, the client's `pending()`), the two Updates that decide it
 * (`approve_tool_call`, `deny_tool_call`), their refusals, and the signal that tells a parent a child waits.
 * Declared once for the workflows and the clients (no Node APIs: the workflow bundle imports this file).
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';
import { questionRef, questionTarget } from './clarification';
import { oneLine } from './text';

/** How long a call waits for a decision unless the config says otherwise (`guardrails.approval_timeout_seconds`). */
export const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 3600;

/** Bounds on what reaches history: a call's arguments as listed, an approver's note or a denier's reason, a name. */
export const APPROVAL_ARGS_MAX_CHARS = 500;
export const APPROVAL_NOTE_MAX_CHARS = 2000;
export const APPROVER_MAX_CHARS = 200;
/** The call on a timer's summary: short enough for the Web UI's timer list (and Temporal's 400-byte limit). */
const TIMER_CALL_MAX_CHARS = 80;

/** A tool call waiting for a person's decision, as `status`, the live tree and the client see it. */
export interface PendingApproval {
  /**
   * How to name it in this run (`subagents approve --call`): `a1` for the lead's own, `<delegation id>/a1` for
   * a subagent's (`a/b/a1` for a nested one).
   */
  ref: string;
  /** Its id in the workflow that asked: `a1`, `a2`, … */
  id: string;
  /** The workflow that waits (the Update that decides goes there). */
  workflow_id: string;
  /** The agent whose call it is: `lead`, or the subagent's type. */
  asked_by: string;
  /** The tool as the model called it. */
  tool: string;
  /** Its arguments on one line, capped at APPROVAL_ARGS_MAX_CHARS. */
  args: string;
  /** The model's id for the call. */
  call_id: string;
  /** Why the policy asks, and which policy. */
  reason: string;
  policy_id: string;
  /** ISO 8601 (workflow clock). */
  asked_at: string;
  /** When it is denied for want of a decision. */
  expires_at: string;
  timeout_seconds: number;
}

/** How a waiting call ended: a person's decision, the timeout, or its agent's end (cancelled, out of time). */
export type ApprovalEnd = 'approved' | 'denied' | 'timed_out' | 'cancelled';

/** A waiting call in the workflow that asked. */
export interface ApprovalRecord extends PendingApproval {
  state: 'pending' | ApprovalEnd;
  /** Who decided (absent on a timeout or a cancel). */
  by?: string;
  /** The approver's note or the denier's reason. */
  note?: string;
  closed_at?: string;
}

/** What `subagents approve` (the Update) sends. */
export interface ApproveRequest {
  /** The asking workflow's id for it (`a1`); absent: the one call it is waiting on. */
  approval_id?: string;
  /** Who approves: the client's identity, or `$USER@host` from the CLI. */
  by: string;
  note?: string;
}

/** What `subagents deny` (the Update) sends: a reason is required, the model reads it. */
export interface DenyRequest {
  approval_id?: string;
  by: string;
  reason: string;
}

/** What either Update returns: what was recorded. */
export interface RecordedDecision {
  ref: string;
  approval_id: string;
  workflow_id: string;
  asked_by: string;
  tool: string;
  args: string;
  /**
   * The held call's tool_call_id and the policy that asked: a closed agent's steps are rebuilt from its
   * history with them (absent in decisions recorded before).
   */
  tool_call_id?: string;
  policy_id?: string;
  decision: 'approved' | 'denied';
  by: string;
  /** ISO 8601 (workflow clock). */
  at: string;
  note?: string;
}

/** Why a decision is refused: the Update's failure type, so a client can tell a user's mistake from a state. */
export const APPROVAL_REFUSALS = {
  /** No approver, an empty reason on a deny, a note or reason too long. */
  invalid: 'InvalidDecision',
  /** No waiting call of that id. */
  unknown: 'UnknownApproval',
  /** Nothing is waiting for a decision. */
  notWaiting: 'NotWaitingForApproval',
  /** That call was decided, timed out or cancelled already. */
  closed: 'ApprovalClosed',
  /** Several calls wait: the decision must name one. */
  ambiguous: 'AmbiguousApproval',
} as const;
export type ApprovalRefusal = (typeof APPROVAL_REFUSALS)[keyof typeof APPROVAL_REFUSALS];

/** The refusals that are a mistake in the request itself (exit code 2 from the CLI); the rest are the run's state. */
export function isApprovalUsageMistake(kind: ApprovalRefusal): boolean {
  return (
    kind === APPROVAL_REFUSALS.invalid ||
    kind === APPROVAL_REFUSALS.unknown ||
    kind === APPROVAL_REFUSALS.ambiguous
  );
}

/** Why `by` cannot name an approver, or undefined when it can. */
export function approverProblem(by: unknown): string | undefined {
  if (typeof by !== 'string' || by.trim() === '') return 'the decision names no approver (by)';
  if (by.length > APPROVER_MAX_CHARS)
    return `the approver's name is longer than ${APPROVER_MAX_CHARS} characters`;
  return undefined;
}

/** Why an approver's note cannot be recorded (absent is fine), or undefined when it can. */
export function noteProblem(note: unknown): string | undefined {
  if (note === undefined) return undefined;
  if (typeof note !== 'string') return 'the note is not text';
  if (note.length > APPROVAL_NOTE_MAX_CHARS) {
    return `the note is ${note.length} characters long, above the ${APPROVAL_NOTE_MAX_CHARS} allowed`;
  }
  return undefined;
}

/** Why a denier's reason cannot be recorded (the model reads it: it must say something), or undefined. */
export function denyReasonProblem(reason: unknown): string | undefined {
  if (typeof reason !== 'string') return 'the reason is missing (say why, with --reason: the agent reads it)';
  if (reason.trim() === '') return 'the reason is empty (say why, with --reason: the agent reads it)';
  if (reason.length > APPROVAL_NOTE_MAX_CHARS) {
    return `the reason is ${reason.length} characters long, above the ${APPROVAL_NOTE_MAX_CHARS} allowed`;
  }
  return undefined;
}

export const approveToolCallUpdate = defineUpdate<RecordedDecision, [ApproveRequest]>('approve_tool_call');
export const denyToolCallUpdate = defineUpdate<RecordedDecision, [DenyRequest]>('deny_tool_call');

/** A child's waiting call opened or closed: sent to its parent, which passes it up to the lead. */
export type ApprovalNotice =
  | { state: 'asked'; approval: Omit<PendingApproval, 'ref'> }
  | { state: 'closed'; workflow_id: string; id: string; end: ApprovalEnd };

export const approvalNoticeSignal = defineSignal<[ApprovalNotice]>('approval_notice');

/** A waiting call's name in the run: its id after the delegation ids between the lead and the asking workflow. */
export function approvalRef(leadWorkflowId: string, askingWorkflowId: string, id: string): string {
  return questionRef(leadWorkflowId, askingWorkflowId, id);
}

/** Where the call `ref` of the run `leadWorkflowId` waits: the asking workflow's id and its own id there. */
export function approvalTarget(leadWorkflowId: string, ref: string): { workflowId: string; id: string } {
  return questionTarget(leadWorkflowId, ref);
}

function cut(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * A call's arguments as a person reads them, on one line and capped: the value alone when the call has one
 * argument of text (`rm -rf build/` for bash's `{"command": …}`), else the JSON on one line.
 */
export function approvalArgsLine(rawArgs: string, max = APPROVAL_ARGS_MAX_CHARS): string {
  let text = rawArgs;
  try {
    const parsed: unknown = JSON.parse(rawArgs);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const values = Object.values(parsed);
      text = values.length === 1 && typeof values[0] === 'string' ? values[0] : JSON.stringify(parsed);
    }
  } catch {
    // Not JSON: shown as the model sent it.
  }
  return cut(oneLine(text), max);
}

/** The wait's timer in the Web UI: `approval: bash rm -rf build/`. */
export function approvalTimerSummary(tool: string, argsLine: string): string {
  return cut(`approval: ${oneLine(tool)} ${argsLine}`.trim(), TIMER_CALL_MAX_CHARS + 'approval: '.length);
}

/** The command that approves the call `ref` of run `runId` (`--call` only when needed); `flags` as answer's. */
export function approveCommandLine(runId: string, ref?: string, flags = ''): string {
  return `subagents approve ${runId}${ref === undefined ? '' : ` --call ${ref}`}${flags && ` ${flags}`}`;
}

/** The command that denies it: the reason is required. */
export function denyCommandLine(runId: string, ref?: string, flags = ''): string {
  return `subagents deny ${runId}${ref === undefined ? '' : ` --call ${ref}`} --reason "<why>"${flags && ` ${flags}`}`;
}

/** The reason the model reads when a person denied the call. */
export function deniedByText(by: string, reason: string): string {
  return `denied by ${by}: ${reason}`;
}
