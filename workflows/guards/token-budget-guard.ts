import type { TokenBudgetSettings } from '../../contracts/subagent';
import { checkTokenBudget, type TokenBudgetState } from '../../contracts/token-budget';
import type { Guard } from './guard';

/**
 * The token axis: the run's cumulative total_tokens against `token_budget.max_tokens`. At warn_threshold a
 * one-time note asks the model to wrap up; at hard_threshold the run stops (`token_capped`).
 */
export function tokenBudgetGuard(budget: TokenBudgetSettings): Guard<TokenBudgetState> {
  return {
    name: 'token_budget',
    initial: () => ({ warned: false }),
    check: (state, input) => checkTokenBudget(budget, state, input.usage.total_tokens),
  };
}
