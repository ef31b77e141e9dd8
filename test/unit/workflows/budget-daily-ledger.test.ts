import type { Spend } from '../../../contracts/budget';
import { dailyBudgetView, daySpend } from '../../../contracts/daily-budget';
import { DAILY_RUNS_LISTED, DailyLedger } from '../../../workflows/budget/daily-ledger';

const spend = (tokens: number, usd = 0): Spend => ({
  input_tokens: tokens,
  output_tokens: 0,
  total_tokens: tokens,
  cost_usd: usd,
});
const DAY = '2026-12-07';
const report = (runId: string, tokens: number, day = DAY, at = `${day}T10:00:00.000Z`) => ({
  day,
  run_id: runId,
  spent: spend(tokens, tokens / 1000),
  at,
});

describe('DailyLedger: one user, each run counted once', () => {
  it('sums the runs of a day', () => {
    const ledger = new DailyLedger();
    ledger.record(report('r1', 500));
    ledger.record(report('r2', 700));
    expect(daySpend(ledger.state.days[DAY])).toEqual({
      input_tokens: 1200,
      output_tokens: 0,
      total_tokens: 1200,
      cost_usd: 1.2,
    });
  });

  it('counts a repeated, retried or late report of a run once, keeping its largest cumulative spend', () => {
    const ledger = new DailyLedger();
    ledger.record(report('r1', 500));
    ledger.record(report('r1', 500));
    ledger.record(report('r1', 900));
    ledger.record(report('r1', 300));
    expect(daySpend(ledger.state.days[DAY]).total_tokens).toBe(900);
    expect(dailyBudgetView('alice', {}, DAY, ledger.state).runs.map((run) => run.run_id)).toEqual(['r1']);
  });

  it('keeps today and yesterday only: a late report of yesterday lands in yesterday, older days go', () => {
    const ledger = new DailyLedger();
    ledger.record(report('a', 100, '2026-12-05'));
    ledger.record(report('b', 200, '2026-12-06'));
    ledger.record(report('c', 300, DAY));
    ledger.record(report('d', 50, '2026-12-06'));
    expect(Object.keys(ledger.state.days).sort()).toEqual(['2026-12-06', DAY]);
    expect(daySpend(ledger.state.days['2026-12-06']).total_tokens).toBe(250);
    expect(daySpend(ledger.state.days[DAY]).total_tokens).toBe(300);
  });

  it('stays bounded on a very busy day: the oldest runs are summed, the total unchanged', () => {
    const ledger = new DailyLedger();
    const runs = DAILY_RUNS_LISTED + 5;
    for (let i = 0; i < runs; i += 1) {
      const at = new Date(Date.parse(`${DAY}T00:00:00.000Z`) + i * 1000).toISOString();
      ledger.record(report(`run-${i}`, 10, DAY, at));
    }
    const day = ledger.state.days[DAY];
    expect(Object.keys(day?.runs ?? {})).toHaveLength(DAILY_RUNS_LISTED);
    expect(day?.folded_runs).toBe(5);
    expect(day?.runs['run-0']).toBeUndefined();
    expect(daySpend(day).total_tokens).toBe(runs * 10);
  });
});
