/**
 * What the CLI prints and how its processes end, each command a process of its own: `run --json` keeps
 * stdout for the JSON while the SDK (its Rust core included) logs on stderr; a worker stopped with SIGTERM
 * shuts down once and exits 0; `run --address` with no worker polling says so and how to start one.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { connectClient, testAddress, uniqueTaskQueue } from '../harness/temporal';
import { CLI, cliEnv, ROOT, runCli, WatchedProcess } from '../support/cli-process';
import { tempDir, writeScript } from '../support/subagent-input';

const WORKER_MAIN = join(ROOT, 'dist', 'worker', 'worker-main.js');
const STACK_FRAME = /\n\s+at /;

function scriptedConfig(dir: string, script: Parameters<typeof writeScript>[1], extra = ''): string {
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `models:\n  - name: scripted\n    provider: scripted\n    model: e2e\n    script_file: ${writeScript(dir, script)}\n${extra}`,
  );
  return config;
}

it('run --json: the result alone on stdout; the SDK and its Rust core log on stderr', async () => {
  const dir = tempDir('cli-json');
  const config = scriptedConfig(
    dir,
    {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'slow',
                  args: {
                    description: 'A slow part',
                    prompt: 'Take your time.',
                    subagent_type: 'general-purpose',
                  },
                },
              ],
            },
            { content: 'The slow part timed out; here is the rest.' },
          ],
        },
        // Still thinking when the subagent's 1 s is up: the worker cancels the call as the run ends.
        { agent: 'general-purpose', turns: [{ content: 'Thinking…', delay_ms: 20_000 }] },
      ],
    },
    'subagents:\n  agents:\n    general-purpose:\n      timeout_seconds: 1\n',
  );
  // At INFO the core logs on every run (a worker starting, shutting down): a log on stdout cannot hide.
  const run = await runCli(
    ['run', '--json', '--config', config, '--workspace', tempDir('ws'), 'Do the slow part.'],
    cliEnv({ SUBAGENTS_LOG_LEVEL: 'INFO' }),
  );
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout) as LeadRunResult & { ui_url?: string };
  expect(result.final_output).toBe('The slow part timed out; here is the rest.');
  // The run's page in the Web UI, as the header on stderr names it.
  expect(result.ui_url).toMatch(
    new RegExp(`^http://127\\.0\\.0\\.1:\\d+/namespaces/default/workflows/${result.run_id}$`),
  );
  expect(run.stderr).toContain(`Web UI: ${result.ui_url}\n`);
  expect(result.ledger.map((entry) => [entry.id, entry.status])).toEqual([['slow', 'timed_out']]);
  expect(run.stderr).toMatch(/\[INFO\] Initializing worker .*sdkComponent: 'core'/);
  // The run header goes to stderr too, where a user watching the terminal sees which run this is.
  expect(run.stderr).toContain(`Run ${result.run_id} · workspace`);
  expect(run.stderr).not.toMatch(STACK_FRAME);
});

// At INFO the core logs a worker's shutdown, so its logs are seen to go to stderr too.
describe('a worker stopped with SIGTERM shuts down once and exits 0, without a stack trace', () => {
  const cases: [string, () => { args: string[]; env: NodeJS.ProcessEnv }][] = [
    [
      '`subagents worker`',
      () => ({
        args: [CLI, 'worker', '--address', testAddress(), '--task-queue', uniqueTaskQueue('cli-worker')],
        env: cliEnv({ SUBAGENTS_LOG_LEVEL: 'INFO' }),
      }),
    ],
    [
      'a worker process (worker/worker-main.ts)',
      () => ({
        args: [WORKER_MAIN],
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: testAddress(),
          TASK_QUEUE: uniqueTaskQueue('worker-main'),
          WORKFLOW_BUNDLE: process.env.TEMPORAL_TEST_WORKFLOW_BUNDLE,
          WORKER_LOG_LEVEL: 'INFO',
        },
      }),
    ],
  ];
  it.each(cases)('%s', async (_name, command) => {
    const { args, env } = command();
    const worker = new WatchedProcess(args, env);
    try {
      await worker.waitFor('stdout', /^worker ready: task queue "[^"]+" on /m, 90_000);
      worker.kill('SIGTERM');
      expect(await worker.exited).toEqual({ code: 0, signal: null });
      // stdout has the start lines alone; the logs, the core's included, are on stderr.
      expect(worker.stdout).toMatch(
        /^worker ready: [^\n]*\nbash sandbox: [^\n]*\nadmission: [^\n]*\nlead runs in flight: [^\n]*\npayloads: [^\n]*\nworkspaces: home host [^\n]*, saved to [^\n]* after each change\n$/,
      );
      expect(worker.stderr).toMatch(/\[INFO\] Initiated shutdown .*sdkComponent: 'core'/);
      expect(worker.stderr).toContain('SIGTERM: stopping the worker');
      expect(worker.stderr).toContain('worker stopped');
      expect(worker.stderr).not.toMatch(/IllegalStateError|Error:/);
      expect(worker.stderr).not.toMatch(STACK_FRAME);
    } finally {
      await worker.stop();
    }
  });
});

it('run --address with no worker polling its task queue says so within 10 s, and how to start one', async () => {
  const dir = tempDir('cli-no-worker');
  const config = scriptedConfig(dir, { scripts: [{ turns: [{ content: 'Hello.' }] }] });
  const taskQueue = uniqueTaskQueue('nobody-polls');
  const address = testAddress();
  const run = new WatchedProcess(
    [CLI, 'run', '--address', address, '--task-queue', taskQueue, '--config', config, 'Say hello.'],
    cliEnv(),
  );
  let runId: string | undefined;
  try {
    [, runId] = await run.waitFor('stdout', /^Run (\S+) · workspace/m, 60_000);
    const started = Date.now();
    const [hint] = await run.waitFor('stderr', /^waiting: no worker polls .*$/m, 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(hint).toBe(
      `waiting: no worker polls task queue "${taskQueue}" on ${address}; the run goes on when one does. ` +
        `Start one with: subagents worker --address ${address} --task-queue ${taskQueue} --config ${config}`,
    );
    // The run still waits: an interrupt says where the run is and ends with the signal's exit code.
    run.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: 143, signal: null });
    expect(run.stderr).toContain(`subagents: SIGTERM: stopped following run ${runId}; it keeps running on`);
    expect(run.stderr.match(/^waiting: /gm)).toHaveLength(1);
    expect(run.stderr).not.toMatch(STACK_FRAME);
  } finally {
    await run.stop();
    if (runId !== undefined) {
      const { client, close } = await connectClient();
      try {
        await client.workflow.getHandle(runId).terminate('test cleanup: no worker ever polled');
      } finally {
        await close();
      }
    }
  }
});
