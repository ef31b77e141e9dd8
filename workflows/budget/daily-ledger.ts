/**
 * A user's daily ledger as a plain class (the entity workflow `budget/<user_id>` only wires its signal and query
 * to it): each run's spend recorded once by run id, the latest report of a run kept (reports are cumulative, so a
 * retried, replayed or late one counts once), days older than yesterday dropped, a very busy day's oldest runs
 * folded into one sum so the state stays bounded across continue-as-new.
 */
import { addSpend, ZERO_SPEND, type Spend } from '../../contracts/budget';
import type { DailyLedgerState, DailySpendReport, DayRecord } from '../../contracts/daily-budget';

/** The most runs a day lists by id; past it the oldest are summed without their ids. */
export const DAILY_RUNS_LISTED = 1000;

/** The days kept: the latest one reported and the one before it (a run admitted before midnight reports late). */
const DAYS_KEPT = 2;

export class DailyLedger {
  readonly state: DailyLedgerState;

  constructor(state?: DailyLedgerState) {
    this.state = state ?? { days: {} };
  }

  /** A run's report: its spend for its day replaces what it reported before, unless it is older. */
  record(report: DailySpendReport): void {
    const day = (this.state.days[report.day] ??= { runs: {}, folded: { ...ZERO_SPEND }, folded_runs: 0 });
    const before = day.runs[report.run_id];
    if (before && !spentMore(report.spent, before.spent)) return;
    day.runs[report.run_id] = { spent: report.spent, at: before?.at ?? report.at };
    foldOldest(day);
    this.dropOldDays();
  }

  private dropOldDays(): void {
    const days = Object.keys(this.state.days).sort();
    for (const old of days.slice(0, Math.max(0, days.length - DAYS_KEPT))) delete this.state.days[old];
  }
}

/** A later cumulative report spent more than an earlier one (an equal one changes nothing). */
function spentMore(after: Spend, before: Spend): boolean {
  if (after.total_tokens !== before.total_tokens) return after.total_tokens > before.total_tokens;
  return after.cost_usd > before.cost_usd;
}

/** Past the listed maximum, the oldest runs of the day go into its folded sum. */
function foldOldest(day: DayRecord): void {
  const ids = Object.keys(day.runs);
  if (ids.length <= DAILY_RUNS_LISTED) return;
  const oldest = ids
    .sort((a, b) => (day.runs[a]?.at ?? '').localeCompare(day.runs[b]?.at ?? ''))
    .slice(0, ids.length - DAILY_RUNS_LISTED);
  for (const id of oldest) {
    const run = day.runs[id];
    if (!run) continue;
    day.folded = addSpend(day.folded, run.spent);
    day.folded_runs += 1;
    delete day.runs[id];
  }
}
