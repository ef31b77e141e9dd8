/**
 * The per-user daily budget (issue 45, item 3) on the real server: a user whose day is spent is refused the next
 * run, before any model call, with a message naming the budget and its reset; another user is not; `subagents
 * budget --user` shows the day's spend from the user's ledger.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { workflowResult } from '../../client/results';
import {
  dailyBudgetWorkflowId,
  dailyLedgerQuery,
  dailySpendSignal,
  daySpend,
  utcDay,
  type DailyBudgetView,
} from '../../contracts/daily-budget';
import { dailyBudgetWorkflow, DAILY_REPORTS_PER_EXECUTION } from '../../workflows/budget/daily-workflow';
import type { LeadRunResult } from '../../contracts/lead';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { cliEnv, runCli } from '../support/cli-process';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import {
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();

/** Past the day's 1,000 tokens in one call. */
const BIG_CALL = { input_tokens: 900, output_tokens: 200 };
const DAILY_TOKENS = 1000;

const oneAnswer = (): ModelScriptFileInput => ({
  scripts: [{ agent: 'lead', turns: [{ content: 'Done.', usage: BIG_CALL }] }],
});

/** One run of `user`'s under the daily budget, to its end (a failed run's result read from its failure). */
async function runOf(user: string, taskQueue: string, label: string): Promise<LeadRunResult> {
  const { workspace, scriptFile } = scriptedWorkspace(label, oneAnswer());
  const input = leadInput({
    workspace,
    scriptFile,
    config: { budgets: { per_user: { daily_tokens: DAILY_TOKENS } }, lead: { user_id: user } },
  });
  const handle = await testClient().workflow.start(leadRunWorkflow, {
    taskQueue,
    workflowId: `${taskQueue}-${label}`,
    args: [input],
  });
  await handle.result().catch(() => undefined);
  return workflowResult(handle);
}

describe('budgets.per_user: a budget per user per day', () => {
  it("refuses a user's next run once the day is spent, not another user's; budget --user shows the spend", async () => {
    const taskQueue = uniqueTaskQueue('daily-budget');
    // Users of this test alone: the ledger of a user lives on the task queue of the run that first reported.
    const suffix = taskQueue.slice(-8);
    const alice = `alice-${suffix}`;
    const bob = `bob-${suffix}`;
    const { dir } = scriptedWorkspace('daily-budget-config', oneAnswer());
    const config = join(dir, 'budget.yaml');
    writeFileSync(config, `budgets:\n  per_user:\n    daily_tokens: ${DAILY_TOKENS}\n`);

    const { first, second, other, shown } = await withProjectWorker(taskQueue, async () => {
      const first = await runOf(alice, taskQueue, 'alice-1');
      const second = await runOf(alice, taskQueue, 'alice-2');
      const other = await runOf(bob, taskQueue, 'bob-1');
      const cli = await runCli(
        [
          'budget',
          '--user',
          alice,
          '--json',
          '--config',
          config,
          '--address',
          testAddress(),
          '--namespace',
          testNamespace(),
        ],
        cliEnv(),
      );
      expect(cli.stderr).toBe('');
      expect(cli.code).toBe(0);
      return { first, second, other, shown: JSON.parse(cli.stdout) as DailyBudgetView };
    });

    // The first run was admitted with the whole day and spent past it in its one call.
    expect(first).toMatchObject({ status: 'completed', final_output: 'Done.' });
    expect(first.tree_budget?.spent.total_tokens).toBe(1100);
    // The next is refused before any model call, naming the budget, the spend and the reset.
    expect(second).toMatchObject({ status: 'failed', turns: 0, final_output: '' });
    expect(second.error).toMatch(
      new RegExp(
        `^daily budget of user ${alice} is spent: budgets\\.per_user\\.daily_tokens 1,000, spent 1,100 on ` +
          `\\d{4}-\\d{2}-\\d{2} \\(UTC\\); it resets at \\d{4}-\\d{2}-\\d{2}T00:00:00\\.000Z \\(next UTC midnight\\)$`,
      ),
    );
    expect(second.token_usage.total?.total_tokens ?? 0).toBe(0);
    // Not a refused slot: lead_runtime's admission never heard of it.
    expect(second.admission_failure).toBeUndefined();
    // Another user's day is their own.
    expect(other).toMatchObject({ status: 'completed', final_output: 'Done.' });

    expect(shown).toMatchObject({
      user_id: alice,
      limits: { daily_tokens: DAILY_TOKENS },
      spent: { total_tokens: 1100 },
      remaining: { tokens: 0 },
      runs: [{ run_id: `${taskQueue}-alice-1`, spent: { total_tokens: 1100 } }],
    });
    expect(shown.resets_at).toBe(
      new Date(Date.parse(`${shown.day}T00:00:00.000Z`) + 86_400_000).toISOString(),
    );
  });

  it('the ledger continues as new and counts every run once, a report repeated across the boundary included', async () => {
    const taskQueue = uniqueTaskQueue('daily-ledger');
    const user = `carol-${taskQueue.slice(-8)}`;
    const day = utcDay(Date.now());
    const runs = 300;
    // Each run reports twice: more reports than one execution takes, so some repeat in the next one.
    const reports = Array.from({ length: 2 * runs }, (_, i) => ({
      day,
      run_id: `run-${i % runs}`,
      spent: { input_tokens: 10, output_tokens: 0, total_tokens: 10, cost_usd: 0 },
      at: new Date().toISOString(),
    }));
    expect(reports.length).toBeGreaterThan(DAILY_REPORTS_PER_EXECUTION);
    const { firstRunId, latestRunId, spent, listed } = await withProjectWorker(taskQueue, async () => {
      const client = testClient();
      const send = (report: (typeof reports)[number]) =>
        client.workflow.signalWithStart(dailyBudgetWorkflow, {
          workflowId: dailyBudgetWorkflowId(user),
          taskQueue,
          args: [{ user_id: user }],
          signal: dailySpendSignal,
          signalArgs: [report],
        });
      const [first, ...rest] = reports;
      if (!first) throw new Error('no report to send');
      const firstRunId = (await send(first)).signaledRunId;
      for (let i = 0; i < rest.length; i += 25) await Promise.all(rest.slice(i, i + 25).map(send));
      const handle = client.workflow.getHandle(dailyBudgetWorkflowId(user));
      // Signals accepted are not yet handled: wait until the ledger has taken the last ones.
      let state = await handle.query(dailyLedgerQuery);
      while (
        Object.keys(state.days[day]?.runs ?? {}).length < runs ||
        (await handle.describe()).runId === firstRunId
      ) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        state = await handle.query(dailyLedgerQuery);
      }
      const latestRunId = (await handle.describe()).runId;
      await handle.terminate('test over');
      return {
        firstRunId,
        latestRunId,
        spent: daySpend(state.days[day]),
        listed: Object.keys(state.days[day]?.runs ?? {}).length,
      };
    });
    expect(latestRunId).not.toBe(firstRunId);
    expect(listed).toBe(runs);
    expect(spent.total_tokens).toBe(runs * 10);
  });
});
