/**
 * `subagents batch list`: recent batches (`batch start`'s, a lead's `batch_task`'s, a schedule's), newest first,
 * read from the visibility store as `subagents list` reads lead runs (cli/visibility-listing.ts). Status, user
 * and lead run come from the batch's search attributes; a closed batch's item counts from its result, read for
 * the rows shown only; a running batch's counts are its query's, which `subagents batch status` asks.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { BatchResult } from '../contracts/batch';
import { FAILED_ITEMS, LEAD_RUN_ID, SUBAGENT_STATUS, USER_ID } from '../contracts/search-attributes';
import { BATCH_STATUSES } from '../contracts/status';
import { closedOutcome, kindOf } from '../client/id-kinds';
import { connectClient } from '../client/connection';
import { loadCommandConfig, requireServer } from './command-setup';
import { isBatchResult } from '../client/delegation-status';
import { parseFlags, stringFlag, UsageError } from './flags';
import {
  ageText,
  checkedUser,
  LISTING_FLAGS,
  listExecutions,
  unreadableText,
  listingLimit,
  oneOf,
  tableLines,
  visibilityQuery,
  type VisibilityFilter,
} from './visibility-listing';

/** What `--status` accepts: a batch's `SubagentStatus` values (`failed`: it ended with failed items). */
export const BATCH_LIST_STATUSES = [...BATCH_STATUSES, 'failed'] as const;
/** Each closed batch shown costs a read of its result: fewer rows than `list` allows. */
const MAX_LIMIT = 200;
/** Results read at once. */
const READS_AT_ONCE = 8;

/** The filter the flags ask for, checked against the contract's list (and a user id against its rule). */
export function batchListFilter(status: string | undefined, user: string | undefined): VisibilityFilter {
  const checkedStatus = oneOf('status', status, BATCH_LIST_STATUSES);
  const checkedUserId = checkedUser(user);
  return {
    workflowType: 'batchWorkflow',
    ...(checkedStatus && { status: checkedStatus }),
    ...(checkedUserId !== undefined && { user: checkedUserId }),
  };
}

/** A closed batch's items by how they ended. */
export interface ListedBatchItems {
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

export interface ListedBatch {
  batch_id: string;
  /** Its `SubagentStatus`, else Temporal's execution status in lower case (`status_source` says which). */
  status: string;
  status_source: 'search_attribute' | 'execution';
  /** Temporal's status of its latest execution (RUNNING, COMPLETED, CANCELLED, TERMINATED, …). */
  execution_status: string;
  /** A closed batch's items, from its result; absent while it runs, or when `counts_unknown` says why. */
  items?: ListedBatchItems;
  /** `FailedItems`: how many items failed, once it ended with any. */
  failed_items?: number;
  /** Whose batch it is (`UserId`). */
  user_id?: string;
  /** The lead run that started it (`batch_task`); absent for one `batch start` or a schedule started. */
  lead_run_id?: string;
  started_at: string;
  closed_at?: string;
  /** Why a closed batch has no `items`: `encrypted: key <id> not held`, or how it ended without a result. */
  counts_unknown?: string;
}

/** One batch of the listing, from its visibility record (no counts yet). */
export function listedBatch(info: WorkflowExecutionInfo): ListedBatch {
  const attributes = info.typedSearchAttributes;
  const running = info.status.name === 'RUNNING';
  const reported = attributes.get(SUBAGENT_STATUS);
  // A batch ended from outside (terminated, timed out) reported no end: its attribute still says running.
  const status = reported === 'running' && !running ? undefined : reported;
  const failedItems = attributes.get(FAILED_ITEMS);
  const userId = attributes.get(USER_ID);
  const kind = kindOf(info.workflowId, 'batchWorkflow', attributes.get(LEAD_RUN_ID));
  const leadRunId = kind.kind === 'batch' ? kind.leadId : undefined;
  return {
    batch_id: info.workflowId,
    status: status ?? info.status.name.toLowerCase(),
    status_source: status === undefined ? 'execution' : 'search_attribute',
    execution_status: info.status.name,
    ...(failedItems !== undefined && { failed_items: failedItems }),
    ...(userId !== undefined && { user_id: userId }),
    ...(leadRunId !== undefined && { lead_run_id: leadRunId }),
    started_at: info.startTime.toISOString(),
    ...(info.closeTime && { closed_at: info.closeTime.toISOString() }),
  };
}

/** The batch with its counts when it is closed: read from its result, each failure kept to its own row. */
async function withCounts(client: Client, batch: ListedBatch): Promise<ListedBatch> {
  if (batch.execution_status === 'RUNNING') return batch;
  try {
    const closed = await closedOutcome<BatchResult>(
      client.workflow.getHandle(batch.batch_id),
      batch.execution_status,
      isBatchResult,
    );
    if (closed.result === undefined)
      return { ...batch, counts_unknown: closed.error ?? batch.execution_status.toLowerCase() };
    const { counts, total } = closed.result;
    return {
      ...batch,
      items: { completed: counts.completed, failed: counts.failed, cancelled: counts.cancelled, total },
    };
  } catch (err) {
    return { ...batch, counts_unknown: unreadableText(err) };
  }
}

/**
 * `done/failed/total`; `-` while it runs; `?` for what a closed batch's unread result would have said
 * (`?/2/?` when its `FailedItems` says how many failed).
 */
function itemsText(batch: ListedBatch): string {
  if (batch.items) return `${batch.items.completed}/${batch.items.failed}/${batch.items.total}`;
  if (batch.execution_status === 'RUNNING') return '-';
  return batch.failed_items === undefined ? '?' : `?/${batch.failed_items}/?`;
}

/** The listing as a table, with a line for each mark it uses. */
export function renderBatchList(batches: readonly ListedBatch[], now: number): string[] {
  if (batches.length === 0) return ['(no batches)'];
  const noted = batches.some((batch) => batch.counts_unknown !== undefined);
  const header = [
    'BATCH ID',
    'STATUS',
    'DONE/FAILED/TOTAL',
    'USER',
    'LEAD RUN',
    'AGE',
    ...(noted ? ['NOTE'] : []),
  ];
  const rows = batches.map((batch) => [
    batch.batch_id,
    batch.status_source === 'execution' ? `(${batch.status})` : batch.status,
    itemsText(batch),
    batch.user_id ?? '-',
    batch.lead_run_id ?? '-',
    ageText(now - Date.parse(batch.started_at)),
    ...(noted ? [batch.counts_unknown ?? ''] : []),
  ]);
  const lines = tableLines(header, rows, [2, 5]);
  if (batches.some((batch) => batch.execution_status === 'RUNNING'))
    lines.push('-: still running; its counts: subagents batch status <batch-id>');
  if (batches.some((batch) => batch.status_source === 'execution'))
    lines.push("(status): Temporal's execution status, for batches that reported no end of their own");
  return lines;
}

export async function batchListCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, LISTING_FLAGS, 'batch list');
  if (positionals.length > 0)
    throw new UsageError(
      `batch list: takes no arguments (${positionals.join(' ')}); filter with --status or --user`,
    );
  const filter = batchListFilter(stringFlag(values, 'status'), stringFlag(values, 'user'));
  const limit = listingLimit(values, MAX_LIMIT);
  const settings = await requireServer('batch list', loadCommandConfig(values));
  const { client, connection } = await connectClient(settings);
  try {
    const listed = (await listExecutions(client, 'batch list', visibilityQuery(filter), limit)).map(
      ({ info }) => listedBatch(info),
    );
    const batches: ListedBatch[] = [];
    for (let at = 0; at < listed.length; at += READS_AT_ONCE)
      batches.push(
        ...(await Promise.all(listed.slice(at, at + READS_AT_ONCE).map((b) => withCounts(client, b)))),
      );
    if (values.json) process.stdout.write(`${JSON.stringify(batches, null, 2)}\n`);
    else process.stdout.write(`${renderBatchList(batches, Date.now()).join('\n')}\n`);
    return 0;
  } finally {
    await connection.close();
  }
}
