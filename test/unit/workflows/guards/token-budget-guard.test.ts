import { tokenBudgetGuard } from '../../../../workflows/guards';
import { drive, guardInput, TOKEN_BUDGET } from './fixtures';

const seedBudget = tokenBudgetGuard(TOKEN_BUDGET);

describe('tokenBudgetGuard', () => {
  it('adds one budget note at the warn threshold, saying how much is used and asking to wrap up', () => {
    const [before, at] = drive(seedBudget, [
      guardInput({ totalTokens: 1_399_999 }),
      guardInput({ totalTokens: 1_400_000 }),
    ]);
    expect(before).toEqual({});
    expect(at.stop).toBeUndefined();
    expect(at.note).toBe(
      '[TOKEN BUDGET WARNING] You have used 1,400,000 of your 2,000,000-token budget (70%). Wrap up: finish ' +
        'the step you are on and give your final answer; start new tool calls only if the answer cannot do ' +
        'without them. The run is stopped at 100% of the budget.',
    );
  });

  it('warns exactly once per run however many turns stay above the threshold', () => {
    const verdicts = drive(
      seedBudget,
      [1_500_000, 1_600_000, 1_700_000, 1_999_999].map((totalTokens) => guardInput({ totalTokens })),
    );
    expect(verdicts.filter((verdict) => verdict.note !== undefined)).toHaveLength(1);
    expect(verdicts[0].note).toContain('1,500,000 of your 2,000,000-token budget (75%)');
    expect(verdicts.some((verdict) => verdict.stop !== undefined)).toBe(false);
  });

  it('stops with token_capped at the hard threshold and not one token before', () => {
    const [before, at] = drive(seedBudget, [
      guardInput({ totalTokens: 1_999_999 }),
      guardInput({ totalTokens: 2_000_000 }),
    ]);
    expect(before.stop).toBeUndefined();
    expect(at).toEqual({ stop: 'token_capped' });
  });

  it('meets a decimal threshold exactly where floating-point products would miss it', () => {
    // 0.7 * 100 is 70.00000000000001 in binary floating point: 70 tokens must still warn.
    const [verdict] = drive(tokenBudgetGuard({ ...TOKEN_BUDGET, max_tokens: 100 }), [
      guardInput({ totalTokens: 70 }),
    ]);
    expect(verdict.note).toContain('70 of your 100-token budget (70%)');
  });

  it('uses the configured thresholds', () => {
    const settings = { max_tokens: 1000, warn_threshold: 0.5, hard_threshold: 0.9 };
    const verdicts = drive(
      tokenBudgetGuard({ ...TOKEN_BUDGET, ...settings }),
      [499, 500, 899, 900].map((totalTokens) => guardInput({ totalTokens })),
    );
    expect(verdicts.map((verdict) => [verdict.note !== undefined, verdict.stop])).toEqual([
      [false, undefined],
      [true, undefined],
      [false, undefined],
      [false, 'token_capped'],
    ]);
    expect(verdicts[1].note).toContain('The run is stopped at 90% of the budget.');
  });

  it('does nothing when disabled', () => {
    const verdicts = drive(
      tokenBudgetGuard({ ...TOKEN_BUDGET, enabled: false }),
      [1_500_000, 5_000_000].map((totalTokens) => guardInput({ totalTokens })),
    );
    expect(verdicts).toEqual([{}, {}]);
  });
});
