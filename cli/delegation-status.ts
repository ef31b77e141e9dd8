/**
 * `subagents status` of an id that is not a lead run: a subagent's (or a batch item's) own status, a batch's
 * counts; open ones through their queries (a worker needed), closed ones from their result, returned or
 * carried by their failure, read without a worker.
 */
import { UsageError } from './flags';
import { pendingApprovalLines } from './approvals';
import { batchStatusQuery, type BatchResult, type BatchStatus } from '../contracts/batch';
import { subagentProgressQuery, type SubagentProgress } from '../contracts/queries';
import type { SubagentResult } from '../contracts/subagent';
import { closedOutcome, insteadLines, kindText, notALeadRunMessage, type IdKind } from '../client/id-kinds';
import type { OtherKind } from './inspect-commands';
import { batchCountsText, outcomeLine } from './outcome-lines';

/** `status --json` of a subagent, a batch item or a batch. */
export interface DelegationStatus {
  workflow_id: string;
  kind: 'subagent' | 'batch_item' | 'batch';
  /** What it is, in words (`a subagent of run …`). */
  is: string;
  lead_run_id?: string;
  batch_id?: string;
  state: 'open' | 'finished';
  /** Temporal's status of the execution (RUNNING, COMPLETED, FAILED, CANCELED, TERMINATED, TIMED_OUT). */
  execution_status: string;
  /** An open subagent's progress (its query). */
  progress?: SubagentProgress;
  /** An open batch's counts (its query, no items). */
  batch?: Omit<BatchStatus, 'items'>;
  /** A closed one's result: a SubagentResult, or a batch's BatchResult. */
  result?: SubagentResult | BatchResult;
  /** What ended it, when it returned no result. */
  error?: string;
  /** Commands that read more of it. */
  see: string[];
  ui_url?: string;
}

const isSubagentResult = (value: object) => 'status' in value && 'turns' in value;
/** Whether a closed batch's result (or a failure's detail) is a BatchResult. */
export const isBatchResult = (value: object) => 'batch_id' in value && 'counts' in value;

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
  return [
    head,
    // Decided on the lead run (its Updates pass the decision down), by the ref the lead knows the call by.
    ...(held.length > 0
      ? [
          `${id} waits for a person: ${held.length} tool ${held.length === 1 ? 'call' : 'calls'} held for approval`,
          ...pendingApprovalLines(status.lead_run_id ?? id, held),
        ]
      : []),
    ...(status.error && !head.includes(status.error) ? [`error: ${status.error}`] : []),
    `${id} is ${status.is}; ${status.see.join('; ')}`,
    ...(status.ui_url ? [`Web UI: ${status.ui_url}`] : []),
  ];
}

/** `status`'s answer for a subagent, a batch item or a batch; any other kind is named (exit 2). */
export const delegationStatus: OtherKind = async (identified, { client, values, uiUrl, ask }) => {
  const { kind, description } = identified;
  if (!description || (kind.kind !== 'subagent' && kind.kind !== 'batch_item' && kind.kind !== 'batch'))
    throw new UsageError(notALeadRunMessage('status', kind));
  const handle = client.workflow.getHandle(kind.id);
  const executionStatus = description.status.name;
  const open = executionStatus === 'RUNNING' || executionStatus === 'CONTINUED_AS_NEW';
  const status: DelegationStatus = {
    workflow_id: kind.id,
    kind: kind.kind,
    is: kindText(kind),
    ...leadAndBatch(kind),
    state: open ? 'open' : 'finished',
    execution_status: executionStatus,
    see: insteadLines('status', kind).filter((line) => !line.startsWith('its status:')),
    ...(uiUrl && { ui_url: uiUrl }),
  };
  if (kind.kind === 'batch') {
    if (open) {
      const { items: _items, ...counts } = await ask(`batch ${kind.id}`, description.taskQueue, () =>
        handle.query(batchStatusQuery, { limit: 0 }),
      );
      status.batch = counts;
    } else {
      const closed = await closedOutcome<BatchResult>(handle, executionStatus, isBatchResult);
      if (closed.result) status.result = closed.result;
      if (closed.error) status.error = closed.error;
    }
  } else if (open) {
    status.progress = await ask(`subagent ${kind.id}`, description.taskQueue, () =>
      handle.query(subagentProgressQuery),
    );
  } else {
    const closed = await closedOutcome<SubagentResult>(handle, executionStatus, isSubagentResult);
    if (closed.result) status.result = closed.result;
    else if (closed.error) status.error = closed.error;
  }
  if (values.json) process.stdout.write(`${JSON.stringify(status, null, 2)}\n`);
  else process.stdout.write(`${delegationStatusLines(status).join('\n')}\n`);
  return 0;
};

function leadAndBatch(kind: IdKind): { lead_run_id?: string; batch_id?: string } {
  if (kind.kind === 'subagent') return { lead_run_id: kind.leadId };
  if (kind.kind === 'batch') return kind.leadId === undefined ? {} : { lead_run_id: kind.leadId };
  if (kind.kind === 'batch_item')
    return { batch_id: kind.batchId, ...(kind.leadId !== undefined && { lead_run_id: kind.leadId }) };
  return {};
}
