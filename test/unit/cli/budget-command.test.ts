import { renderDailyBudget } from '../../../cli/budget-command';
import { dailyBudgetView } from '../../../contracts/daily-budget';

const DAY = '2026-12-07';

describe('subagents budget: the day as a person reads it', () => {
  it('shows the spend, the limits, what is left, the reset and each run that spent', () => {
    const state = {
      days: {
        [DAY]: {
          runs: {
            'run-b': {
              spent: { input_tokens: 900, output_tokens: 200, total_tokens: 1100, cost_usd: 0.0012 },
              at: `${DAY}T09:30:00.000Z`,
            },
          },
          folded: { input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0 },
          folded_runs: 0,
        },
      },
    };
    expect(renderDailyBudget(dailyBudgetView('alice', { daily_tokens: 1000 }, DAY, state))).toEqual([
      'user alice, 2026-12-07 (UTC), resets at 2026-12-08T00:00:00.000Z',
      'spent      1,100 tokens, 0.0012 USD',
      'limits     daily_tokens 1,000 tokens, daily_usd -',
      'remaining  0 tokens, -',
      '',
      expect.stringMatching(/^RUN ID +TOKENS +USD +REPORTED AT$/),
      expect.stringMatching(/^run-b +1,100 +0\.0012 +2026-12-07T09:30:00\.000Z$/),
    ]);
  });

  it('says when no limit is set and no run has reported', () => {
    expect(renderDailyBudget(dailyBudgetView('bob', {}, DAY, undefined))).toEqual([
      'user bob, 2026-12-07 (UTC), resets at 2026-12-08T00:00:00.000Z',
      'spent      0 tokens, 0 USD',
      'limits     daily_tokens -, daily_usd - (budgets.per_user sets none)',
      'remaining  -, -',
      '(no run has reported today)',
    ]);
  });
});
