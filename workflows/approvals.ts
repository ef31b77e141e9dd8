/**
 * Approvals: a tool call a guardrail decided `ask` waits for a person. The call is recorded and shown (the
 * run's `status`, the Web UI's current details, a named timer), then the agent waits on a durable condition,
 * holding no activity and no worker slot, until `approve_tool_call` or `deny_tool_call` (Updates, checked by
 * their validators) decides it or `approval_timeout_seconds` pass (then it is denied). A subagent's waiting
 * call is announced to its parent (a signal, passed up to the lead), so the lead's `status` lists every
 * waiting call of the run; the decision goes to the workflow that asked. The wait runs inside the agent's loop,
 * so its wall clock counts it and a cancel ends it.
 */
import { condition, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  approvalArgsLine,
  approvalNoticeSignal,
  approvalRef,
  APPROVAL_REFUSALS,
  approvalTimerSummary,
  approveCommandLine,
  approverProblem,
  approveToolCallUpdate,
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  denyCommandLine,
  denyReasonProblem,
  denyToolCallUpdate,
  noteProblem,
  type ApprovalNotice,
  type ApprovalRecord,
  type ApproveRequest,
  type DenyRequest,
  type PendingApproval,
  type RecordedDecision,
} from '../contracts/approvals';
import {
  approvalTimedOutReason,
  type ApprovalOutcome,
  type GuardrailDecision,
} from '../contracts/guardrails';
import type { ToolCall } from '../contracts/messages';
import { approvalStep, type SubagentApprovalStep } from '../contracts/steps';
import { truncateHeadTail } from '../contracts/text';
import { holderName, tellParent } from './held-for-a-person';
import { recordApprovalWait } from './metrics';
import { nowIso as now, PendingItems, refusal as refused } from './pending-items';

export interface ApprovalsOptions {
  agentName: string;
  /** The lead run's id (the approve command names it) and its workflow id (refs count from it). */
  runId: string;
  leadWorkflowId: string;
  /** How long a call waits for a decision (`guardrails.approval_timeout_seconds`); absent: 3,600 s. */
  timeoutSeconds?: number;
  /** The agent's count of calls held so far (its loop state, carried across continue-as-new). */
  counter: { approvals_asked?: number };
  /** Whether this agent's delegation `taskId` has ended (its waiting calls are then gone). */
  delegationEnded?: (taskId: string) => boolean;
  /** Shows what the agent is doing in the Web UI's current details, with the commands that move it on. */
  showDoing?: (doing: string, commands?: { label: string; command: string }[]) => void;
  /** Records a decision in the agent's step log, where it keeps one. */
  recordStep?: (step: Omit<SubagentApprovalStep, 'seq'>) => void;
}

/** A decision request of either kind, as the validators check it. */
type DecisionRequest = { kind: 'approve'; request: ApproveRequest } | { kind: 'deny'; request: DenyRequest };

function pendingOf(record: ApprovalRecord): PendingApproval {
  const { state: _state, by: _by, note: _note, closed_at: _closed, ...pending } = record;
  return pending;
}

/** Why a decision request cannot be taken as it is (no approver, empty reason, too long), or undefined. */
export function decisionRequestProblem(decision: DecisionRequest): string | undefined {
  const { request } = decision;
  if (typeof request !== 'object' || request === null) return 'the decision is not an object';
  const id = request.approval_id;
  if (id !== undefined && (typeof id !== 'string' || id.trim() === '')) return 'the call id is empty';
  return (
    approverProblem(request.by) ??
    (decision.kind === 'approve'
      ? noteProblem(decision.request.note)
      : denyReasonProblem(decision.request.reason))
  );
}

export class Approvals {
  /** This execution's own held calls and its subagents' still open. */
  private readonly items: PendingItems<ApprovalRecord, PendingApproval>;

  constructor(private readonly options: ApprovalsOptions) {
    this.items = new PendingItems({
      prefix: 'a',
      heldBefore: options.counter.approvals_asked ?? 0,
      ...(options.delegationEnded && { delegationEnded: options.delegationEnded }),
      pendingOf,
    });
  }

  /** The Updates that decide, and children's notices. Registering changes no history: safe for any run. */
  register(): void {
    setHandler(approveToolCallUpdate, (request) => this.decide({ kind: 'approve', request }), {
      validator: (request) => void this.check({ kind: 'approve', request }),
    });
    setHandler(denyToolCallUpdate, (request) => this.decide({ kind: 'deny', request }), {
      validator: (request) => void this.check({ kind: 'deny', request }),
    });
    setHandler(approvalNoticeSignal, (notice) => this.hear(notice));
  }

  get timeoutSeconds(): number {
    return this.options.timeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS;
  }

  /** Every call of this agent and its subagents waiting for a decision, oldest first. */
  pending(): PendingApproval[] {
    return this.items.pending();
  }

  /**
   * Holds `call` until a person decides or the timeout passes: the loop runs it when `approved`, else gives the
   * model the outcome's `note` as the reason. Throws when the agent is cancelled or its wall clock runs out.
   */
  async ask(call: ToolCall, decision: GuardrailDecision): Promise<ApprovalOutcome> {
    const { counter } = this.options;
    counter.approvals_asked = (counter.approvals_asked ?? 0) + 1;
    const id = `a${counter.approvals_asked}`;
    const { workflowId } = workflowInfo();
    const askedAt = new Date();
    const timeoutSeconds = this.timeoutSeconds;
    const args = approvalArgsLine(call.args);
    const record: ApprovalRecord = {
      ref: approvalRef(this.options.leadWorkflowId, workflowId, id),
      id,
      workflow_id: workflowId,
      asked_by: this.options.agentName,
      tool: call.name,
      args,
      call_id: call.id,
      reason: truncateHeadTail(decision.reason, 1000),
      policy_id: decision.policy_id,
      asked_at: askedAt.toISOString(),
      expires_at: new Date(askedAt.getTime() + timeoutSeconds * 1000).toISOString(),
      timeout_seconds: timeoutSeconds,
      state: 'pending',
    };
    this.items.add(record);
    this.notifyParent({ state: 'asked', approval: (({ ref: _ref, ...asked }) => asked)(pendingOf(record)) });
    this.show();
    try {
      await condition(() => record.state !== 'pending', timeoutSeconds * 1000, {
        summary: approvalTimerSummary(call.name, args),
      });
    } catch (err) {
      // Cancelled, or the agent's wall clock ran out: the call closes with the agent, unrun.
      if (record.state === 'pending') this.close(record, 'cancelled');
      throw err;
    }
    // The decision, when one came in the same task as the timer: a decision made is never lost.
    if (record.state === 'pending') this.close(record, 'timed_out');
    else this.closed(record);
    this.show(Approvals.endLine(record));
    return this.outcomeOf(record);
  }

  private outcomeOf(record: ApprovalRecord): ApprovalOutcome {
    const at = record.closed_at ?? now();
    if (record.state === 'approved' || record.state === 'denied') {
      return {
        approved: record.state === 'approved',
        how: record.state,
        ...(record.by !== undefined && { by: record.by }),
        at,
        ...(record.note !== undefined && { note: record.note }),
      };
    }
    return { approved: false, how: 'timed_out', at, note: approvalTimedOutReason(record.timeout_seconds) };
  }

  /**
   * The Web UI's current details: the oldest call of its own still waiting with its two commands, else the
   * oldest of its subagents' (a subagent waits for a person), else how the last one ended (`last`).
   */
  private show(last?: string): void {
    const show = this.options.showDoing;
    if (!show) return;
    const own = this.items.open();
    const waiting = own[0] ?? this.pending()[0];
    if (waiting) {
      const ref = own.length > 1 || waiting.ref.includes('/') ? waiting.ref : undefined;
      const whose = own.length > 0 ? '' : `a subagent (${waiting.asked_by}) waits for a person: `;
      show(
        `${whose}waiting for approval of ${waiting.ref}: ${waiting.tool} ${waiting.args} (${waiting.reason})`,
        [
          { label: 'Approve with', command: approveCommandLine(this.options.runId, ref) },
          { label: 'Deny with', command: denyCommandLine(this.options.runId, ref) },
        ],
      );
    } else if (last !== undefined) {
      show(last);
    }
  }

  /** How `record` ended, in the current details. */
  private static endLine(record: ApprovalRecord): string {
    const by = record.by !== undefined ? ` by ${record.by}` : '';
    const end = record.state === 'timed_out' ? 'timed out (denied)' : `${record.state}${by}`;
    return `${record.ref} ${end}${record.state === 'approved' ? `: running ${record.tool}` : ''}`;
  }

  private close(record: ApprovalRecord, end: 'timed_out' | 'cancelled'): void {
    record.state = end;
    record.closed_at = now();
    this.closed(record);
  }

  /** A held call ended: measured, logged in the step log, and the parent told. */
  private closed(record: ApprovalRecord): void {
    if (record.state === 'pending') return;
    recordApprovalWait(
      record.tool,
      record.state,
      Date.parse(record.closed_at ?? now()) - Date.parse(record.asked_at),
    );
    if (record.state !== 'cancelled') {
      const note =
        record.state === 'timed_out' ? approvalTimedOutReason(record.timeout_seconds) : record.note;
      this.options.recordStep?.(
        approvalStep({
          ...record,
          decision: record.state,
          at: record.closed_at ?? now(),
          ...(note !== undefined && { note }),
        }),
      );
    }
    this.notifyParent({ state: 'closed', workflow_id: record.workflow_id, id: record.id, end: record.state });
  }

  /** The refusal for `decision`, thrown (the Updates' validators), or the call it decides. */
  private check(decision: DecisionRequest): ApprovalRecord {
    const problem = decisionRequestProblem(decision);
    if (problem !== undefined) throw refused(APPROVAL_REFUSALS.invalid, problem);
    const id = decision.request.approval_id;
    const found = this.items.lookup(id);
    switch (found.kind) {
      case 'found':
        break;
      case 'ambiguous':
        throw refused(
          APPROVAL_REFUSALS.ambiguous,
          `${found.open.length} calls wait for a decision (${found.open.map((r) => `${r.ref}: ${r.tool} ${r.args}`).join('; ')}): ` +
            'name one with --call',
        );
      case 'not_waiting':
        throw refused(APPROVAL_REFUSALS.notWaiting, this.notWaitingText());
      case 'closed_before':
        throw refused(
          APPROVAL_REFUSALS.closed,
          `call ${id} of ${holderName(this.options)} is closed (held before the run continued as new)`,
        );
      case 'unknown':
        throw refused(
          APPROVAL_REFUSALS.unknown,
          `${holderName(this.options)} has no call ${JSON.stringify(id)} held for approval (its calls: ${found.known.join(', ') || 'none'})`,
        );
    }
    const { record } = found;
    switch (record.state) {
      case 'pending':
        return record;
      case 'approved':
      case 'denied':
        throw refused(
          APPROVAL_REFUSALS.closed,
          `call ${record.ref} (${record.tool}) was already ${record.state} by ${record.by} at ${record.closed_at}; ` +
            'a call is decided once',
        );
      case 'timed_out':
        throw refused(
          APPROVAL_REFUSALS.closed,
          `call ${record.ref} (${record.tool}) timed out at ${record.closed_at} (no decision within ` +
            `${record.timeout_seconds} s) and was denied; the run went on without it`,
        );
      case 'cancelled':
        throw refused(
          APPROVAL_REFUSALS.closed,
          `call ${record.ref} (${record.tool}) was closed at ${record.closed_at}: its agent was cancelled or ran ` +
            'out of time',
        );
    }
  }

  private notWaitingText(): string {
    const base = `${holderName(this.options)} is not waiting for a decision`;
    const children = this.items.pendingChildren();
    if (children.length === 0) return `${base} (no tool call of it is held for approval)`;
    return `${base}; its subagents' are: ${children.map((a) => a.ref).join(', ')} (name one with --call)`;
  }

  /** An Update's handler: records the decision; the waiting call wakes in the same workflow task. */
  private decide(decision: DecisionRequest): RecordedDecision {
    const record = this.check(decision);
    const { request } = decision;
    record.state = decision.kind === 'approve' ? 'approved' : 'denied';
    record.by = request.by.trim();
    const note = decision.kind === 'approve' ? decision.request.note : decision.request.reason.trim();
    if (note !== undefined && note.trim() !== '') record.note = note;
    record.closed_at = now();
    return {
      ref: record.ref,
      approval_id: record.id,
      workflow_id: record.workflow_id,
      asked_by: record.asked_by,
      tool: record.tool,
      args: record.args,
      tool_call_id: record.call_id,
      policy_id: record.policy_id,
      decision: record.state,
      by: record.by,
      at: record.closed_at,
      ...(record.note !== undefined && { note: record.note }),
    };
  }

  /** A subagent's held call opened or closed: kept for `pending()`, and passed up. */
  private hear(notice: ApprovalNotice): void {
    if (notice.state === 'asked') {
      const { approval } = notice;
      this.items.childAsked({
        ...approval,
        ref: approvalRef(this.options.leadWorkflowId, approval.workflow_id, approval.id),
      });
    } else {
      const closed = this.items.childClosed(notice.workflow_id, notice.id);
      if (closed)
        this.show(`${closed.ref} ${notice.end === 'timed_out' ? 'timed out (denied)' : notice.end}`);
    }
    if (notice.state === 'asked') this.show();
    this.notifyParent(notice);
  }

  /** Passes a notice up to the workflow that started this one (workflows/held-for-a-person.ts). */
  private notifyParent(notice: ApprovalNotice): void {
    tellParent(approvalNoticeSignal, notice, this.options.leadWorkflowId);
  }
}
