/**
 * The per-user daily budget (issue 45): `budgets: {per_user: {daily_tokens, daily_usd}}`, over every run of a
 * user in one UTC day, on every worker. One durable ledger per user, the entity workflow `budget/<user_id>`
 * (workflows/budget/daily-workflow.ts), records each run's spend once, by run id; a lead run asks it before its
 * first model call whether its user's day has room, and runs under a tree budget capped at the day's remainder.
 *
 * Pure: the wire shapes, the day arithmetic, the admission decision and its words. No Node APIs.
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import { z } from 'zod';
import {
  addSpend,
  DEFAULT_TREE_BUDGET,
  roundUsd,
  ZERO_SPEND,
  type Spend,
  type TreeBudgetSettings,
} from './budget';
import { groupThousands } from './text';

/** A UTC day as the ledger keys it: `2026-12-07`. */
export const UTC_DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The run's daily budget as its scope carries it (resolved from `budgets.per_user`; absent when neither limit is
 * set). `day` is written by the lead once admitted: the UTC day its spend counts against, kept across
 * continue-as-new, so a continued execution is not asked again.
 */
export function dailyBudgetSchema() {
  return z.strictObject({
    /** Input + output tokens of all the user's runs in one UTC day. */
    daily_tokens: z.number().int().positive().optional(),
    /** USD of all the user's runs in one UTC day, priced by `models[].pricing`. */
    daily_usd: z.number().positive().optional(),
    /** The UTC day the run was admitted on (set by the lead). */
    day: z.string().regex(UTC_DAY_PATTERN).optional(),
  });
}
export type DailyBudgetSettings = z.output<ReturnType<typeof dailyBudgetSchema>>;

/** The limits alone (what the config says). */
export type DailyLimits = Pick<DailyBudgetSettings, 'daily_tokens' | 'daily_usd'>;

/** The entity workflow's type, as an activity starts it by name. */
export const DAILY_BUDGET_WORKFLOW_TYPE = 'dailyBudgetWorkflow';

/** One ledger per user: `budget/<user_id>` (a user id is a safe folder name, so a safe workflow id). */
export function dailyBudgetWorkflowId(userId: string): string {
  return `budget/${userId}`;
}

/** A run's spend so far, as it reports it: cumulative, so a repeated or late report counts once. */
export interface DailySpendReport {
  day: string;
  run_id: string;
  spent: Spend;
  /** When the run reported (ISO). */
  at: string;
}

/** One run of the day, as the ledger keeps it. */
export interface DailyRun {
  spent: Spend;
  at: string;
}

/** One UTC day of a user's spend. */
export interface DayRecord {
  runs: Record<string, DailyRun>;
  /** The oldest runs of a very busy day, summed once there were too many to list (their ids dropped). */
  folded: Spend;
  folded_runs: number;
}

/** The ledger's state: the latest days it keeps (today and yesterday), carried across continue-as-new. */
export interface DailyLedgerState {
  days: Record<string, DayRecord>;
}

export interface DailyBudgetWorkflowInput {
  user_id: string;
  /** The previous execution's ledger, when this one continues it. */
  state?: DailyLedgerState;
}

export const dailySpendSignal = defineSignal<[DailySpendReport]>('daily_budget_spend');
export const dailyLedgerQuery = defineQuery<DailyLedgerState>('daily_budget_ledger');

/** The UTC day of an instant. */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** When `day` ends and the next one's budget starts: the next UTC midnight (ISO). */
export function dayResetsAt(day: string): string {
  const start = Date.parse(`${day}T00:00:00.000Z`);
  return new Date(start + 86_400_000).toISOString();
}

/** What a day's runs have spent, the folded ones included. */
export function daySpend(record: DayRecord | undefined): Spend {
  if (!record) return { ...ZERO_SPEND };
  return Object.values(record.runs).reduce((sum, run) => addSpend(sum, run.spent), record.folded);
}

/** What is left of the day, per limit set (never below 0). */
export interface DailyRemaining {
  tokens?: number;
  usd?: number;
}

export function dailyRemaining(limits: DailyLimits, spent: Spend): DailyRemaining {
  return {
    ...(limits.daily_tokens !== undefined && {
      tokens: Math.max(0, limits.daily_tokens - spent.total_tokens),
    }),
    ...(limits.daily_usd !== undefined && { usd: Math.max(0, roundUsd(limits.daily_usd - spent.cost_usd)) }),
  };
}

/** A lead run's answer from its user's ledger. */
export type DailyAdmission =
  | { admitted: true; day: string; remaining: DailyRemaining }
  | { admitted: false; day: string; error: string };

/**
 * Whether `userId`'s day has room for one more run: refused once any limit is spent, the message naming the
 * budget, the spend and when it resets.
 */
export function dailyAdmission(
  userId: string,
  limits: DailyLimits,
  day: string,
  spent: Spend,
): DailyAdmission {
  const remaining = dailyRemaining(limits, spent);
  const resets = `it resets at ${dayResetsAt(day)} (next UTC midnight)`;
  if (remaining.tokens === 0) {
    const error =
      `daily budget of user ${userId} is spent: budgets.per_user.daily_tokens ${groupThousands(limits.daily_tokens ?? 0)}, ` +
      `spent ${groupThousands(spent.total_tokens)} on ${day} (UTC); ${resets}`;
    return { admitted: false, day, error };
  }
  if (remaining.usd === 0) {
    const error =
      `daily budget of user ${userId} is spent: budgets.per_user.daily_usd ${limits.daily_usd ?? 0}, ` +
      `spent ${spent.cost_usd} USD on ${day} (UTC); ${resets}`;
    return { admitted: false, day, error };
  }
  return { admitted: true, day, remaining };
}

/**
 * The run's tree budget under the day's remainder: the run's own (if any) with each limit lowered to what the day
 * has left, so one run cannot spend past its user's day; the tree's machinery then stops it live.
 */
export function cappedTreeBudget(
  tree: TreeBudgetSettings | undefined,
  remaining: DailyRemaining,
): TreeBudgetSettings {
  const lower = (own: number | undefined, day: number | undefined) =>
    own === undefined ? day : day === undefined ? own : Math.min(own, day);
  const maxTokens = lower(tree?.max_tokens, remaining.tokens);
  const maxUsd = lower(tree?.max_cost_usd, remaining.usd);
  return {
    ...tree,
    ...(maxTokens !== undefined && { max_tokens: maxTokens }),
    ...(maxUsd !== undefined && { max_cost_usd: maxUsd }),
    warn_threshold: tree?.warn_threshold ?? DEFAULT_TREE_BUDGET.warn_threshold,
    hard_stop_threshold: tree?.hard_stop_threshold ?? DEFAULT_TREE_BUDGET.hard_stop_threshold,
  };
}

/** What `subagents budget --user U` shows: the day's spend, the limits, what is left, the reset, the runs. */
export interface DailyBudgetView {
  user_id: string;
  day: string;
  limits: DailyLimits;
  spent: Spend;
  remaining: DailyRemaining;
  resets_at: string;
  runs: Array<{ run_id: string } & DailyRun>;
  /** Runs of a very busy day summed without their ids. */
  folded_runs?: number;
}

/** The view of `day` from a ledger's state (none: nothing spent). */
export function dailyBudgetView(
  userId: string,
  limits: DailyLimits,
  day: string,
  state: DailyLedgerState | undefined,
): DailyBudgetView {
  const record = state?.days[day];
  const spent = daySpend(record);
  const runs = Object.entries(record?.runs ?? {})
    .map(([runId, run]) => ({ run_id: runId, ...run }))
    .sort((a, b) => a.at.localeCompare(b.at));
  return {
    user_id: userId,
    day,
    limits,
    spent,
    remaining: dailyRemaining(limits, spent),
    resets_at: dayResetsAt(day),
    runs,
    ...(record && record.folded_runs > 0 && { folded_runs: record.folded_runs }),
  };
}
