/**
 * `budgets:` (this project's section; DeerFlow has none, so every key is checked strictly): `per_user`, a budget
 * over all the runs of one user in one UTC day (contracts/daily-budget.ts). Resolved into the lead's scope as
 * `daily_budget`, absent unless a limit is set.
 */
import { z } from 'zod';
import type { DailyLimits } from '../daily-budget';
import { section, wholeNumber } from './fields';
import { typeError } from './value-types';

const usd = z
  .number({ error: typeError('an amount in USD', 'more than 0') })
  .positive({ error: 'is out of range (more than 0)' });

export const budgetsSection = section('budgets', {
  per_user: section('budgets.per_user', {
    /** Input + output tokens of all a user's runs in one UTC day. */
    daily_tokens: wholeNumber(1).optional(),
    /** USD of all a user's runs in one UTC day, priced by `models[].pricing`. */
    daily_usd: usd.optional(),
  }).prefault({}),
});
export type BudgetsConfig = z.output<typeof budgetsSection>;

/** The per-user daily limits a run carries; none set: none. */
export function resolveDailyBudget(budgets: BudgetsConfig): DailyLimits | undefined {
  const { daily_tokens: tokens, daily_usd: usdLimit } = budgets.per_user;
  if (tokens === undefined && usdLimit === undefined) return undefined;
  return {
    ...(tokens !== undefined && { daily_tokens: tokens }),
    ...(usdLimit !== undefined && { daily_usd: usdLimit }),
  };
}
