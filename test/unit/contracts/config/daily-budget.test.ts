import { ConfigError, parseConfig } from '../../../../contracts/config';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';
import { leadRunInputProblems } from '../../../../contracts/inputs';

const MODEL = { name: 'm', provider: 'scripted' };

function leadInput(raw: Record<string, unknown>) {
  const { config, warnings } = parseConfig({ models: [MODEL], ...raw });
  return { input: buildLeadRunInput(config, { prompt: 'p', workspace: '/srv/work/1' }), warnings };
}

function problemOf(raw: Record<string, unknown>): string {
  try {
    parseConfig({ models: [MODEL], ...raw });
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('the config was accepted');
}

describe('budgets.per_user: a budget per user per day', () => {
  it('reaches the lead run scope as daily_budget, and the input check accepts it', () => {
    const { input, warnings } = leadInput({
      budgets: { per_user: { daily_tokens: 50000, daily_usd: 2.5 } },
      lead: { user_id: 'alice' },
    });
    expect(warnings).toEqual([]);
    expect(input.scope).toMatchObject({
      user_id: 'alice',
      daily_budget: { daily_tokens: 50000, daily_usd: 2.5 },
    });
    expect(leadRunInputProblems(input)).toEqual([]);
  });

  it('is absent by default and when no limit is written: the run asks no ledger', () => {
    expect(leadInput({}).input.scope.daily_budget).toBeUndefined();
    expect(leadInput({ budgets: { per_user: {} } }).input.scope.daily_budget).toBeUndefined();
  });

  it('refuses unknown keys (the section is ours, DeerFlow has none) and bad values, naming them', () => {
    expect(problemOf({ budgets: { per_user: { daily_token: 5 } } })).toMatch(
      /budgets\.per_user.*daily_token/,
    );
    expect(problemOf({ budgets: { per_team: {} } })).toMatch(/budgets.*per_team/);
    expect(problemOf({ budgets: { per_user: { daily_tokens: 0 } } })).toMatch(
      /budgets\.per_user\.daily_tokens: 0/,
    );
    expect(problemOf({ budgets: { per_user: { daily_usd: -1 } } })).toMatch(
      /budgets\.per_user\.daily_usd: -1 is out of range/,
    );
  });
});
