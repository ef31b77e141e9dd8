import type { TokenBudgetSettings } from '../../contracts/subagent';
import { groupThousands } from '../../contracts/text';
import type { Guard } from './guard';

type TokenBudgetState = { warned: boolean };

function budgetNote(used: number, budget: TokenBudgetSettings): string {
  const percent = Math.floor((used / budget.max_tokens) * 100);
  const stopPercent = Math.round(budget.hard_threshold * 100);
  return (
    `[TOKEN BUDGET WARNING] You have used ${groupThousands(used)} of your ` +
    `${groupThousands(budget.max_tokens)}-token budget (${percent}%). Wrap up: finish the step you are on ` +
    `and give your final answer; start new tool calls only if the answer cannot do without them. ` +
    `The run is stopped at ${stopPercent}% of the budget.`
  );
}

/**
 * The token axis: the run's cumulative total_tokens against `token_budget.max_tokens`. At warn_threshold a
 * one-time note asks the model to wrap up; at hard_threshold the run stops (`token_capped`).
 */
export function tokenBudgetGuard(budget: TokenBudgetSettings): Guard<TokenBudgetState> {
  return {
    name: 'token_budget',
    initial: () => ({ warned: false }),
    check(state, input) {
      if (!budget.enabled) return { state, verdict: {} };
      // Compare fractions, not products: 70 / 100 >= 0.7 holds, while 0.7 * 100 is 70.00000000000001.
      const used = input.usage.total_tokens;
      const fraction = used / budget.max_tokens;
      if (fraction >= budget.hard_threshold) return { state, verdict: { stop: 'token_capped' } };
      if (fraction >= budget.warn_threshold && !state.warned) {
        return { state: { warned: true }, verdict: { note: budgetNote(used, budget) } };
      }
      return { state, verdict: {} };
    },
  };
}
