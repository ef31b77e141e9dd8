/**
 * The lead's side of the per-user daily budget: before its first model call (before its slot, too) a run whose
 * scope carries `daily_budget` asks its user's ledger whether the day has room. Refused: the run ends at once,
 * failed, its error naming the budget, the spend and the reset. Admitted: it runs under a tree budget capped at
 * the day's remainder, and its scope keeps the day, so a continued execution is not asked again. When it ends it
 * reports what its tree spent. A run without `daily_budget` schedules nothing here: recorded histories replay
 * unchanged, and the default pays nothing.
 */
import { CancellationScope, proxyActivities } from '@temporalio/workflow';
import type { DailyBudgetActivities } from '../../activities/budget/daily';
import type { TreeBudgetCarry } from '../../contracts/budget';
import { cappedTreeBudget } from '../../contracts/daily-budget';
import type { RunScope } from '../../contracts/run-scope';
import { DEFAULT_USER_ID } from '../../contracts/user';
import { treeBudgetReport } from './tree-ledger';

const { admitDailyBudget, recordDailySpend } = proxyActivities<DailyBudgetActivities>({
  // One query or one signal-with-start; a busy server or worker is waited for, not failed.
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

/**
 * Asks the user's ledger, when the run has a daily budget and has not been admitted on a day yet: the day's
 * refusal, or undefined with the scope settled. In place: the run's context, its delegator (what its children's
 * scopes come from) and its next execution's input all hold this one scope object.
 */
export async function admitToday(scope: RunScope): Promise<string | undefined> {
  const daily = scope.daily_budget;
  if (!daily || daily.day !== undefined) return undefined;
  const { day: _unset, ...limits } = daily;
  const answer = await admitDailyBudget({ user_id: scope.user_id ?? DEFAULT_USER_ID, limits });
  if (!answer.admitted) return answer.error;
  scope.daily_budget = { ...daily, day: answer.day };
  scope.tree_budget = cappedTreeBudget(scope.tree_budget, answer.remaining);
  return undefined;
}

/** The run's last report: what its whole tree spent, on the day it was admitted (whatever ended it). */
export async function reportToday(
  scope: RunScope,
  runId: string,
  tree: TreeBudgetCarry | undefined,
): Promise<void> {
  const day = scope.daily_budget?.day;
  const spent = treeBudgetReport(tree).tree_budget?.spent;
  if (day === undefined || !spent) return;
  const request = { user_id: scope.user_id ?? DEFAULT_USER_ID, run_id: runId, day, spent };
  // A cancelled run's spend counts too.
  await CancellationScope.nonCancellable(() => recordDailySpend(request));
}
