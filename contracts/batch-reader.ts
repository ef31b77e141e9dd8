/**
 * A batch read from outside it through a Temporal client: a page of its status (a query), and an item's
 * outcome with its last attempt's answer (read from that child, whichever way it closed). The client's
 * BatchHandle and the lead's batch tools both read a batch this way: here, the floor both reach (activities/
 * cannot import client/), with the client's types only.
 */
import type { Client } from '@temporalio/client';
import { batchStatusQuery, type BatchItemView, type BatchStatus } from './batch';
import { workflowResult } from './closing';
import type { TokenUsage } from './messages';
import type { SubagentStopReason } from './status';
import type { SubagentResult } from './subagent';

/** One line of `batch results`: an item's outcome, its last attempt's answer. */
export interface BatchItemResult {
  key: string;
  status: 'completed' | 'failed' | 'cancelled' | 'pending' | 'waiting' | 'running';
  stop_reason?: SubagentStopReason;
  result?: string;
  error?: string;
  attempts: number;
  token_usage?: TokenUsage;
  accepted?: boolean;
}

/** Counts, and a page of items in item order (at most BATCH_STATUS_PAGE_MAX). */
export function readBatchStatus(
  client: Client,
  workflowId: string,
  page: { offset?: number; limit?: number } = {},
): Promise<BatchStatus> {
  return client.workflow.getHandle(workflowId).query(batchStatusQuery, page);
}

/** One item's outcome: for a finished item, its last attempt's answer, read from that child. */
export async function readBatchItemResult(client: Client, view: BatchItemView): Promise<BatchItemResult> {
  const base: BatchItemResult = {
    key: view.key,
    status: view.state,
    attempts: view.attempts,
    ...(view.stop_reason && { stop_reason: view.stop_reason }),
    ...(view.error !== undefined && { error: view.error }),
    ...(view.accepted !== undefined && { accepted: view.accepted }),
  };
  const finished = view.state === 'completed' || view.state === 'failed';
  if (!finished || view.workflow_id === undefined) return base;
  const child = await workflowResult<SubagentResult>(client.workflow.getHandle(view.workflow_id)).catch(
    (err: unknown): SubagentResult => ({
      status: 'failed',
      error: err instanceof Error ? err.message : String(err),
      turns: 0,
    }),
  );
  return {
    ...base,
    ...(child.result !== undefined && { result: child.result }),
    ...(base.error === undefined && child.error !== undefined && { error: child.error }),
    ...(child.token_usage && { token_usage: child.token_usage }),
  };
}
