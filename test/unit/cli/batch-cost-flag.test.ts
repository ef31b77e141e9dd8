/** `--max-cost-usd` (batch start, schedule create): the tree budget's USD limit, refused where it cannot act. */
import { withMaxCostUsd } from '../../../cli/batch-cost-flag';
import { UsageError } from '../../../cli/flags';
import { parseConfig } from '../../../contracts/config';
import { resolveTreeBudget } from '../../../contracts/config/budget';

const priced = (extra: Record<string, unknown> = {}) =>
  parseConfig({
    models: [
      {
        name: 'm',
        provider: 'scripted',
        model: 'test',
        pricing: { input_per_million: 1, output_per_million: 2 },
      },
    ],
    ...extra,
  }).config;

describe('--max-cost-usd', () => {
  it('enables the tree budget with only that limit when the config sets none', () => {
    const config = withMaxCostUsd('batch start', { 'max-cost-usd': '2.5' }, priced());
    expect(resolveTreeBudget(config.token_budget)).toEqual({
      max_cost_usd: 2.5,
      warn_threshold: 0.8,
      hard_stop_threshold: 1,
    });
  });

  it("keeps the config's other token_budget keys, and the config as it is without the flag", () => {
    const config = priced({ token_budget: { enabled: false, max_tokens: 9000, max_cost_usd: 9 } });
    expect(
      resolveTreeBudget(withMaxCostUsd('x', { 'max-cost-usd': '1' }, config).token_budget),
    ).toMatchObject({
      max_tokens: 9000,
      max_cost_usd: 1,
    });
    expect(withMaxCostUsd('x', {}, config)).toBe(config);
  });

  it('refuses an amount that is not one, and a config without prices', () => {
    for (const bad of ['0', '-1', 'abc', ''])
      expect(() => withMaxCostUsd('batch start', { 'max-cost-usd': bad }, priced())).toThrow(UsageError);
    const unpriced = parseConfig({ models: [{ name: 'm', provider: 'scripted', model: 'test' }] }).config;
    expect(() => withMaxCostUsd('schedule create', { 'max-cost-usd': '1' }, unpriced)).toThrow(
      'schedule create: --max-cost-usd needs prices: no model in the config has models[].pricing',
    );
  });
});
