/**
 * `subagents run` without `--address` beside a recorded `subagents dev-server`, each command a process of its
 * own: a `subagents worker` that polls the run's task queue there with the run's config runs the run (this
 * command builds no worker); where none polls, or the one the server lists has stopped, the command runs its
 * own; where the one that polls runs another config, the command runs its own on a task queue of the config's
 * own; `--embedded` runs a server and a worker of its own whatever runs already.
 */
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { LeadRunResult } from '../../contracts/lead';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../../contracts/config/temporal';
import { PICKUP_MS, serverWorkersLine } from '../../cli/run-session';
import {
  CLI,
  cliEnv,
  runCli,
  startProcess,
  stop,
  writeDelegatingConfig,
  type Finished,
} from '../support/cli-process';
import { tempDir } from '../support/subagent-input';
import { startFakeOpenAI } from '../support/fake-openai';
import { taskQueueHeartbeats } from '../../contracts/worker-heartbeats';
import { connectClient, uniqueTaskQueue, waitFor } from '../harness/temporal';

/** The identities that took the run's workflow and activity tasks, from its history. */
async function taskIdentities(client: Client, runId: string): Promise<string[]> {
  const { events } = await client.workflow.getHandle(runId).fetchHistory();
  const identities = new Set<string>();
  for (const event of events ?? []) {
    const identity =
      event.workflowTaskCompletedEventAttributes?.identity ??
      event.activityTaskStartedEventAttributes?.identity ??
      event.workflowTaskStartedEventAttributes?.identity;
    if (identity) identities.add(identity);
  }
  return [...identities];
}

function completedRun(run: Finished): LeadRunResult {
  if (run.code !== 0) console.log(`DEBUG stderr:\n${run.stderr}\nstdout:\n${run.stdout}`);
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout) as LeadRunResult;
  expect(result.status).toBe('completed');
  expect(result.ledger.map((e) => e.status)).toEqual(['completed', 'completed']);
  return result;
}

describe('`run` beside a recorded `dev-server`', () => {
  const env = cliEnv();
  const dir = tempDir('run-workers');
  const config = writeDelegatingConfig(dir, ['a', 'b']);
  const processes: ChildProcess[] = [];
  let address: string;
  let workerIdentity: string;
  let client: Client;
  let closeClient: () => Promise<void>;

  const run = (...args: string[]) =>
    runCli(
      ['run', '--config', config, '--json', '--workspace', tempDir('ws'), ...args, 'Do the two parts.'],
      env,
    );

  beforeAll(async () => {
    const server = await startProcess(
      [CLI, 'dev-server', '--db-filename', join(dir, 'temporal.db')],
      env,
      /"address"/,
    );
    processes.push(server.child);
    ({ address } = JSON.parse(server.line) as { address: string });
    // No --address: the worker finds the recorded server, as `run` does.
    const worker = await startProcess([CLI, 'worker', '--config', config], env, /worker ready/);
    processes.push(worker.child);
    // The SDK's identity, as the project's workers name themselves (worker/worker.ts).
    workerIdentity = `${worker.child.pid}@${hostname()}`;
    ({ client, close: closeClient } = await connectClient(address));
  }, 120_000);

  afterAll(async () => {
    await closeClient?.();
    for (const child of processes.reverse()) await stop(child);
  });

  it("submits to the worker that polls the run's task queue there and says so; it builds none itself", async () => {
    const finished = await run();
    const result = completedRun(finished);
    expect(finished.stderr).toContain(
      `${serverWorkersLine({ address, taskQueue: DEFAULT_TASK_QUEUE, workers: 1 })}\n`,
    );
    // Neither a server nor a worker of its own: no workflow bundle, no dev server lines.
    expect(finished.stderr).not.toMatch(/Bundling the workflows|Temporal dev server|No worker took/);
    expect(await taskIdentities(client, result.run_id)).toEqual([workerIdentity]);
  });

  it('runs a worker of its own on the recorded server when no worker polls the task queue', async () => {
    const taskQueue = uniqueTaskQueue('run-own-worker');
    const finished = await run('--task-queue', taskQueue);
    const result = completedRun(finished);
    expect(finished.stderr).toContain(
      `Using the dev server on ${address} (started by \`subagents dev-server\`); no worker polls its task ` +
        `queue "${taskQueue}", so this command runs one.\n`,
    );
    const identities = await taskIdentities(client, result.run_id);
    expect(identities).toHaveLength(1);
    expect(identities[0]).not.toBe(workerIdentity);
  });

  it('runs a worker of its own when the worker the server still lists has stopped', async () => {
    const taskQueue = uniqueTaskQueue('run-stopped-worker');
    const gone = await startProcess(
      [CLI, 'worker', '--config', config, '--task-queue', taskQueue],
      env,
      /worker ready/,
    );
    const goneIdentity = `${gone.child.pid}@${hostname()}`;
    await stop(gone.child);
    const finished = await run('--task-queue', taskQueue);
    const result = completedRun(finished);
    // The server lists a stopped worker's poller for minutes: the run waits PICKUP_MS for it, then gets one.
    // (Should the server stop listing it, `run` finds no worker and runs its own at once.)
    expect(finished.stderr).toMatch(
      new RegExp(
        `No worker took run ${result.run_id} within ${PICKUP_MS / 1000} s .*: this command runs one\\.\\n|` +
          `no worker polls its task queue "${taskQueue}", so this command runs one\\.\\n`,
      ),
    );
    const identities = await taskIdentities(client, result.run_id);
    expect(identities).toHaveLength(1);
    expect(identities[0]).not.toBe(goneIdentity);
  });

  it("runs a worker of its own on a task queue of its own when the one there lacks the run's key", async () => {
    // The same config file on both sides; the worker's shell has no key for its model, the run's has one.
    const fake = await startFakeOpenAI({
      api_key: 'key-b',
      respond: () => ({ content: 'Answered with B.' }),
    });
    try {
      const keyed = join(dir, 'keyed.yaml');
      writeFileSync(keyed, 'models:\n  - name: fake\n    provider: openai\n    model: fake-model\n');
      const taskQueue = uniqueTaskQueue('run-other-config');
      const keyless = { ...env };
      delete keyless.OPENAI_API_KEY;
      delete keyless.OPENAI_BASE_URL;
      const other = await startProcess(
        [CLI, 'worker', '--config', keyed, '--task-queue', taskQueue],
        keyless,
        /worker ready/,
      );
      processes.push(other.child);
      const otherIdentity = `${other.child.pid}@${hostname()}`;
      // Once the server holds its heartbeat, with the digest of its config: what `run` compares.
      await waitFor('the keyless worker’s digest in its heartbeat', async () => {
        const beats = await taskQueueHeartbeats(client, DEFAULT_NAMESPACE, taskQueue);
        return (beats ?? []).some(
          (beat) => beat.identity === otherIdentity && beat.configDigest !== undefined,
        );
      });

      const finished = await runCli(
        [
          'run',
          '--config',
          keyed,
          '--json',
          '--workspace',
          tempDir('ws'),
          '--task-queue',
          taskQueue,
          'Answer.',
        ],
        { ...env, OPENAI_API_KEY: 'key-b', OPENAI_BASE_URL: fake.url },
      );
      if (finished.code !== 0) console.log(`DEBUG stderr:\n${finished.stderr}`);
      expect(finished.code).toBe(0);
      const result = JSON.parse(finished.stdout) as LeadRunResult;
      expect(result.status).toBe('completed');
      expect(result.final_output).toBe('Answered with B.');
      const line = new RegExp(
        `and a worker of this command's own on task queue "(${taskQueue}-config-[0-9a-f]{16})": the worker ` +
          `polling its task queue "${taskQueue}" runs another config \\([0-9a-f]{16}; this run's: [0-9a-f]{16}\\)\\.\\n`,
      );
      const ownQueue = line.exec(finished.stderr)?.[1];
      expect(ownQueue).toBeDefined();
      // Its own queue, which the keyless worker does not poll: none of the run's tasks went there.
      expect((await client.workflow.getHandle(result.run_id).describe()).taskQueue).toBe(ownQueue);
      expect(await taskIdentities(client, result.run_id)).not.toContain(otherIdentity);
      expect(fake.chatRequests.length).toBeGreaterThan(0);
    } finally {
      await fake.close();
    }
  });

  it('--embedded: a server and a worker of its own, though a worker serves the recorded server', async () => {
    const finished = await run('--embedded');
    const result = completedRun(finished);
    expect(finished.stderr).toMatch(/^Temporal dev server \(.*\) on 127\.0\.0\.1:\d+/m);
    expect(finished.stderr).not.toContain(`Using the dev server on ${address}`);
    // The run lived on the command's own server, gone with it.
    await expect(client.workflow.getHandle(result.run_id).describe()).rejects.toThrow(WorkflowNotFoundError);
  });

  it('--embedded with an address is refused in one line, before anything starts', async () => {
    const finished = await run('--embedded', '--address', address);
    expect(finished.code).toBe(2);
    expect(finished.stdout).toBe('');
    expect(finished.stderr).toBe(
      `subagents: --embedded starts a server of this command's own, but one is given (${address}: ` +
        '--address, temporal.address, TEMPORAL_ADDRESS or a Temporal profile); give one or the other\n',
    );
  });
});
