/**
 * `dailyBudgetWorkflow`: one user's daily ledger (id `budget/<user_id>`), the entity every run of that user, on
 * every worker, reports its spend to (signal-with-start from an activity, so any host may be first) and a lead run
 * reads before its first model call (a query, from an activity). The decisions are `DailyLedger`'s; this wires the
 * signal and the query to it, continues as new to keep its history bounded, and ends after a quiet day (the next
 * report starts it anew: only today's spend is ever asked for).
 */
import { condition, continueAsNew, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  dailyLedgerQuery,
  dailySpendSignal,
  type DailyBudgetWorkflowInput,
} from '../../contracts/daily-budget';
import { historyWantsContinueAsNew } from '../continue-as-new';
import { DailyLedger } from './daily-ledger';

/** Reports heard by one execution before it continues as new (each costs a handful of events). */
export const DAILY_REPORTS_PER_EXECUTION = 500;

/** A ledger that hears nothing for this long ends: the last day it recorded is over. */
const QUIET_BEFORE_END = '25 hours';

export async function dailyBudgetWorkflow(input: DailyBudgetWorkflowInput): Promise<void> {
  const ledger = new DailyLedger(input.state);
  let heard = 0;
  setHandler(dailySpendSignal, (report) => {
    ledger.record(report);
    heard += 1;
  });
  setHandler(dailyLedgerQuery, () => ledger.state);
  for (;;) {
    const before = heard;
    if (!(await condition(() => heard !== before, QUIET_BEFORE_END))) return;
    if (heard >= DAILY_REPORTS_PER_EXECUTION || historyWantsContinueAsNew(workflowInfo())) {
      // Signal handlers are synchronous: what was heard is in the ledger already.
      await continueAsNew<typeof dailyBudgetWorkflow>({ user_id: input.user_id, state: ledger.state });
    }
  }
}
