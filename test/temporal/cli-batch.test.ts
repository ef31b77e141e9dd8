/**
 * `subagents batch …` as a user runs it, on the real dev server: the worked example of docs/batches.md (the items file
 * and scripted model in cli/demo/batch) started with --wait, then status and results; `batch list` of a user's
 * batches (failed, completed, running, sealed with a key the listing lacks); and the refusals of a bad items
 * file, each one clear line per problem, exit 2, nothing started and no workspace made.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ListedBatch } from '../../cli/batch-list-command';
import { keyIdOf } from '../../payloads/encryption-keys';
import { cliEnv, ROOT, runCli, stop } from '../support/cli-process';
import { tempDir } from '../support/subagent-input';
import {
  startProjectWorkerProcess,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

const EXAMPLE = join(ROOT, 'cli', 'demo', 'batch');
const server = () => ['--address', testAddress(), '--namespace', testNamespace()];
const testClient = useTestClient();

it('runs the worked example: --wait to the end, then status and results in key order', async () => {
  const taskQueue = uniqueTaskQueue('cli-batch');
  const workspace = join(tempDir('cli-batch'), 'workspace');
  const common = [...server(), '--task-queue', taskQueue];
  await withProjectWorker(taskQueue, async () => {
    const started = await runCli(
      [
        'batch',
        'start',
        '--items',
        join(EXAMPLE, 'items.jsonl'),
        '--type',
        'general-purpose',
        '--config',
        join(EXAMPLE, 'config.yaml'),
        '--workspace',
        workspace,
        '--wait',
        '--json',
        ...common,
      ],
      cliEnv(),
    );
    // req-005 asks for a verdict the model never gives: it fails its criteria twice, so the exit code is 1.
    expect(started.code).toBe(1);
    const end = JSON.parse(started.stdout) as {
      batch_id: string;
      status: string;
      counts: Record<string, number>;
    };
    expect(end).toMatchObject({ status: 'completed', counts: { completed: 4, failed: 1 } });
    expect(started.stderr).toContain(`batch ${end.batch_id}: 5 items · workspace ${workspace}`);
    expect(started.stderr).toMatch(/4\/5 done · 0 running · 0 queued · 1 failed · [\d.]+ items\/s/);

    const status = await runCli(['batch', 'status', end.batch_id, ...common], cliEnv());
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(
      '  req-005  failed  attempts 2  acceptance criteria not met: contains: Verdict: testable',
    );

    const results = await runCli(['batch', 'results', end.batch_id, ...common], cliEnv());
    expect(results.code).toBe(0);
    const lines = results.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { key: string; status: string; attempts: number; result: string });
    expect(lines.map((line) => [line.key, line.status, line.attempts])).toEqual([
      ['req-001', 'completed', 1],
      ['req-002', 'completed', 1],
      ['req-003', 'completed', 1],
      ['req-004', 'completed', 1],
      ['req-005', 'failed', 2],
    ]);
    expect(lines[1].result).toBe(
      'Verdict: not testable. "Fast" has no measure; state a time for a given load.',
    );

    const unknown = await runCli(['batch', 'status', 'no-such-batch', ...common], cliEnv());
    expect({ code: unknown.code, stderr: unknown.stderr }).toEqual({
      code: 2,
      stderr: `subagents: batch status: no batch no-such-batch on ${testAddress()}\n`,
    });
  });
});

it("batch list: a user's batches newest first, with status and counts; a running one and a sealed one marked", async () => {
  const taskQueue = uniqueTaskQueue('cli-batch-list');
  const sealedQueue = uniqueTaskQueue('cli-batch-list-sealed');
  // No worker polls it: its batch stays running.
  const idleQueue = uniqueTaskQueue('cli-batch-list-idle');
  const user = `lister-${taskQueue.slice(-8)}`;
  const dir = tempDir('cli-batch-list');
  // From the worked example: req-001 meets its criterion, req-005 fails `contains: Verdict: testable`.
  const example = readFileSync(join(EXAMPLE, 'items.jsonl'), 'utf8').trim().split('\n');
  const mixedItems = join(dir, 'mixed.jsonl');
  writeFileSync(mixedItems, `${example[0]}\n${example[4]}\n`);
  const oneItem = join(dir, 'one.jsonl');
  writeFileSync(oneItem, `${example[0]}\n`);
  const key = randomBytes(32).toString('base64');
  const keyId = keyIdOf(Buffer.from(key, 'base64'));
  const keyless = cliEnv();
  delete keyless.SUBAGENTS_ENCRYPTION_KEY;
  let started = 0;
  const start = async (queue: string, items: string, env: NodeJS.ProcessEnv, wait = true) => {
    started += 1;
    const run = await runCli(
      [
        'batch',
        'start',
        '--items',
        items,
        '--type',
        'general-purpose',
        '--config',
        join(EXAMPLE, 'config.yaml'),
        '--workspace',
        join(dir, `workspace-${started}`),
        '--max-attempts',
        '1',
        '--user',
        user,
        ...(wait ? ['--wait'] : []),
        '--json',
        ...server(),
        '--task-queue',
        queue,
      ],
      env,
    );
    return JSON.parse(run.stdout) as { batch_id: string };
  };

  const { mixed, completed } = await withProjectWorker(taskQueue, async () => ({
    mixed: (await start(taskQueue, mixedItems, keyless)).batch_id,
    completed: (await start(taskQueue, oneItem, keyless)).batch_id,
  }));
  // A worker and a starter holding a key the listing does not: the batch's result is sealed with it.
  let sealedWorker: ChildProcess | undefined;
  let sealed: string;
  try {
    sealedWorker = await startProjectWorkerProcess(sealedQueue, { SUBAGENTS_ENCRYPTION_KEY: key });
    sealed = (await start(sealedQueue, oneItem, cliEnv({ SUBAGENTS_ENCRYPTION_KEY: key }))).batch_id;
  } finally {
    if (sealedWorker) await stop(sealedWorker);
  }
  const running = (await start(idleQueue, oneItem, keyless, false)).batch_id;

  const list = async (...args: string[]) => {
    const listed = await runCli(['batch', 'list', '--user', user, ...args, ...server()], keyless);
    expect({ code: listed.code, stderr: listed.stderr }).toEqual({ code: 0, stderr: '' });
    return listed.stdout;
  };
  try {
    let batches: ListedBatch[] = [];
    await waitFor('the four batches listed as they ended', async () => {
      batches = JSON.parse(await list('--json')) as ListedBatch[];
      return batches.map((batch) => batch.status).join(' ') === 'running completed completed failed';
    });
    expect(batches.map((batch) => batch.batch_id)).toEqual([running, sealed, completed, mixed]);
    expect(batches[3]).toMatchObject({
      status: 'failed',
      status_source: 'search_attribute',
      execution_status: 'COMPLETED',
      items: { completed: 1, failed: 1, cancelled: 0, total: 2 },
      failed_items: 1,
      user_id: user,
    });
    expect(batches[2].items).toEqual({ completed: 1, failed: 0, cancelled: 0, total: 1 });
    expect(batches[1]).toMatchObject({ counts_unknown: `encrypted: key ${keyId} not held` });
    expect(batches[1].items).toBeUndefined();
    expect(batches[0]).toMatchObject({ execution_status: 'RUNNING' });
    expect(batches[0].items).toBeUndefined();
    expect(batches.every((batch) => batch.lead_run_id === undefined)).toBe(true);

    const failed = JSON.parse(await list('--status', 'failed', '--json')) as ListedBatch[];
    expect(failed.map((batch) => batch.batch_id)).toEqual([mixed]);

    const text = (await list('--limit', '4')).split('\n');
    const row = (id: string, rest: string) => new RegExp(`^${id} +${rest}$`);
    expect(text[0]).toMatch(/^BATCH ID +STATUS +DONE\/FAILED\/TOTAL +USER +LEAD RUN +AGE +NOTE$/);
    expect(text[1]).toMatch(row(running, `running +- +${user} +- +\\d+[smhd]`));
    expect(text[2]).toMatch(
      row(sealed, `completed +\\? +${user} +- +\\d+[smhd] +encrypted: key ${keyId} not held`),
    );
    expect(text[3]).toMatch(row(completed, `completed +1/0/1 +${user} +- +\\d+[smhd]`));
    expect(text[4]).toMatch(row(mixed, `failed +1/1/2 +${user} +- +\\d+[smhd]`));
    expect(text).toContain('-: still running; its counts: subagents batch status <batch-id>');
  } finally {
    await testClient().workflow.getHandle(running).terminate('test over');
  }
});

describe('batch start refuses a bad items file, each problem on a line of its own, and starts nothing', () => {
  const cases: [string, string, string[]][] = [
    [
      'duplicate keys',
      '{"key": "a", "prompt": "x"}\n{"key": "a", "prompt": "y"}\n{"key": "b", "prompt": "z"}\n{"key": "b", "prompt": "z"}\n',
      ['ITEMS: duplicate keys: "a" ×2 (lines 1, 2), "b" ×2 (lines 3, 4) (each key must be unique)'],
    ],
    ['an empty key', '{"key": "", "prompt": "x"}\n', ['ITEMS:1: key: "" is empty (write some text)']],
    [
      '21 acceptance criteria',
      `${JSON.stringify({ key: 'a', prompt: 'x', acceptance_criteria: Array.from({ length: 21 }, () => 'contains: ok') })}\n`,
      ['ITEMS:1: acceptance_criteria: a list of 21 criteria is too long (at most 20)'],
    ],
  ];

  it.each(cases)('%s', async (_, text, problems) => {
    const dir = tempDir('cli-batch-bad');
    const items = join(dir, 'items.jsonl');
    writeFileSync(items, text);
    const workspace = join(dir, 'workspace');
    const refused = await runCli(
      [
        'batch',
        'start',
        '--items',
        items,
        '--type',
        'general-purpose',
        '--workspace',
        workspace,
        ...server(),
      ],
      cliEnv(),
    );
    const lines = problems.map((line) => `  ${line.replace('ITEMS', items)}`);
    expect({ code: refused.code, stdout: refused.stdout, stderr: refused.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: `subagents: --items: ${problems.length} problem${problems.length === 1 ? '' : 's'}, no batch started:\n${lines.join('\n')}\n`,
    });
    expect(existsSync(workspace)).toBe(false);
  });

  it('a missing items file', async () => {
    const missing = join(tempDir('cli-batch-missing'), 'nope.jsonl');
    const refused = await runCli(
      ['batch', 'start', '--items', missing, '--type', 'general-purpose', ...server()],
      cliEnv(),
    );
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({
      code: 2,
      stderr: `subagents: --items: ${JSON.stringify(missing)} does not exist\n`,
    });
  });
});

it('schedules a batch from the command line: each occurrence a batch of the items; a prompt as well is refused', async () => {
  const taskQueue = uniqueTaskQueue('cli-batch-schedule');
  const name = `batch-${taskQueue.slice(-8)}`;
  const workspace = join(tempDir('cli-batch-schedule'), 'workspace');
  const env = cliEnv({ SUBAGENTS_SCHEDULE_MIN_SECONDS: '1' });
  const common = [...server(), '--task-queue', taskQueue];
  const items = ['--items', join(EXAMPLE, 'items.jsonl'), '--type', 'general-purpose'];
  const both = await runCli(
    ['schedule', 'create', name, '--every', '2s', ...items, ...common, 'Also a prompt.'],
    env,
  );
  expect({ code: both.code, stderr: both.stderr }).toEqual({
    code: 2,
    stderr: 'subagents: schedule create: give --items for a batch or a prompt for a lead run, not both\n',
  });
  await withProjectWorker(taskQueue, async () => {
    const created = await runCli(
      [
        'schedule',
        'create',
        name,
        '--every',
        '2s',
        ...items,
        '--config',
        join(EXAMPLE, 'config.yaml'),
        '--workspace',
        workspace,
        '--json',
        ...common,
      ],
      env,
    );
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({
      action: { kind: 'batch', subagent_type: 'general-purpose', items: 5, workspace },
    });
    try {
      let runs: { run_id: string; workflow_status: string; outcome?: string }[] = [];
      await waitFor(
        'one scheduled batch to close',
        async () => {
          const described = await runCli(['schedule', 'describe', name, '--json', ...common], env);
          runs = (JSON.parse(described.stdout) as { recent_runs: typeof runs }).recent_runs;
          return runs.some((run) => run.workflow_status === 'completed');
        },
        30_000,
      );
      const done = runs.find((run) => run.workflow_status === 'completed')!;
      expect(done.outcome).toBe('completed');
      const results = await runCli(['batch', 'results', done.run_id, ...common], env);
      expect(results.stdout.trim().split('\n')).toHaveLength(5);
    } finally {
      await runCli(['schedule', 'delete', name, ...common], env);
    }
  });
});
