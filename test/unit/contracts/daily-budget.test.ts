import { ZERO_SPEND, type Spend } from '../../../contracts/budget';
import {
  cappedTreeBudget,
  dailyAdmission,
  dailyBudgetView,
  dayResetsAt,
  utcDay,
} from '../../../contracts/daily-budget';

const spend = (tokens: number, usd = 0): Spend => ({
  input_tokens: tokens,
  output_tokens: 0,
  total_tokens: tokens,
  cost_usd: usd,
});

describe('the daily budget: days, admission and the cap it puts on a run', () => {
  it('counts UTC days and resets at the next UTC midnight', () => {
    expect(utcDay(Date.parse('2026-12-07T23:59:59.999Z'))).toBe('2026-12-07');
    expect(utcDay(Date.parse('2026-12-08T00:00:00.000Z'))).toBe('2026-12-08');
    expect(dayResetsAt('2026-12-31')).toBe('2027-01-01T00:00:00.000Z');
  });

  it('admits a run while the day has room, with what is left', () => {
    expect(
      dailyAdmission('alice', { daily_tokens: 1000, daily_usd: 1 }, '2026-12-07', spend(400, 0.25)),
    ).toEqual({
      admitted: true,
      day: '2026-12-07',
      remaining: { tokens: 600, usd: 0.75 },
    });
  });

  it('refuses once a limit is spent, naming the budget, the spend and the reset', () => {
    const tokens = dailyAdmission('alice', { daily_tokens: 1000 }, '2026-12-07', spend(1100));
    expect(tokens).toEqual({
      admitted: false,
      day: '2026-12-07',
      error:
        'daily budget of user alice is spent: budgets.per_user.daily_tokens 1,000, spent 1,100 on 2026-12-07 ' +
        '(UTC); it resets at 2026-12-08T00:00:00.000Z (next UTC midnight)',
    });
    const usd = dailyAdmission('bob', { daily_tokens: 1000, daily_usd: 0.5 }, '2026-12-07', spend(10, 0.5));
    expect(usd.admitted).toBe(false);
    expect(!usd.admitted && usd.error).toMatch(
      /^daily budget of user bob is spent: budgets\.per_user\.daily_usd 0\.5, spent 0\.5 USD/,
    );
  });

  it("caps the run's tree budget at the day's remainder, keeping the run's own lower limits", () => {
    expect(cappedTreeBudget(undefined, { tokens: 600 })).toEqual({
      max_tokens: 600,
      warn_threshold: 0.8,
      hard_stop_threshold: 1,
    });
    const own = { max_tokens: 400, max_input_tokens: 300, warn_threshold: 0.5, hard_stop_threshold: 0.9 };
    expect(cappedTreeBudget(own, { tokens: 600, usd: 0.2 })).toEqual({ ...own, max_cost_usd: 0.2 });
    expect(cappedTreeBudget({ ...own, max_tokens: 9000 }, { tokens: 600 }).max_tokens).toBe(600);
  });

  it('shows a day with nothing recorded as nothing spent, the whole budget left', () => {
    expect(dailyBudgetView('carol', { daily_tokens: 10 }, '2026-12-07', undefined)).toEqual({
      user_id: 'carol',
      day: '2026-12-07',
      limits: { daily_tokens: 10 },
      spent: ZERO_SPEND,
      remaining: { tokens: 10 },
      resets_at: '2026-12-08T00:00:00.000Z',
      runs: [],
    });
  });
});
