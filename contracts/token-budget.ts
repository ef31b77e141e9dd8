/**
 * The token budget's rule, pure: the agent loop's guard (workflows/guards/token-budget-guard.ts) asks it after
 * every model response, and the graph activity after every model call of a graph, so both floors stop a run at
 * the same point with the same words.
 */
import type { TokenBudgetSettings } from './subagent';
import { groupThousands } from './text';

/** Plain JSON: the loop carries it across continue-as-new, the graph activity in its heartbeat. */
export type TokenBudgetState = { warned: boolean };

export interface TokenBudgetVerdict {
  stop?: 'token_capped';
  note?: string;
}

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
 * The run's cumulative total_tokens (`used`) against `token_budget.max_tokens`: at warn_threshold a one-time
 * note asks the model to wrap up; at hard_threshold the run stops (`token_capped`).
 */
export function checkTokenBudget(
  budget: TokenBudgetSettings,
  state: TokenBudgetState,
  used: number,
): { state: TokenBudgetState; verdict: TokenBudgetVerdict } {
  if (!budget.enabled) return { state, verdict: {} };
  // Compare fractions, not products: 70 / 100 >= 0.7 holds, while 0.7 * 100 is 70.00000000000001.
  const fraction = used / budget.max_tokens;
  if (fraction >= budget.hard_threshold) return { state, verdict: { stop: 'token_capped' } };
  if (fraction >= budget.warn_threshold && !state.warned) {
    return { state: { warned: true }, verdict: { note: budgetNote(used, budget) } };
  }
  return { state, verdict: {} };
}
