/**
 * Deciding a tool call a run holds for approval (a guardrail's `ask`): the Update goes to the workflow that
 * holds the call (the lead, or one of its subagents, found through the lead's status), and a refusal comes
 * back as an ApprovalRefusedError in the user's terms. `RunHandle.approve` / `.deny` are built on it.
 */
import { type WorkflowClient } from '@temporalio/client';
import {
  approvalTarget,
  APPROVAL_REFUSALS,
  approverProblem,
  approveToolCallUpdate,
  denyReasonProblem,
  denyToolCallUpdate,
  isApprovalUsageMistake,
  noteProblem,
  type ApprovalRefusal,
  type PendingApproval,
  type RecordedDecision,
} from '../contracts/approvals';
import { updateFailure } from './update-refusals';

/**
 * A decision the run refused, or could not be given: the message says why and what would be accepted. `kind`
 * tells a mistake in the request (invalid, unknown, ambiguous) from the run's state (not waiting, closed).
 */
export class ApprovalRefusedError extends Error {
  override name = 'ApprovalRefusedError';

  constructor(
    message: string,
    readonly kind: ApprovalRefusal,
  ) {
    super(message);
  }

  /** A mistake the user can fix in the request itself. */
  get isUsageMistake(): boolean {
    return isApprovalUsageMistake(this.kind);
  }
}

const REFUSAL_KINDS: readonly string[] = Object.values(APPROVAL_REFUSALS);

/** What deciding needs of the run: its ids, its client, and the calls it holds now. */
export interface DecisionTarget {
  runId: string;
  leadWorkflowId: string;
  client: WorkflowClient;
  pending(): Promise<PendingApproval[]>;
}

export type Decision = { kind: 'approve'; note?: string } | { kind: 'deny'; reason: string };

/** `ref` is shaped as a call's name in a run: `a1`, or `<delegation id>/a1` for a subagent's. */
const REF_SHAPE = /^([A-Za-z0-9_.:-]+\/)*[A-Za-z0-9_.:-]+$/;

/** One line per waiting call: `a1 (lead): bash rm -rf build/`. */
export function pendingApprovalList(approvals: readonly PendingApproval[]): string {
  return approvals.map((a) => `${a.ref} (${a.asked_by}): ${a.tool} ${a.args}`).join('; ');
}

/**
 * Where a decision goes: the call `ref` names, else the one call waiting. Refused (ApprovalRefusedError) when
 * `ref` is not a call's name or several calls wait and none is named. None waiting: the lead, which says so.
 */
export async function decisionTarget(
  run: DecisionTarget,
  ref: string | undefined,
): Promise<{ workflowId: string; id?: string }> {
  if (ref !== undefined) {
    const trimmed = ref.trim();
    if (!REF_SHAPE.test(trimmed)) {
      throw new ApprovalRefusedError(
        `--call ${JSON.stringify(ref)} is not a held call of a run (e.g. a1, or call_1/a1 for a subagent's)`,
        APPROVAL_REFUSALS.unknown,
      );
    }
    return refTarget(run, trimmed);
  }
  const waiting = await run.pending();
  if (waiting.length > 1) {
    throw new ApprovalRefusedError(
      `run ${run.runId} holds ${waiting.length} calls for approval (${pendingApprovalList(waiting)}): ` +
        'name one with --call',
      APPROVAL_REFUSALS.ambiguous,
    );
  }
  return waiting.length === 1
    ? { workflowId: waiting[0].workflow_id, id: waiting[0].id }
    : { workflowId: run.leadWorkflowId };
}

/**
 * Where a named call is. A ref as `status` shows it (`a1`, `call_1/a1`) goes where it names; a bare id the lead
 * does not hold (`a1`, as the Web UI shows a subagent's call on the subagent's own page) goes to the one
 * subagent waiting with that id. Several such: refused, each listed.
 */
async function refTarget(run: DecisionTarget, ref: string): Promise<{ workflowId: string; id: string }> {
  const named = approvalTarget(run.leadWorkflowId, ref);
  if (ref.includes('/')) return named;
  const waiting = await run.pending().catch(() => []);
  if (waiting.some((a) => a.ref === ref)) return named;
  const held = waiting.filter((a) => a.id === ref);
  if (held.length === 1) return { workflowId: held[0].workflow_id, id: held[0].id };
  if (held.length > 1) {
    throw new ApprovalRefusedError(
      `--call ${ref}: ${held.length} subagents of run ${run.runId} hold a call ${ref} ` +
        `(${pendingApprovalList(held)}): name one as status shows it`,
      APPROVAL_REFUSALS.ambiguous,
    );
  }
  return named;
}

/** The run's held calls, for a refusal of a call it does not hold: `; the run's held calls: …`. */
async function withHeldCalls(run: DecisionTarget, err: Error): Promise<Error> {
  if (!(err instanceof ApprovalRefusedError) || err.kind !== APPROVAL_REFUSALS.unknown) return err;
  const waiting = await run.pending().catch(() => undefined);
  if (waiting === undefined) return err;
  const list = waiting.length === 0 ? 'none' : pendingApprovalList(waiting);
  return new ApprovalRefusedError(`${err.message}; run ${run.runId} holds: ${list}`, err.kind);
}

/** Why the decision cannot be sent as it is, or undefined. */
function decisionProblem(decision: Decision, by: string): string | undefined {
  return (
    approverProblem(by) ??
    (decision.kind === 'approve' ? noteProblem(decision.note) : denyReasonProblem(decision.reason))
  );
}

/** Sends the decision to the workflow holding the call, and returns what it recorded. */
export async function decide(
  run: DecisionTarget,
  ref: string | undefined,
  decision: Decision,
  by: string,
): Promise<RecordedDecision> {
  const problem = decisionProblem(decision, by);
  if (problem !== undefined) throw new ApprovalRefusedError(problem, APPROVAL_REFUSALS.invalid);
  const target = await decisionTarget(run, ref);
  const handle = run.client.getHandle(target.workflowId);
  const id = target.id !== undefined ? { approval_id: target.id } : {};
  try {
    return decision.kind === 'approve'
      ? await handle.executeUpdate(approveToolCallUpdate, {
          args: [{ ...id, by, ...(decision.note !== undefined && { note: decision.note }) }],
        })
      : await handle.executeUpdate(denyToolCallUpdate, { args: [{ ...id, by, reason: decision.reason }] });
  } catch (err) {
    throw await withHeldCalls(run, await decisionFailure(run, err, target.workflowId, ref));
  }
}

/** Why a decision did not land, in the user's terms. */
function decisionFailure(
  run: DecisionTarget,
  err: unknown,
  workflowId: string,
  ref: string | undefined,
): Promise<Error> {
  return updateFailure(err, {
    client: run.client,
    runId: run.runId,
    leadWorkflowId: run.leadWorkflowId,
    workflowId,
    subagentName: `the subagent that holds ${ref}`,
    ref,
    awaited: 'a decision',
    refusals: REFUSAL_KINDS,
    notWaiting: APPROVAL_REFUSALS.notWaiting,
    unknown: APPROVAL_REFUSALS.unknown,
    refused: (message, kind: ApprovalRefusal) => new ApprovalRefusedError(message, kind),
  });
}
