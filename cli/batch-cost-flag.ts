/**
 * `--max-cost-usd N` on `subagents batch start` and `subagents schedule create`: the run's tree budget with that
 * USD limit (`token_budget.max_cost_usd`, enabled), over the config's other `token_budget:` keys. A batch's
 * items share it (the batch is their tree's root); each occurrence of a schedule gets its own.
 */
import type { Config } from '../contracts/config';
import { stringFlag, UsageError, type FlagValues } from './flags';

export const MAX_COST_FLAG = { 'max-cost-usd': { type: 'string' } } as const;

/** `config` with the flag's USD limit in its `token_budget:`; as it is without the flag. */
export function withMaxCostUsd(command: string, values: FlagValues, config: Config): Config {
  const raw = stringFlag(values, 'max-cost-usd');
  if (raw === undefined) return config;
  const usd = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(usd) || usd <= 0) {
    throw new UsageError(
      `${command}: --max-cost-usd: ${JSON.stringify(raw)} is not an amount in USD (a number more than 0)`,
    );
  }
  // Without prices no call costs anything: a cost limit would never act, which a user would not expect.
  if (!config.models.some((model) => model.pricing !== undefined)) {
    throw new UsageError(
      `${command}: --max-cost-usd needs prices: no model in the config has models[].pricing ` +
        '(input_per_million, output_per_million), so no call would count against it',
    );
  }
  return { ...config, token_budget: { ...config.token_budget, enabled: true, max_cost_usd: usd } };
}
