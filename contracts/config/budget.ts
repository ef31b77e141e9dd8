/**
 * The tree budget's config (issue 45): DeerFlow's top-level `token_budget:` with its keys as written, plus
 * `max_cost_usd`; and a model's `pricing:` block (DeerFlow's keys, per million tokens). Resolved into the lead's
 * input as `tree_budget` (contracts/budget.ts), absent unless `enabled: true`.
 */
import { z } from 'zod';
import { DEFAULT_TREE_BUDGET, type ModelPricing, type TreeBudgetSettings } from '../budget';
import { bool, section, text, wholeNumber } from './fields';
import { typeError } from './value-types';

const share = z
  .number({ error: typeError('a fraction', 'more than 0, at most 1') })
  .gt(0, { error: 'is out of range (more than 0, at most 1)' })
  .max(1, { error: 'is out of range (more than 0, at most 1)' });

const price = z
  .number({ error: typeError('a price', '0 or more, per million tokens') })
  .min(0, { error: 'is out of range (0 or more, per million tokens)' });

const usd = z
  .number({ error: typeError('an amount in USD', 'more than 0') })
  .positive({ error: 'is out of range (more than 0)' });

/** `token_budget:` (DeerFlow: "Total token limit (input + output) per run"), over the whole tree here. */
export const tokenBudgetTopSection = section('token_budget', {
  enabled: bool.default(false),
  max_tokens: wholeNumber(1).optional(),
  max_input_tokens: wholeNumber(1).optional(),
  max_output_tokens: wholeNumber(1).optional(),
  max_cost_usd: usd.optional(),
  warn_threshold: share.default(DEFAULT_TREE_BUDGET.warn_threshold),
  hard_stop_threshold: share.default(DEFAULT_TREE_BUDGET.hard_stop_threshold),
}).superRefine((budget, ctx) => {
  if (budget.hard_stop_threshold < budget.warn_threshold) {
    ctx.addIssue({
      code: 'custom',
      path: ['hard_stop_threshold'],
      input: budget.hard_stop_threshold,
      message: `is below warn_threshold (hard_stop_threshold ≥ warn_threshold = ${budget.warn_threshold})`,
    });
  }
});
export type TokenBudgetTopConfig = z.output<typeof tokenBudgetTopSection>;

/** `models[].pricing`, DeerFlow's block: prices per million tokens in one currency. */
export const modelPricingSection = section('models[].pricing', {
  // DeerFlow lets a deployment pick its currency; the cost budget here is in USD, so prices must be too.
  currency: text
    .refine((code) => code.toUpperCase() === 'USD', {
      error: 'is not USD (max_cost_usd counts USD: write prices in USD)',
    })
    .default('USD'),
  input_per_million: price,
  output_per_million: price,
  /** Cache-hit input; absent → billed at the input price. */
  input_cache_hit_per_million: price.optional(),
});
export type ModelPricingConfig = z.output<typeof modelPricingSection>;

/** A pricing block as the workflow input carries it. */
export function resolvePricing(pricing: ModelPricingConfig | undefined): ModelPricing | undefined {
  if (!pricing) return undefined;
  return {
    input: pricing.input_per_million,
    output: pricing.output_per_million,
    ...(pricing.input_cache_hit_per_million !== undefined && {
      cached_input: pricing.input_cache_hit_per_million,
    }),
  };
}

/**
 * The run's tree budget from `token_budget:`: absent unless enabled. DeerFlow's `max_tokens` default (200,000)
 * applies when no limit is written; with only other limits written, only those apply.
 */
export function resolveTreeBudget(budget: TokenBudgetTopConfig): TreeBudgetSettings | undefined {
  if (!budget.enabled) return undefined;
  const anyLimit =
    budget.max_tokens !== undefined ||
    budget.max_input_tokens !== undefined ||
    budget.max_output_tokens !== undefined ||
    budget.max_cost_usd !== undefined;
  const maxTokens = budget.max_tokens ?? (anyLimit ? undefined : DEFAULT_TREE_BUDGET.max_tokens);
  return {
    ...(maxTokens !== undefined && { max_tokens: maxTokens }),
    ...(budget.max_input_tokens !== undefined && { max_input_tokens: budget.max_input_tokens }),
    ...(budget.max_output_tokens !== undefined && { max_output_tokens: budget.max_output_tokens }),
    ...(budget.max_cost_usd !== undefined && { max_cost_usd: budget.max_cost_usd }),
    warn_threshold: budget.warn_threshold,
    hard_stop_threshold: budget.hard_stop_threshold,
  };
}
