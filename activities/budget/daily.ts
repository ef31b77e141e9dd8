/**
 * The per-user daily budget from outside the workflow sandbox, through the worker's own client: a lead run asks
 * its user's ledger (`budget/<user_id>`, a query) whether the day has room, and reports its spend to it when it
 * ends (signal-with-start, so whichever host reports first starts the ledger). Both are safe to retry: the query
 * changes nothing, and a report is the run's cumulative spend, recorded by run id.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { ADMISSION_WORKFLOW_TASK_TIMEOUT } from '../../contracts/admission';
import type { Spend } from '../../contracts/budget';
import {
  DAILY_BUDGET_WORKFLOW_TYPE,
  dailyAdmission,
  dailyBudgetWorkflowId,
  dailyLedgerQuery,
  dailySpendSignal,
  daySpend,
  utcDay,
  type DailyAdmission,
  type DailyLedgerState,
  type DailyLimits,
} from '../../contracts/daily-budget';

/** The user's ledger as it stands; none yet (or ended after a quiet day): nothing recorded. */
export async function readDailyLedger(client: Client, userId: string): Promise<DailyLedgerState | undefined> {
  try {
    return await client.workflow.getHandle(dailyBudgetWorkflowId(userId)).query(dailyLedgerQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

export interface DailyAdmissionRequest {
  user_id: string;
  limits: DailyLimits;
}

export interface DailySpendRequest {
  user_id: string;
  run_id: string;
  day: string;
  spent: Spend;
}

/** Reports a run's cumulative spend to its user's ledger, starting the ledger when there is none. */
export async function reportDailySpend(
  client: Client,
  taskQueue: string,
  request: DailySpendRequest,
): Promise<void> {
  await client.workflow.signalWithStart(DAILY_BUDGET_WORKFLOW_TYPE, {
    workflowId: dailyBudgetWorkflowId(request.user_id),
    taskQueue,
    args: [{ user_id: request.user_id }],
    signal: dailySpendSignal,
    signalArgs: [
      { day: request.day, run_id: request.run_id, spent: request.spent, at: new Date().toISOString() },
    ],
    workflowTaskTimeout: ADMISSION_WORKFLOW_TASK_TIMEOUT,
    staticSummary: `Daily budget of user ${request.user_id}`,
    staticDetails: 'Each run of the user reports its spend here; `subagents budget --user` reads it.',
  });
}

export function createDailyBudgetActivities() {
  return {
    /** Whether the user's day (UTC, now) has room for one more run, and how much. */
    async admitDailyBudget(request: DailyAdmissionRequest): Promise<DailyAdmission> {
      const day = utcDay(Date.now());
      const state = await readDailyLedger(Context.current().client, request.user_id);
      return dailyAdmission(request.user_id, request.limits, day, daySpend(state?.days[day]));
    },
    /** The run's spend on the day it was admitted, recorded once by run id. */
    async recordDailySpend(request: DailySpendRequest): Promise<void> {
      const context = Context.current();
      await reportDailySpend(context.client, context.info.taskQueue, request);
    },
  };
}

export type DailyBudgetActivities = ReturnType<typeof createDailyBudgetActivities>;
