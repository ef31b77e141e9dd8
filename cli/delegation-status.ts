/**
 * `subagents status` of an id that is not a lead run: a subagent's (or a batch item's) own status, a batch's
 * counts, as client/delegation-status.ts reads them, with the held calls a person may decide.
 */
import { UsageError } from './flags';
import { heldCallLine, pendingApprovalLines } from './approvals';
import type { BatchResult } from '../contracts/batch';
import type { SubagentProgress } from '../contracts/queries';
import type { SubagentResult } from '../contracts/subagent';
import { notALeadRunMessage } from '../client/id-kinds';
import { isDelegationKind, readDelegationStatus, type DelegationStatus } from '../client/delegation-status';
import type { OtherKind } from './inspect-commands';
import { batchCountsText, outcomeLine } from './outcome-lines';

function progressText(progress: SubagentProgress): string {
  const tokens = progress.token_usage ? `, ${progress.token_usage.total_tokens} tokens` : '';
  return `${progress.state}, ${progress.turns} ${progress.turns === 1 ? 'turn' : 'turns'}${tokens}`;
}

/** The lines `status` prints for it. */
export function delegationStatusLines(status: DelegationStatus): string[] {
  const id = status.workflow_id;
  let head: string;
  if (status.kind === 'batch') {
    const counted = status.batch ?? (status.result as BatchResult | undefined);
    const how = status.batch?.status ?? (status.result as BatchResult | undefined)?.status;
    head = counted
      ? `${id}: ${how ?? status.execution_status.toLowerCase()} · ${batchCountsText(counted)}`
      : `${id}: ${status.execution_status.toLowerCase()} without a result`;
  } else if (status.progress) {
    head = `${id}: ${progressText(status.progress)}`;
  } else if (status.result) {
    head = outcomeLine(id, status.result as SubagentResult);
  } else {
    head = `${id}: ${status.execution_status.toLowerCase()} without a result`;
  }
  const held = status.progress?.approvals ?? [];
  const waits = `${id} waits for a person: ${held.length} tool ${held.length === 1 ? 'call' : 'calls'} held for approval`;
  return [
    head,
    // Decided on the lead run (its Updates pass the decision down), by the ref the lead knows the call by. A
    // subagent's fork has no lead run, and `approve`/`deny` take only a lead's id: its calls are listed alone.
    ...(held.length > 0 && status.kind === 'subagent_fork'
      ? [
          waits,
          ...held.map(heldCallLine),
          `approve and deny do not take a fork's id yet: the calls are denied when their time runs out`,
        ]
      : held.length > 0
        ? [waits, ...pendingApprovalLines(status.lead_run_id ?? id, held)]
        : []),
    ...(status.error && !head.includes(status.error) ? [`error: ${status.error}`] : []),
    `${id} is ${status.is}; ${status.see.join('; ')}`,
    ...(status.ui_url ? [`Web UI: ${status.ui_url}`] : []),
  ];
}

/** `status`'s answer for a subagent, a batch item or a batch; any other kind is named (exit 2). */
export const delegationStatus: OtherKind = async (identified, { client, values, uiUrl, ask }) => {
  const { kind, description } = identified;
  if (!description || !isDelegationKind(kind)) throw new UsageError(notALeadRunMessage('status', kind));
  const status = await readDelegationStatus(client, kind, description, { ask, ...(uiUrl && { uiUrl }) });
  if (values.json) process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
  else process.stdout.write(`${delegationStatusLines(status).join('\n')}\n`);
  return 0;
};
