/**
 * A user's day under the per-user daily budget, read from the user's ledger (`budget/<user_id>`, a query: a
 * worker of its task queue answers it). No ledger yet, or one ended after a quiet day: nothing spent today.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  dailyBudgetView,
  dailyBudgetWorkflowId,
  dailyLedgerQuery,
  utcDay,
  type DailyBudgetView,
  type DailyLedgerState,
  type DailyLimits,
} from '../contracts/daily-budget';

/** `userId`'s spend on the UTC day of `nowMs`, against `limits` (the config's `budgets.per_user`). */
export async function readDailyBudget(
  client: Client,
  userId: string,
  limits: DailyLimits,
  nowMs: number = Date.now(),
): Promise<DailyBudgetView> {
  let state: DailyLedgerState | undefined;
  try {
    state = await client.workflow.getHandle(dailyBudgetWorkflowId(userId)).query(dailyLedgerQuery);
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  return dailyBudgetView(userId, limits, utcDay(nowMs), state);
}
