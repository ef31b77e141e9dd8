/**
 * A worker that has just stopped, against the real server: the server still lists its poller for minutes,
 * but its last heartbeat says it shut down, so `status`, `run --address` and `doctor` say at once that no
 * worker polls (before, `status` waited out a 10 s query deadline and `run` stayed silent for minutes). A
 * killed worker, which sends no last heartbeat, is reported after a few missed ones.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { taskQueueHeartbeats, taskQueuePollers } from '../../client/worker-liveness';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';
import { CLI, cliEnv, runCli, WatchedProcess } from '../support/cli-process';
import { workerIdentity } from '../support/chaos-workers';
import {
  startLeadRun,
  startProjectWorkerProcess,
  suiteCli,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
} from '../harness/temporal';

const testClient = useTestClient();

function openRunInput(taskQueue: string) {
  const dir = tempDir('worker-liveness');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return leadInput({
    workspace,
    scriptFile: writeScript(dir, { scripts: [{ turns: [{ content: 'Done.' }] }] }),
    prompt: `Run on ${taskQueue}.`,
  });
}

async function stopWorker(worker: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  const exited = once(worker, 'exit');
  worker.kill(signal);
  await exited;
}

const doctor = (taskQueue: string) =>
  runCli(['doctor', '--address', testAddress(), '--task-queue', taskQueue], cliEnv());

it('a worker stopped a moment ago: status, run --address and doctor say no worker polls, at once', async () => {
  const taskQueue = uniqueTaskQueue('liveness-stopped');
  const worker = await startProjectWorkerProcess(taskQueue);
  const identity = workerIdentity(worker.pid ?? 0);
  const live = await doctor(taskQueue);
  expect(live.stdout).toContain(
    `ok      Workers       1 worker polls task queue "${taskQueue}": ${identity}`,
  );

  await stopWorker(worker, 'SIGTERM');
  // What misled before: the server still lists the stopped worker as a poller.
  const pollers = await taskQueuePollers(testClient(), testNamespace(), taskQueue);
  expect(pollers.map((poller) => poller.identity)).toContain(identity);

  const handle = await startLeadRun(testClient(), openRunInput(taskQueue), taskQueue);
  try {
    const status = await suiteCli(['status', handle.workflowId]);
    expect(status.code).toBe(1);
    // Said from the heartbeat, not after waiting out the query deadline ("did not answer within 10 s").
    expect(status.stderr).toContain(`is open, but no worker polls task queue "${taskQueue}"`);

    // A cancel is recorded at once and takes effect when a worker polls: no silent wait for the run's end.
    const cancel = await suiteCli(['cancel', handle.workflowId]);
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toBe(`${handle.workflowId}: cancellation requested\n`);
    expect(cancel.stderr).toContain(
      `Cancellation requested for ${handle.workflowId}; it takes effect when a worker polls: no worker ` +
        `polls task queue "${taskQueue}" at ${testAddress()}. Start one with: subagents worker`,
    );
    // The request is in the run's history, for the worker that next polls.
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.some((event) => event.workflowExecutionCancelRequestedEventAttributes)).toBe(true);

    const stopped = await doctor(taskQueue);
    expect(stopped.stdout).toContain(`note    Workers       no worker polls task queue "${taskQueue}"`);
    expect(stopped.stdout).toContain(`stopped lately: ${identity} (the server still lists them)`);

    const run = new WatchedProcess(
      [CLI, 'run', '--address', testAddress(), '--task-queue', taskQueue, 'Say hello.'],
      cliEnv(),
    );
    let runId: string | undefined;
    try {
      [, runId] = await run.waitFor('stdout', /^Run (\S+) · workspace/m, 60_000);
      // The hint's first look is 5 s after the start; it no longer waits for the server to forget the poller.
      const [hint] = await run.waitFor('stderr', /^waiting: no worker polls .*$/m, 30_000);
      expect(hint).toContain(`task queue "${taskQueue}"`);
    } finally {
      await run.stop();
      if (runId !== undefined) await testClient().workflow.getHandle(runId).terminate('test over');
    }
  } finally {
    await handle.terminate('test over');
  }
});

it('a killed worker (no last heartbeat) counts as gone after a few missed heartbeats', async () => {
  const taskQueue = uniqueTaskQueue('liveness-killed');
  const worker = await startProjectWorkerProcess(taskQueue);
  const identity = workerIdentity(worker.pid ?? 0);
  // A worker that has run a while: the server holds its heartbeat (the first comes within seconds).
  await waitFor('the worker’s first heartbeat', async () => {
    const beats = await taskQueueHeartbeats(testClient(), testNamespace(), taskQueue);
    return (beats ?? []).some((beat) => beat.identity === identity && beat.status === 'running');
  });
  await stopWorker(worker, 'SIGKILL');
  const handle = await startLeadRun(testClient(), openRunInput(taskQueue), taskQueue);
  try {
    // Three missed 5 s heartbeats, never under 15 s; the server alone lists the poller for minutes. (A
    // worker killed before its first heartbeat is gone once it has not polled for 90 s: unit-tested.)
    await waitFor(
      'doctor to count the killed worker as gone',
      async () => (await doctor(taskQueue)).stdout.includes(`stopped lately: ${identity}`),
      120_000,
    );
    const status = await suiteCli(['status', handle.workflowId]);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(`is open, but no worker polls task queue "${taskQueue}"`);
  } finally {
    await handle.terminate('test over');
  }
});
