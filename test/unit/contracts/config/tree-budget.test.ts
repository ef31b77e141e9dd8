import { callCostUsd } from '../../../../contracts/budget';
import { ConfigError, parseConfig } from '../../../../contracts/config';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';
import { leadRunInputProblems } from '../../../../contracts/inputs';

const MODEL = { name: 'm', provider: 'scripted' };

function leadInput(raw: Record<string, unknown>) {
  const { config, warnings } = parseConfig({ models: [MODEL], ...raw });
  return { input: buildLeadRunInput(config, { prompt: 'p', workspace: '/srv/work/1' }), warnings };
}

describe('token_budget: DeerFlow top-level section, over the whole tree', () => {
  it('is read, not ignored: enabled, it reaches the lead input with DeerFlow keys as written', () => {
    const { input, warnings } = leadInput({
      token_budget: {
        enabled: true,
        max_tokens: 4000,
        max_input_tokens: null,
        max_output_tokens: null,
        warn_threshold: 0.8,
        hard_stop_threshold: 1.0,
      },
    });
    expect(warnings).toEqual([]);
    expect(input.scope.tree_budget).toEqual({
      max_tokens: 4000,
      warn_threshold: 0.8,
      hard_stop_threshold: 1,
    });
    expect(leadRunInputProblems(input)).toEqual([]);
    const spoilt = {
      ...input,
      scope: { ...input.scope, tree_budget: { ...input.scope.tree_budget, max_tokens: -1 } },
    };
    expect(leadRunInputProblems(spoilt)).toEqual([
      expect.stringMatching(/^scope\.tree_budget\.max_tokens: -1 /),
    ]);
  });

  it('costs nothing when it is off or left out (DeerFlow default: enabled false)', () => {
    expect(leadInput({}).input.scope.tree_budget).toBeUndefined();
    expect(leadInput({ token_budget: { max_tokens: 10 } }).input.scope.tree_budget).toBeUndefined();
  });

  it("takes DeerFlow's max_tokens default only when no limit is written", () => {
    expect(leadInput({ token_budget: { enabled: true } }).input.scope.tree_budget?.max_tokens).toBe(200_000);
    const cost = leadInput({ token_budget: { enabled: true, max_cost_usd: 2 } }).input.scope.tree_budget;
    expect(cost).toEqual({ max_cost_usd: 2, warn_threshold: 0.8, hard_stop_threshold: 1 });
  });

  it('refuses a hard stop below the warning, naming both', () => {
    expect(() =>
      parseConfig({ token_budget: { enabled: true, warn_threshold: 0.9, hard_stop_threshold: 0.5 } }),
    ).toThrow(/token_budget\.hard_stop_threshold: 0\.5 is below warn_threshold/);
  });

  it("reads models[].pricing in DeerFlow's keys into the model's settings, and refuses another currency", () => {
    const priced = {
      ...MODEL,
      pricing: { input_per_million: 3, output_per_million: 15, input_cache_hit_per_million: 0.3 },
    };
    const { input } = leadInput({ models: [priced] });
    expect(input.model.pricing).toEqual({ input: 3, output: 15, cached_input: 0.3 });
    expect(() =>
      parseConfig({ models: [{ ...priced, pricing: { ...priced.pricing, currency: 'CNY' } }] }),
    ).toThrow(ConfigError);
  });
});

describe('callCostUsd', () => {
  it('prices input, cached input and output per million tokens', () => {
    const usage = {
      input_tokens: 1_000_000,
      output_tokens: 100_000,
      total_tokens: 1_100_000,
      cache_read_tokens: 400_000,
    };
    // 600k fresh × $3 + 400k cached × $0.30 + 100k output × $15 = 1.8 + 0.12 + 1.5
    expect(callCostUsd(usage, { input: 3, output: 15, cached_input: 0.3 })).toBeCloseTo(3.42, 8);
    expect(callCostUsd(usage, undefined)).toBe(0);
  });
});
