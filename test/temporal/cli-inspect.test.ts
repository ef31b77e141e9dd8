/**
 * Inspection from the CLI, each command a process of its own against the suite's server: a closed run is read
 * without any worker (promptly, with how it ended), an open run without a worker says so at once, `list`
 * reads the runs' search attributes, `steps` rebuilds a closed subagent's steps from its history.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SearchAttributePair } from '@temporalio/common';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { workflowUiUrl } from '../../client/api';
import type { ListedRun } from '../../cli/list-command';
import type { LeadRunResult } from '../../contracts/lead';
import type { LedgerEntry } from '../../contracts/ledger';
import {
  runSearchAttributes,
  STOP_REASON,
  SUBAGENT_STATUS,
  TOTAL_TOKENS,
  USER_ID,
} from '../../contracts/search-attributes';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { CLI, cliEnv, WatchedProcess } from '../support/cli-process';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';
import {
  suiteCli,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();
const UI = 'http://ui.example:8233';

/**
 * A command that waits on a query no worker answers takes the query deadline (10 s) longer than one with
 * nothing to wait on. So a command is held against a process of the same kind started just before it (a
 * `status` of an unknown run: connect, one lookup, exit) plus this margin: how slowly a loaded machine starts
 * a process cancels out. (How fast the commands are is a benchmark's figure.)
 */
const QUERY_WAIT_MARGIN_MS = 7_000;

/** A config file that names the Web UI, so the commands print the run's page. */
function uiConfig(): string {
  const path = join(tempDir('cli-inspect'), 'config.yaml');
  writeFileSync(path, `temporal:\n  ui_url: ${UI}\n`);
  return path;
}

/** The lead delegates `a` (answers) and `b` (only ever lists: failed + turn_capped), then loops on ls. */
const SCRIPT: ModelScriptFileInput = {
  scripts: [
    {
      agent: 'lead',
      repeat_last: true,
      turns: [
        {
          tool_calls: ['a', 'b'].map((id) => ({
            name: 'task',
            id,
            args: { description: `Part ${id}`, prompt: `Do part ${id}.`, subagent_type: 'general-purpose' },
          })),
        },
        { content: 'Still looking.', tool_calls: [{ name: 'ls', args: '{}' }] },
      ],
    },
    { agent: 'general-purpose', prompt_contains: 'part a', turns: [{ content: 'Part a done.' }] },
    {
      agent: 'general-purpose',
      prompt_contains: 'part b',
      repeat_last: true,
      turns: [{ content: '', tool_calls: [{ name: 'ls', args: '{"path": "."}' }] }],
    },
  ],
};

function input(taskQueue: string, script: ModelScriptFileInput = SCRIPT) {
  const dir = tempDir('cli-inspect');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return leadInput({
    workspace,
    scriptFile: writeScript(dir, script),
    config: {
      lead: { max_turns: 3 },
      loop_detection: { enabled: false },
      subagents: { agents: { 'general-purpose': { max_turns: 2 } } },
    },
    prompt: `Run on ${taskQueue}.`,
  });
}

const cli = suiteCli;

/** Below this, a command did not wait on a query (see QUERY_WAIT_MARGIN_MS). */
async function withoutWaitingBound(): Promise<number> {
  const base = await cli(['status', 'run-that-never-was']);
  return base.ms + QUERY_WAIT_MARGIN_MS;
}

describe('a finished run, with no worker running', () => {
  let result: LeadRunResult;
  let config: string;
  beforeAll(async () => {
    config = uiConfig();
    const taskQueue = uniqueTaskQueue('cli-inspect');
    // The worker stops once the run has ended: every command below runs with none.
    result = await withProjectWorker(taskQueue, () =>
      testClient().workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [{ ...input(taskQueue), run_id: `${taskQueue}-lead` }],
        // As the project's client starts a run: it then reports its outcome in search attributes.
        typedSearchAttributes: runSearchAttributes(`${taskQueue}-lead`, 'lead', 0),
      }),
    );
    expect(result).toMatchObject({ status: 'completed', stop_reason: 'turn_capped', turns: 3 });
  });

  it('status answers without waiting for a worker, with the final status, stop reason, delegations and the Web UI link', async () => {
    const status = await cli(['status', result.run_id, '--config', config]);
    expect(status.ms).toBeLessThan(await withoutWaitingBound());
    expect(status.code).toBe(0);
    const ui = workflowUiUrl(UI, testNamespace(), result.run_id);
    expect(status.stdout).toBe(
      `${result.run_id}: completed (turn_capped), 3 lead turns; delegations: 1 completed, 1 failed\n` +
        `Web UI: ${ui}\n`,
    );
    const json = await cli(['status', result.run_id, '--config', config, '--json']);
    expect(json.ms).toBeLessThan(await withoutWaitingBound());
    expect(JSON.parse(json.stdout)).toMatchObject({
      state: 'finished',
      execution_status: 'COMPLETED',
      status: 'completed',
      stop_reason: 'turn_capped',
      turns: 3,
      counts: { completed: 1, failed: 1 },
      ui_url: ui,
    });
  });

  it('ledger answers without waiting for a worker, the JSON with the Web UI link', async () => {
    const ledger = await cli(['ledger', result.run_id, '--config', config, '--json']);
    expect(ledger.ms).toBeLessThan(await withoutWaitingBound());
    const parsed = JSON.parse(ledger.stdout) as { run_id: string; ui_url: string; ledger: LedgerEntry[] };
    expect(parsed.ui_url).toBe(workflowUiUrl(UI, testNamespace(), result.run_id));
    expect(parsed.ledger.map((e) => [e.id, e.status, e.stop_reason])).toEqual([
      ['a', 'completed', undefined],
      ['b', 'failed', 'turn_capped'],
    ]);
    const text = await cli(['ledger', result.run_id, '--config', config]);
    expect(text.stdout).toMatch(/^b +general-purpose +failed +turn_capped/m);
    expect(text.stdout).toMatch(/^Web UI: http:\/\/ui\.example:8233\//m);
  });

  it("events answers without waiting for a worker, with each delegation's start and end, named and with its error", async () => {
    const events = await cli(['events', result.run_id]);
    expect(events.ms).toBeLessThan(await withoutWaitingBound());
    expect(events.code).toBe(0);
    const lines = events.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['1', '2', '3', '4']);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\d \S+ a started: general-purpose "Part a"/),
        expect.stringMatching(/^\d \S+ a "Part a" completed$/),
        expect.stringMatching(/^\d \S+ b "Part b" failed \(turn_capped\): \S/),
      ]),
    );
    const json = await cli(['events', result.run_id, '--json', '--after', '2']);
    expect(
      json.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { seq: number }).seq),
    ).toEqual([3, 4]);
  });

  it("steps rebuilds a closed subagent's steps from its history", async () => {
    const steps = await cli(['steps', result.run_id, 'b']);
    expect(steps.ms).toBeLessThan(await withoutWaitingBound());
    expect(steps.code).toBe(0);
    // Two turns of ls; the second's call was dropped by the turn cap, so it has no result.
    expect(steps.stdout).toBe(
      [
        '1 ai: (no text)',
        '    → ls [call_0_0] {"path": "."}',
        '2 tool ls [call_0_0]: (empty directory)',
        '3 ai: (no text)',
        `${result.run_id}/task/b: failed (turn_capped) after 2 turns: ${result.ledger[1].error}`,
        '',
      ].join('\n'),
    );
    const json = await cli(['steps', result.run_id, 'a', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      source: 'history',
      steps: [{ seq: 1, kind: 'ai', text: 'Part a done.', tool_calls: [] }],
      missing: [],
      result: { status: 'completed' },
    });
  });

  it('list finds it by its status and stop reason search attributes', async () => {
    const listed = async () => {
      const list = await cli(['list', '--status', 'completed', '--stop-reason', 'turn_capped', '--json']);
      return (JSON.parse(list.stdout) as ListedRun[]).find((run) => run.run_id === result.run_id);
    };
    await waitFor('the run in the list', async () => (await listed()) !== undefined, 10_000);
    expect(await listed()).toMatchObject({
      status: 'completed',
      status_source: 'search_attribute',
      stop_reason: 'turn_capped',
    });
  });
});

it('a run that was terminated: status says so and why, ledger says it has none, exit 1', async () => {
  const taskQueue = uniqueTaskQueue('cli-inspect-terminated');
  const handle = await testClient().workflow.start(leadRunWorkflow, {
    taskQueue,
    workflowId: `${taskQueue}-lead`,
    args: [input(taskQueue)],
  });
  await handle.terminate('stopped by the operator');
  const status = await cli(['status', handle.workflowId]);
  expect(status.ms).toBeLessThan(await withoutWaitingBound());
  expect(status.stdout).toBe(
    `${handle.workflowId}: failed; the execution terminated without a result (turns and delegations unknown)\n` +
      'error: terminated: stopped by the operator\n',
  );
  const ledger = await cli(['ledger', handle.workflowId]);
  expect(ledger.code).toBe(1);
  expect(ledger.stderr).toMatch(
    /^subagents: run \S+ ended without a result \(TERMINATED: terminated: stopped/,
  );
});

it('an open run no worker polls: status, ledger, events and steps say so within seconds, exit 1', async () => {
  const taskQueue = uniqueTaskQueue('cli-inspect-open');
  const handle = await testClient().workflow.start(leadRunWorkflow, {
    taskQueue,
    workflowId: `${taskQueue}-lead`,
    args: [input(taskQueue)],
  });
  try {
    for (const args of [['status'], ['ledger'], ['events'], ['events', '--follow']]) {
      const run = await cli([...args, handle.workflowId]);
      expect(run.ms).toBeLessThan(await withoutWaitingBound());
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).toBe(
        `subagents: ${args[0]}: run ${handle.workflowId} is open, but no worker polls task queue ` +
          `"${taskQueue}" at ${testAddress()}, so it cannot answer (its state is kept on the server and it ` +
          `goes on when a worker polls). Start one with: subagents worker --address ${testAddress()} ` +
          `--task-queue ${taskQueue}\n`,
      );
    }
  } finally {
    await handle.terminate('test over');
  }
});

it('watch follows a run started elsewhere to its end: waits for a worker, prints its events, tree and summary', async () => {
  const taskQueue = uniqueTaskQueue('cli-watch');
  const runId = `${taskQueue}-lead`;
  const config = uiConfig();
  // Started while no worker polls: the watch is attached before anything happens.
  await testClient().workflow.start(leadRunWorkflow, {
    taskQueue,
    workflowId: runId,
    args: [{ ...input(taskQueue), run_id: runId }],
    typedSearchAttributes: runSearchAttributes(runId, 'lead', 0),
  });
  const watch = new WatchedProcess(
    [CLI, 'watch', runId, '--config', config, '--address', testAddress(), '--namespace', testNamespace()],
    cliEnv(),
  );
  try {
    await watch.waitFor('stderr', /^waiting: no worker polls task queue .*--config \S+$/m, 30_000);
    const ended = await withProjectWorker(taskQueue, () => watch.exit());
    expect(ended.code).toBe(0);
    const ui = workflowUiUrl(UI, testNamespace(), runId);
    expect(watch.stdout).toMatch(new RegExp(`^Run ${runId} · Web UI: ${ui}$`, 'm'));
    // Without a terminal: one line per event, then the tree once, the summary and the ledger.
    expect(watch.stdout).toMatch(/^\S+ a started: general-purpose "Part a"/m);
    expect(watch.stdout).toMatch(/^\S+ b failed \(turn_capped\)/m);
    expect(watch.stdout).toMatch(/^lead {2}completed \(capped: [^)]+\) · 3 turns/m);
    expect(watch.stdout).toContain('\nLedger:\n');
    expect(watch.stderr).not.toMatch(/unexpected error|\n\s+at /);
  } finally {
    await watch.stop();
  }
  // An ended run, with no worker: its summary at once.
  const again = await cli(['watch', runId]);
  expect(again.code).toBe(0);
  expect(again.stdout).toMatch(/^status +completed/m);
  expect(again.stdout).toContain('\nLedger:\n');
});

describe('list', () => {
  const key = {
    status: SUBAGENT_STATUS,
    stopReason: STOP_REASON,
    tokens: TOTAL_TOKENS,
    user: USER_ID,
  };

  it('lists lead runs newest first and filters them by status and stop reason', async () => {
    const taskQueue = uniqueTaskQueue('cli-list');
    // Runs no worker picks up, their outcome attributes set at start as the workflows would set them.
    const start = (id: string, attributes: SearchAttributePair[]) =>
      testClient().workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-${id}`,
        args: [input(taskQueue)],
        typedSearchAttributes: attributes,
      });
    const capped = await start('capped', [
      { key: key.status, value: 'failed' },
      { key: key.stopReason, value: 'token_capped' },
      { key: key.tokens, value: 12345 },
    ]);
    const plain = await start('plain', [
      { key: key.status, value: 'completed' },
      { key: key.user, value: 'alice@example.org' },
    ]);
    const old = await start('old', []);
    const ids = [capped, plain, old].map((h) => h.workflowId);
    try {
      const mine = async (args: string[]) => {
        const list = await cli(['list', '--json', '--limit', '200', ...args]);
        expect(list.code).toBe(0);
        return (JSON.parse(list.stdout) as ListedRun[]).filter((run) => ids.includes(run.run_id));
      };
      await waitFor('the three runs listed', async () => (await mine([])).length === 3, 10_000);
      const all = await mine([]);
      expect(all.map((run) => run.run_id)).toEqual([old.workflowId, plain.workflowId, capped.workflowId]);
      expect(all[2]).toMatchObject({
        status: 'failed',
        status_source: 'search_attribute',
        stop_reason: 'token_capped',
        total_tokens: 12345,
      });
      // A run without the attribute (from before them) shows Temporal's execution status.
      expect(all[0]).toMatchObject({ status: 'running', status_source: 'execution' });
      expect((await mine(['--status', 'failed'])).map((run) => run.run_id)).toEqual([capped.workflowId]);
      expect((await mine(['--stop-reason', 'token_capped'])).map((run) => run.run_id)).toEqual([
        capped.workflowId,
      ]);
      expect(await mine(['--status', 'completed', '--stop-reason', 'token_capped'])).toEqual([]);
      // Whose runs: the one started for alice, with her id in the JSON.
      const alices = await mine(['--user', 'alice@example.org']);
      expect(alices.map((run) => [run.run_id, run.user_id])).toEqual([
        [plain.workflowId, 'alice@example.org'],
      ]);
      expect(await mine(['--user', 'bob'])).toEqual([]);

      const text = await cli(['list', '--status', 'failed', '--stop-reason', 'token_capped']);
      expect(text.stdout).toMatch(
        new RegExp(`^${capped.workflowId} +failed +token_capped +12345 +\\d+[smhd]$`, 'm'),
      );
    } finally {
      for (const id of ids) await testClient().workflow.getHandle(id).terminate('test over');
    }
  });

  it('refuses a status or stop reason outside the contract, naming the accepted ones', async () => {
    const status = await cli(['list', '--status', 'done']);
    expect(status.code).toBe(2);
    expect(status.stderr).toBe(
      'subagents: --status: "done" is not one of queued, running, completed, failed, cancelled, timed_out\n',
    );
    const reason = await cli(['list', '--stop-reason', 'tired']);
    expect(reason.code).toBe(2);
    expect(reason.stderr).toMatch(
      /^subagents: --stop-reason: "tired" is not one of token_capped, turn_capped/,
    );
  });
});
