/**
 * Durable batches from a client: build a batch's input from the config, start it (`batch-<time>-<id>`, or the
 * id given), follow its status by pages, read its results (each item's last attempt, from that child's own
 * history: the batch keeps none of them), cancel it.
 */
import { randomUUID } from 'node:crypto';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdReusePolicy,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  BATCH_STATUS_PAGE_MAX,
  batchStatusQuery,
  type BatchInput,
  type BatchItemView,
  type BatchResult,
  type BatchStatus,
} from '../contracts/batch';
import { runSearchAttributes } from '../contracts/search-attributes';
import { explainStartFailure } from './search-attribute-errors';
import type * as workflows from '../workflows';
import { batchInputProblems, InvalidInputError } from '../contracts/inputs';
import { checkWorkspaceFolder } from './api';
import { readBatchItemResult, type BatchItemResult } from '../contracts/batch-reader';
import { workflowResult } from './results';
import { summaryLine } from '../contracts/text';

const BATCH_WORKFLOW = 'batchWorkflow' satisfies keyof typeof workflows;
type BatchWorkflow = typeof workflows.batchWorkflow;

/** A new batch id: sortable by time, unique across machines. */
export function newBatchId(now = new Date()): string {
  return `batch-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomUUID().slice(0, 8)}`;
}

// Built in contracts/ beside the lead's input; the library's callers keep asking for it here.
export { buildBatchInput, type BatchRequest } from '../contracts/config/batch-input';

export type { BatchItemResult } from '../contracts/batch-reader';

export class BatchHandle {
  constructor(
    readonly batchId: string,
    private readonly client: Client,
    private readonly handle: WorkflowHandle<BatchWorkflow>,
  ) {}

  /** The batch's result, a cancelled batch's too. */
  result(): Promise<BatchResult> {
    return workflowResult(this.handle);
  }

  /** Counts, and a page of items in item order (at most BATCH_STATUS_PAGE_MAX). */
  status(page: { offset?: number; limit?: number } = {}): Promise<BatchStatus> {
    return this.handle.query(batchStatusQuery, page);
  }

  /** Every item's state, page by page. */
  async items(): Promise<BatchItemView[]> {
    const views: BatchItemView[] = [];
    for (;;) {
      const page = await this.status({ offset: views.length, limit: BATCH_STATUS_PAGE_MAX });
      views.push(...page.items);
      if (page.items.length === 0 || views.length >= page.total) return views;
    }
  }

  /**
   * Each item's outcome in key order: a finished item's answer comes from its last attempt's child (its
   * result stays in that child's history). Items not finished yet are listed with their state.
   */
  async *results(): AsyncGenerator<BatchItemResult> {
    const views = (await this.items()).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    for (const view of views) yield await this.itemResult(view);
  }

  /** One item's outcome: for a finished item, its last attempt's answer, read from that child. */
  itemResult(view: BatchItemView): Promise<BatchItemResult> {
    return readBatchItemResult(this.client, view);
  }

  /** Cancels the running items, leaves the finished ones; the batch ends `cancelled` with its counts. */
  async cancel(): Promise<void> {
    await this.handle.cancel();
  }
}

export class BatchesClient {
  constructor(readonly client: Client) {}

  /**
   * Starts a batch (workflow id = batch id). Nothing starts when its input is refused (InvalidInputError names
   * every problem: duplicate keys, a bad criterion, …). The same id started
   * again returns the batch already there, running or finished: a retried start never runs a batch twice.
   */
  async start(input: BatchInput, options: { taskQueue: string; batchId?: string }): Promise<BatchHandle> {
    const batchId = options.batchId ?? newBatchId();
    const problems = batchInputProblems(input);
    if (problems.length > 0) throw new InvalidInputError(problems, 'The batch input is refused:');
    checkWorkspaceFolder(input.scope.workspace);
    try {
      await this.client.workflow.start<BatchWorkflow>(BATCH_WORKFLOW, {
        taskQueue: options.taskQueue,
        workflowId: batchId,
        args: [input],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        staticSummary: summaryLine(
          `batch: ${input.subagent_type}: ${input.description} (${input.items.length} items)`,
        ),
        typedSearchAttributes: runSearchAttributes(
          input.run_id ?? batchId,
          'batch',
          input.depth - 1,
          input.scope.user_id,
        ),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw explainStartFailure(err);
    }
    return this.get(batchId);
  }

  get(batchId: string): BatchHandle {
    return new BatchHandle(batchId, this.client, this.client.workflow.getHandle<BatchWorkflow>(batchId));
  }
}
