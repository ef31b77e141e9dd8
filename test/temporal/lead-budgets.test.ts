/** The lead's own budgets from config (`lead:`): turns, wall clock and tokens end the run like a subagent's. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { LeadRunResult } from '../../contracts/lead';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { workflowResult } from '../../client/results';
import {
  startProjectWorkerProcess,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();

const looking = (extra: Record<string, unknown> = {}): ModelScriptFileInput => ({
  scripts: [
    {
      agent: 'lead',
      repeat_last: true,
      turns: [
        {
          content: 'Still looking.',
          tool_calls: [{ name: 'ls', args: '{}' }],
          usage: { input_tokens: 400, output_tokens: 100 },
          ...extra,
        },
      ],
    },
  ],
});

async function runLead(lead: Record<string, unknown>, script: ModelScriptFileInput): Promise<LeadRunResult> {
  const dir = tempDir('lead-budgets');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const input = leadInput({
    workspace,
    scriptFile: writeScript(dir, script),
    // Loop detection would stop the repeated call first; the budget under test must.
    config: { lead, loop_detection: { enabled: false } },
  });
  const taskQueue = uniqueTaskQueue('lead-budgets');
  // A timed-out run fails its workflow, its result in the failure: read as every client reads it.
  return withProjectWorker(taskQueue, async () =>
    workflowResult(
      await testClient().workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      }),
    ),
  );
}

it('stops at lead.max_turns with turn_capped and the partial answer', async () => {
  const result = await runLead({ max_turns: 3 }, looking());
  expect(result).toMatchObject({
    status: 'completed',
    stop_reason: 'turn_capped',
    turns: 3,
    final_output: 'Still looking.',
  });
});

it('stops at lead.token_budget with token_capped', async () => {
  // 500 tokens a turn against 1,200: the third turn passes the hard threshold.
  const result = await runLead({ token_budget: { max_tokens: 1200 } }, looking());
  expect(result).toMatchObject({ status: 'completed', stop_reason: 'token_capped', turns: 3 });
});

it('ends timed_out at lead.timeout_seconds, keeping the partial answer', async () => {
  const started = Date.now();
  const result = await runLead({ timeout_seconds: 2 }, looking({ delay_ms: 700 }));
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(result).toMatchObject({
    status: 'timed_out',
    error: 'Run timed out after 2 seconds',
    final_output: 'Still looking.',
  });
  expect(result.turns).toBeGreaterThanOrEqual(2);
});

it("logs the token budget's one-time warning at INFO on the worker, naming the run, the agent and the tokens", async () => {
  const dir = tempDir('lead-budget-log');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  // 500 tokens a turn against 2,000 at warn 0.5: the second turn warns, the fourth stops.
  const input = leadInput({
    workspace,
    scriptFile: writeScript(dir, looking()),
    config: {
      lead: { token_budget: { max_tokens: 2000, warn_threshold: 0.5 } },
      loop_detection: { enabled: false },
    },
  });
  const taskQueue = uniqueTaskQueue('lead-budget-log');
  let logs = '';
  const worker = await startProjectWorkerProcess(
    taskQueue,
    {},
    { logLevel: 'INFO', onLog: (text) => (logs += text) },
  );
  try {
    const workflowId = `${taskQueue}-lead`;
    const result = await testClient().workflow.execute(leadRunWorkflow, {
      taskQueue,
      workflowId,
      args: [input],
    });
    expect(result).toMatchObject({ status: 'completed', stop_reason: 'token_capped' });
    await waitFor('the warning in the worker log', () => logs.includes('[TOKEN BUDGET WARNING]'));
    const lines = logs.split('\n').filter((line) => line.includes('[TOKEN BUDGET WARNING]'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /\[INFO\] token_budget warning: \[TOKEN BUDGET WARNING\] You have used 1,000 of your 2,000-token/,
    );
    expect(lines[0]).toContain(`run_id: '${workflowId}'`);
    expect(lines[0]).toContain("agent: 'lead'");
    expect(lines[0]).toContain('total_tokens: 1000');
  } finally {
    worker.kill('SIGKILL');
  }
});
