/**
 * Tool calls a run holds for approval (a guardrail's `ask`) as the CLI prints them: in `status` and in the
 * live tree of `subagents run`. One line for the call (its arguments on one line) and why it is held, one for
 * each command that decides it.
 */
import { approveCommandLine, denyCommandLine, type PendingApproval } from '../contracts/approvals';
import { oneLine } from './questions';

/** `a1 (lead): bash rm -rf build/ — deletes files (rules[0])` */
export function approvalText(approval: PendingApproval): string {
  return (
    `${approval.ref} (${oneLine(approval.asked_by)}): ${oneLine(approval.tool)} ${oneLine(approval.args)} — ` +
    `${oneLine(approval.reason)} (${oneLine(approval.policy_id)})`
  );
}

/** The line of a held call that says what it is and when it is denied undecided. */
export function heldCallLine(approval: PendingApproval): string {
  return `approval ${approvalText(approval)}; denied at ${approval.expires_at} if undecided`;
}

/**
 * The three lines of a held call: what it is, and the two commands that decide it (`--call` only when the run
 * holds more than one, or the call is a subagent's).
 */
export function approvalLines(
  runId: string,
  approval: PendingApproval,
  several: boolean,
  flags?: string,
): string[] {
  const ref = several || approval.ref.includes('/') ? approval.ref : undefined;
  return [
    heldCallLine(approval),
    `  approve: ${approveCommandLine(runId, ref, flags)}`,
    `  deny:    ${denyCommandLine(runId, ref, flags)}`,
  ];
}

/** Every held call's lines. */
export function pendingApprovalLines(
  runId: string,
  approvals: readonly PendingApproval[] = [],
  flags?: string,
): string[] {
  return approvals.flatMap((approval) => approvalLines(runId, approval, approvals.length > 1, flags));
}
