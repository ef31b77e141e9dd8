/**
 * `subagents budget --user U [--json]`: the user's spend today (UTC) under the per-user daily budget
 * (`budgets.per_user`): the limits, what is left, when the day resets, and the runs that spent.
 */
import { groupThousands } from '../contracts/text';
import type { DailyBudgetView } from '../contracts/daily-budget';
import { resolveDailyBudget } from '../contracts/config/budgets';
import { DEFAULT_USER_ID } from '../contracts/user';
import { readDailyBudget } from '../client/daily-budget';
import { connectClient } from '../client/connection';
import { loadCommandConfig, requireServer } from './command-setup';
import { parseFlags, stringFlag, UsageError } from './flags';
import { checkedUser, tableLines } from './visibility-listing';

const usd = (value: number | undefined) => (value === undefined ? '-' : `${value} USD`);
const tokens = (value: number | undefined) => (value === undefined ? '-' : `${groupThousands(value)} tokens`);

/** The day as a person reads it. */
export function renderDailyBudget(view: DailyBudgetView): string[] {
  const { limits, spent, remaining } = view;
  const lines = [
    `user ${view.user_id}, ${view.day} (UTC), resets at ${view.resets_at}`,
    `spent      ${tokens(spent.total_tokens)}, ${usd(spent.cost_usd)}`,
    `limits     daily_tokens ${tokens(limits.daily_tokens)}, daily_usd ${usd(limits.daily_usd)}` +
      (limits.daily_tokens === undefined && limits.daily_usd === undefined
        ? ' (budgets.per_user sets none)'
        : ''),
    `remaining  ${tokens(remaining.tokens)}, ${usd(remaining.usd)}`,
  ];
  if (view.runs.length === 0) return [...lines, '(no run has reported today)'];
  const rows = view.runs.map((run) => [
    run.run_id,
    groupThousands(run.spent.total_tokens),
    String(run.spent.cost_usd),
    run.at,
  ]);
  lines.push('', ...tableLines(['RUN ID', 'TOKENS', 'USD', 'REPORTED AT'], rows, [1, 2]));
  if (view.folded_runs) lines.push(`(and ${view.folded_runs} earlier runs, summed)`);
  return lines;
}

export async function budgetCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { user: { type: 'string' } }, 'budget');
  if (positionals.length > 0)
    throw new UsageError(`budget: takes no arguments (${positionals.join(' ')}); name the user with --user`);
  const config = loadCommandConfig(values);
  const userId = checkedUser(stringFlag(values, 'user')) ?? config.lead.user_id ?? DEFAULT_USER_ID;
  const limits = resolveDailyBudget(config.budgets) ?? {};
  const settings = await requireServer('budget', config);
  const { client, connection } = await connectClient(settings);
  try {
    const view = await readDailyBudget(client, userId, limits);
    if (values.json) process.stdout.write(`${JSON.stringify(view, null, 2)}\n`);
    else process.stdout.write(`${renderDailyBudget(view).join('\n')}\n`);
    return 0;
  } finally {
    await connection.close();
  }
}
