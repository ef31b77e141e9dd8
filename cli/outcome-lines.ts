/**
 * One line for how a delegation ended: a subagent's outcome, a batch's counts. `status` prints them, and so do
 * `steps`, `report` and `batch`; apart from those commands so that `status` loads none of them.
 */
import type { BatchStatus } from '../contracts/batch';
import type { SubagentResult } from '../contracts/subagent';

/** How the subagent ended, in one line. */
export function outcomeLine(workflowId: string, result: SubagentResult): string {
  const capped = result.stop_reason ? ` (${result.stop_reason})` : '';
  const error = result.error ? `: ${result.error.split('\n')[0]}` : '';
  return `${workflowId}: ${result.status}${capped} after ${result.turns} ${result.turns === 1 ? 'turn' : 'turns'}${error}`;
}

/** A batch's counts in one line: done of total, running, queued, failed, cancelled. */
export function batchCountsText(status: Pick<BatchStatus, 'total' | 'counts'>): string {
  const { completed, running, waiting, pending, failed, cancelled } = status.counts;
  return [
    `${completed}/${status.total} done`,
    `${running} running`,
    `${waiting + pending} queued`,
    `${failed} failed`,
    ...(cancelled > 0 ? [`${cancelled} cancelled`] : []),
  ].join(' · ');
}
