/**
 * What a workflow of a run other than its lead says of itself: a subagent's (or a batch item's) own status, a
 * batch's counts. Open ones answer through their queries (a worker needed), closed ones from their result,
 * returned or carried by their failure, read without a worker. `subagents status <id>` renders it.
 */
import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { batchStatusQuery, type BatchResult, type BatchStatus } from '../contracts/batch';
import { subagentProgressQuery, type SubagentProgress } from '../contracts/queries';
import type { SubagentResult } from '../contracts/subagent';
import { FORK_WORKFLOW_TYPES } from '../contracts/run-fork';
import { closedOutcome, insteadLines, kindText, type IdKind } from './id-kinds';

/** The status of a subagent, a batch item or a batch (`status --json` of one). */
export interface DelegationStatus {
  workflow_id: string;
  kind: 'subagent' | 'subagent_fork' | 'batch_item' | 'batch';
  /** What it is, in words (`a subagent of run …`). */
  is: string;
  lead_run_id?: string;
  batch_id?: string;
  /** A subagent's fork: the subagent it was forked from. */
  forked_from?: string;
  state: 'open' | 'finished';
  /** Temporal's status of the execution (RUNNING, COMPLETED, FAILED, CANCELED, TERMINATED, TIMED_OUT). */
  execution_status: string;
  /** An open subagent's progress (its query), the calls it holds for a person among it. */
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

/** The ids DelegationStatus is about. */
export type DelegationKind = Extract<IdKind, { kind: 'subagent' | 'subagent_fork' | 'batch_item' | 'batch' }>;

export function isDelegationKind(kind: IdKind): kind is DelegationKind {
  return (
    kind.kind === 'subagent' ||
    kind.kind === 'subagent_fork' ||
    kind.kind === 'batch_item' ||
    kind.kind === 'batch'
  );
}

/**
 * How a query of an open workflow is asked; `what` names it (`subagent X`). A command passes one that gives up
 * when no worker answers (client/worker-liveness.ts); the default asks and waits.
 */
export type QueryAsker = <T>(what: string, taskQueue: string, read: () => Promise<T>) => Promise<T>;

export const askAndWait: QueryAsker = (_what, _taskQueue, read) => read();

const isSubagentResult = (value: object) => 'status' in value && 'turns' in value;
/** Whether a closed batch's result (or a failure's detail) is a BatchResult. */
export const isBatchResult = (value: object) => 'batch_id' in value && 'counts' in value;

/** Whether Temporal's status of an execution means it is open (continued as new: for the moment the next starts). */
export const isOpen = (executionStatus: string) =>
  executionStatus === 'RUNNING' || executionStatus === 'CONTINUED_AS_NEW';

/** The status of the subagent, batch item or batch `kind` names, `description` the server's of it. */
export async function readDelegationStatus(
  client: Client,
  kind: DelegationKind,
  description: WorkflowExecutionDescription,
  options: { ask?: QueryAsker; uiUrl?: string } = {},
): Promise<DelegationStatus> {
  const ask = options.ask ?? askAndWait;
  const handle = client.workflow.getHandle(kind.id);
  const executionStatus = description.status.name;
  const open = isOpen(executionStatus);
  const status: DelegationStatus = {
    workflow_id: kind.id,
    kind: kind.kind,
    is: kindText(kind),
    ...leadAndBatch(kind),
    state: open ? 'open' : 'finished',
    execution_status: executionStatus,
    see: insteadLines('status', kind).filter((line) => !line.startsWith('its status:')),
    ...(options.uiUrl && { ui_url: options.uiUrl }),
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
  } else if (open && description.type === FORK_WORKFLOW_TYPES.subagent) {
    // A fork's first execution reads the original's state, then goes on as the subagent that answers this.
    status.progress = { state: 'queued', turns: 0, last_seq: 0 };
  } else if (open) {
    status.progress = await ask(`subagent ${kind.id}`, description.taskQueue, () =>
      handle.query(subagentProgressQuery),
    );
  } else {
    const closed = await closedOutcome<SubagentResult>(handle, executionStatus, isSubagentResult);
    if (closed.result) status.result = closed.result;
    else if (closed.error) status.error = closed.error;
  }
  return status;
}

function leadAndBatch(kind: DelegationKind): {
  lead_run_id?: string;
  batch_id?: string;
  forked_from?: string;
} {
  if (kind.kind === 'subagent') return { lead_run_id: kind.leadId };
  if (kind.kind === 'subagent_fork') return { forked_from: kind.forkedFrom };
  if (kind.kind === 'batch') return kind.leadId === undefined ? {} : { lead_run_id: kind.leadId };
  return { batch_id: kind.batchId, ...(kind.leadId !== undefined && { lead_run_id: kind.leadId }) };
}
