/**
 * What the lead's batch tools need from outside the workflow sandbox: a workspace items file read and checked
 * (`batch_task … items_file`), and a batch's status or answers read through the worker's own client (a
 * workflow cannot query another). Each answer carries the text its model reads, bounded.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Context } from '@temporalio/activity';
import {
  type BatchItemsFileAnswer,
  type BatchItemsFileRequest,
  type BatchItemView,
  type BatchPageAnswer,
  type BatchPageRequest,
  type BatchStatus,
} from '../contracts/batch';
import { parseBatchItemsJsonl } from '../contracts/batch-items';
import { groupThousands, truncateHeadTail } from '../contracts/text';
import { readBatchItemResult, readBatchStatus, type BatchItemResult } from '../contracts/batch-reader';
import { readHead, workspaceContext } from './acceptance';
import { fileError } from './tools/file-errors';
import { ToolError } from './tools/tool-context';
import { openInWorkspace, resolveInWorkspace } from './tools/workspace';
import { oneProcessWorkspaces, withWorkspaceOutcome, type WorkspaceHost } from './workspace/host';

/** The largest items file read (JSON Lines): 5,000 items of a few kilobytes each fit well. */
export const MAX_ITEMS_FILE_BYTES = 64 * 1024 * 1024;

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

async function loadBatchItemsFile(request: BatchItemsFileRequest): Promise<BatchItemsFileAnswer> {
  const ctx = await workspaceContext(request.workspace, new AbortController().signal);
  const name = JSON.stringify(request.path);
  if (ctx === undefined)
    return { problems: [`items_file: the workspace ${request.workspace} does not exist`] };
  let handle: FileHandle | undefined;
  try {
    const target = resolveInWorkspace(ctx, 'items_file', request.path);
    handle = await openInWorkspace(target, (at) => open(at, READ_FLAGS));
    const stats = await handle.stat();
    if (!stats.isFile()) return { problems: [`items_file: ${name} is not a regular file`] };
    if (stats.size > MAX_ITEMS_FILE_BYTES) {
      return {
        problems: [
          `items_file: ${name} is ${groupThousands(stats.size)} bytes, above the ` +
            `${groupThousands(MAX_ITEMS_FILE_BYTES)} an items file may have`,
        ],
      };
    }
    const text = (await readHead(handle, stats.size)).toString('utf8');
    const { items, problems } = parseBatchItemsJsonl(text, request.path);
    if (problems.length === 0 && items.length > request.max_items) {
      problems.push(
        `${request.path}: ${groupThousands(items.length)} items, above the ${groupThousands(request.max_items)} ` +
          'a batch may hold (subagents.batch.max_items)',
      );
    }
    return problems.length > 0 ? { problems } : { items };
  } catch (err) {
    const refusal =
      err instanceof ToolError
        ? err
        : fileError(err, { tool: 'items_file', requested: request.path }, 'reading');
    if (refusal instanceof ToolError) return { problems: [`items_file: ${refusal.message}`] };
    throw refusal;
  } finally {
    await handle?.close();
  }
}

/** `completed 12 · failed 1 · running 3 …`: the states that have items, in a fixed order. */
function countsLine(status: BatchStatus): string {
  const order = ['completed', 'failed', 'cancelled', 'running', 'waiting', 'pending'] as const;
  return order
    .filter((state) => status.counts[state] > 0)
    .map((state) => `${state} ${status.counts[state]}`)
    .join(' · ');
}

function headLine(request: BatchPageRequest, status: BatchStatus): string {
  return (
    `Batch ${request.batch_id} is ${status.status}: ${status.total} ${status.subagent_type} items ` +
    `"${status.description}" — ${countsLine(status)}. Attempts ${status.counters.attempts}` +
    (status.counters.requeued > 0 ? `, ${status.counters.requeued} requeued at admission` : '') +
    '.'
  );
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function itemLine(view: BatchItemView): string {
  const attempts = view.attempts > 1 ? ` after ${view.attempts} attempts` : '';
  const verdict = view.accepted === undefined ? '' : view.accepted ? ', accepted' : ', not accepted';
  const capped = view.stop_reason ? `, ${view.stop_reason}` : '';
  const error = view.error !== undefined ? `: ${truncateHeadTail(oneLine(view.error), 300)}` : '';
  return `- ${view.key}: ${view.state}${attempts}${capped}${verdict}${error}`;
}

function pageNote(request: BatchPageRequest, status: BatchStatus, shown: number): string {
  if (shown === 0) return `No items from offset ${request.offset} (the batch has ${status.total}).`;
  const last = request.offset + shown;
  const more = last < status.total ? ` Next page: offset ${last}.` : '';
  return `Items ${request.offset + 1}–${last} of ${status.total}:${more}`;
}

function answer(status: BatchStatus, text: string): BatchPageAnswer {
  return { text, status: status.status, total: status.total, counts: status.counts };
}

async function describeBatchPage(request: BatchPageRequest): Promise<BatchPageAnswer> {
  const page = { offset: request.offset, limit: request.limit };
  const status = await readBatchStatus(Context.current().client, request.workflow_id, page);
  const lines = [headLine(request, status), pageNote(request, status, status.items.length)];
  lines.push(...status.items.map(itemLine));
  return answer(status, lines.join('\n'));
}

function resultBlock(result: BatchItemResult, chars: number): string {
  const verdict = result.accepted === undefined ? '' : result.accepted ? ', accepted' : ', not accepted';
  const head = `## ${result.key}: ${result.status} (attempts ${result.attempts}${verdict})`;
  const parts = [head];
  if (result.result !== undefined) parts.push(truncateHeadTail(result.result, Math.max(100, chars)));
  if (result.error !== undefined) parts.push(`Error: ${truncateHeadTail(oneLine(result.error), 500)}`);
  if (result.status !== 'completed' && result.status !== 'failed' && result.result === undefined) {
    parts.push(result.status === 'cancelled' ? '(cancelled: no answer)' : '(not finished yet)');
  }
  return parts.join('\n');
}

async function readBatchResultsPage(request: BatchPageRequest): Promise<BatchPageAnswer> {
  const { client } = Context.current();
  const page = { offset: request.offset, limit: request.limit };
  const status = await readBatchStatus(client, request.workflow_id, page);
  const results = await Promise.all(status.items.map((view) => readBatchItemResult(client, view)));
  const budget = request.max_chars ?? 8000;
  // Each answer gets an equal share of the budget, so one long answer cannot crowd out the rest.
  const share = Math.floor(budget / Math.max(1, results.length)) - 80;
  const lines = [headLine(request, status), pageNote(request, status, results.length)];
  lines.push(...results.map((result) => resultBlock(result, share)));
  return answer(status, truncateHeadTail(lines.join('\n\n'), budget + 600));
}

/** The batch tools' activities of a worker (through its own client). */
export function createBatchToolActivities(workspaces: WorkspaceHost = oneProcessWorkspaces()) {
  return {
    /** A workspace JSON Lines items file, checked as `subagents batch start --items` checks one. */
    loadBatchItemsFile: async (request: BatchItemsFileRequest): Promise<BatchItemsFileAnswer> => {
      const { placement } = request;
      if (placement === undefined) return loadBatchItemsFile(request);
      return withWorkspaceOutcome(
        await workspaces.serve(placement, request.workspace, false, () => loadBatchItemsFile(request)),
      );
    },
    /** Counts and a page of items, as text for the model. */
    describeBatchPage,
    /** A page of answers (each item's last attempt, from its child), as text for the model. */
    readBatchResultsPage,
  };
}

export type BatchToolActivities = ReturnType<typeof createBatchToolActivities>;
