/**
 * Durable batches: many independent items, each analysed by its own subagent (`batchWorkflow`). The batch asks
 * the task queue's admission for each item's slot itself and starts the item's child holding it, so
 * `max_running_items` bounds the children executing and `max_live_items` the items started or waiting for a
 * slot. An item refused at admission goes back to the queue without spending an attempt; an item that ran and
 * failed (or failed its acceptance criteria) is retried after backoff, never while an earlier attempt is open.
 * The batch's own state is counters and one compact record per item; results stay in the items' histories.
 * Pure: the workflow bundle imports this file.
 */
import type { WorkspaceRequest } from './workspace';
import { defineQuery } from '@temporalio/workflow';
import { BATCH_ITEM_STATES, BATCH_STATUSES, type SubagentStopReason } from './status';

/** One item: its key (unique in the batch, part of its children's ids) and what its subagent is asked. */
export type { BatchItem } from './batch-items';
import type { TreeBudgetReport, TreeLedgerState } from './budget';
import type { BatchItem } from './batch-items';
import type { BatchLimits } from './input-schemas';

export type { BatchLimits, BatchToolSettings } from './input-schemas';

export const DEFAULT_BATCH_LIMITS: BatchLimits = {
  max_running_items: 3,
  max_live_items: 6,
  max_attempts: 2,
  retry_backoff_seconds: 5,
};

/**
 * A batch's input, defined by its schema (contracts/input-schemas.ts): its agent, its items, how it runs them,
 * and the run's scope each item carries. Checked by the client before it starts (contracts/inputs.ts).
 */
export type { BatchInput } from './input-schemas';

/** Where an item stands. `waiting`: its slot was asked for (queued at admission, or granted and not started). */
export type BatchItemState = (typeof BATCH_ITEM_STATES)[number];
export const BATCH_TERMINAL_STATES: readonly BatchItemState[] = ['completed', 'failed', 'cancelled'];

/** What the batch keeps of each item between executions: compact, whatever the result's size. */
export interface BatchItemRecord {
  state: 'pending' | 'completed' | 'failed' | 'cancelled';
  /** Attempts spent (runs that started and ended). The last one's child holds the result. */
  attempts: number;
  /** Admission refusals (no attempt spent). */
  refusals?: number;
  stop_reason?: SubagentStopReason;
  /** ≤ 300 characters. */
  error?: string;
  /** The acceptance verdict of the last attempt, when the item had criteria. */
  accepted?: boolean;
  /** When it may be asked for again (epoch ms; a retry's backoff). */
  not_before?: number;
}

export interface BatchCounters {
  completed: number;
  failed: number;
  cancelled: number;
  /** Attempts started across all items. */
  attempts: number;
  /** Admission refusals, each put back in the queue. */
  requeued: number;
}

export interface BatchCarry {
  records: BatchItemRecord[];
  counters: BatchCounters;
  continued: number;
  started_at: string;
  /** A batch that is its tree's root (no lead run above it): its tree budget's ledger. */
  tree_budget?: TreeLedgerState;
}

export type BatchStatusName = (typeof BATCH_STATUSES)[number];

export interface BatchItemView {
  key: string;
  state: BatchItemState;
  attempts: number;
  /** The child of its last (or current) attempt, when one started. */
  workflow_id?: string;
  stop_reason?: SubagentStopReason;
  error?: string;
  accepted?: boolean;
}

export interface BatchStatus {
  batch_id: string;
  status: BatchStatusName;
  description: string;
  subagent_type: string;
  total: number;
  counts: Record<BatchItemState, number>;
  counters: BatchCounters;
  limits: BatchLimits;
  started_at: string;
  /** The page asked for (`offset`, at most `limit` items, in item order). */
  items: BatchItemView[];
}

export interface BatchResult {
  batch_id: string;
  status: 'completed' | 'cancelled';
  total: number;
  counts: Record<BatchItemState, number>;
  counters: BatchCounters;
  /** A batch that is its tree's root, with a tree budget: its items' spend, and whether the budget stopped it. */
  tree_budget?: TreeBudgetReport;
}

/** Items a status page holds at most. */
export const BATCH_STATUS_PAGE_MAX = 200;

export const batchStatusQuery = defineQuery<BatchStatus, [page?: { offset?: number; limit?: number }]>(
  'batch_status',
);

/** The child of one attempt of one item. */
export function batchItemWorkflowId(batchId: string, key: string, attempt: number): string {
  return `${batchId}/item/${key}/${attempt}`;
}

// ---------------------------------------------------------------------------------------------------------
// Batches a lead run starts (`batch_task`)

/** Items one batch may hold unless the config says otherwise (`subagents.batch.max_items`). */
export const DEFAULT_BATCH_MAX_ITEMS = 10_000;

/** The lead's batch tools, offered only when the config enables batches (`subagents.batch.enabled`). */
export const BATCH_TASK_TOOL_NAME = 'batch_task';
export const BATCH_STATUS_TOOL_NAME = 'batch_status';
export const READ_BATCH_RESULT_TOOL_NAME = 'read_batch_result';
export const CANCEL_BATCH_TOOL_NAME = 'cancel_batch';
export const BATCH_TOOL_NAMES = [
  BATCH_TASK_TOOL_NAME,
  BATCH_STATUS_TOOL_NAME,
  READ_BATCH_RESULT_TOOL_NAME,
  CANCEL_BATCH_TOOL_NAME,
] as const;
export type BatchToolName = (typeof BATCH_TOOL_NAMES)[number];

export function isBatchToolName(name: string): name is BatchToolName {
  return (BATCH_TOOL_NAMES as readonly string[]).includes(name);
}

/** The batch a lead run's `batch_task` call starts: one id per call, so a retried call never starts two. */
export function leadBatchWorkflowId(leadWorkflowId: string, id: string): string {
  return `${leadWorkflowId}/batch/${id}`;
}

/** A workspace JSON Lines file of items, read for `batch_task` by an activity (workflows read no files). */
export interface BatchItemsFileRequest {
  workspace: string;
  /** Where the workspace lives (contracts/workspace.ts); absent: a run from before placements. */
  placement?: WorkspaceRequest;
  /** Relative to the workspace. */
  path: string;
  max_items: number;
}

export type BatchItemsFileAnswer = { items: BatchItem[] } | { problems: string[] };

/** A page of a batch for the lead's model: its status (`batch_status`) or its answers (`read_batch_result`). */
export interface BatchPageRequest {
  /** The batch's workflow id. */
  workflow_id: string;
  /** The id the model knows it by (the ledger entry's). */
  batch_id: string;
  offset: number;
  limit: number;
  /** `read_batch_result`: the most characters of answers in the page. */
  max_chars?: number;
}

export interface BatchPageAnswer {
  /** What the model reads. */
  text: string;
  status: BatchStatusName;
  total: number;
  counts: Record<BatchItemState, number>;
}
