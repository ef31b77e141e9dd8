/**
 * SIGINT and SIGTERM to the CLI's long-running commands, each a process of its own: an embedded `run` cancels
 * its run and sees it end, a second signal exits at once saying how to resume or cancel the run; `run
 * --address` stops following a run that goes on on its server; `subagents worker` shuts down once and exits 0.
 */
import { join } from 'node:path';
import {
  CLI,
  cliEnv,
  startProcess,
  stop,
  WatchedProcess,
  writeDelegatingConfig,
} from '../support/cli-process';
import { tempDir } from '../support/subagent-input';
import { connectClient, testAddress, uniqueTaskQueue } from '../harness/temporal';

const STACK_FRAME = /\n\s+at /;

/** `subagents <args>` as a process whose output the test reads while it runs. */
class CliProcess extends WatchedProcess {
  constructor(args: string[], env: NodeJS.ProcessEnv) {
    super([CLI, ...args], env);
  }
}

/** A run whose three subagents each take a minute: still running when the test interrupts it. */
function slowRunArgs(label: string): string[] {
  const dir = tempDir(label);
  return ['--config', writeDelegatingConfig(dir, ['a', 'b', 'c'], 60_000), '--workspace', join(dir, 'ws')];
}

it('an embedded `run`: the first SIGINT cancels the run, sees it end cancelled and exits 130', async () => {
  const run = new CliProcess(['run', ...slowRunArgs('sigint-embedded'), 'Do the three parts.'], cliEnv());
  try {
    const [, runId] = await run.waitFor('stdout', /^Run (\S+) · workspace/m, 90_000);
    await run.waitFor('stdout', /c started: general-purpose/, 30_000);
    run.kill('SIGINT');
    const exit = await run.exit();
    if (exit.code !== 130) console.log(`DEBUG stderr:\n${run.stderr}\nstdout:\n${run.stdout}`);
    expect(exit).toMatchObject({ code: 130, signal: null });
    // It waited for the run to end, not for the subagents' minute (on two busy cores it takes up to ~30 s).
    expect(exit.ms).toBeLessThan(45_000);
    expect(run.stderr).toContain(`SIGINT: cancelling run ${runId}`);
    expect(run.stderr).toContain(`Cancelled run ${runId}: 3 delegations cancelled`);
    expect(run.stdout).toMatch(/^status\s+cancelled/m);
    expect(run.stdout.match(/^[abc]\s+general-purpose\s+cancelled/gm)).toHaveLength(3);
    expect(run.stderr).not.toMatch(/unexpected error|Error:/);
    expect(run.stderr).not.toMatch(STACK_FRAME);
  } finally {
    await run.stop();
  }
});

it('an embedded `run` on `subagents dev-server`: a second SIGINT exits at once, saying how to resume or cancel the run', async () => {
  const env = cliEnv();
  const server = await startProcess(
    [CLI, 'dev-server', '--db-filename', join(tempDir('sigint-again'), 'temporal.db')],
    env,
    /"address"/,
  );
  const run = new CliProcess(['run', ...slowRunArgs('sigint-again'), 'Do the three parts.'], env);
  try {
    const { address } = JSON.parse(server.line) as { address: string };
    const [, runId] = await run.waitFor('stdout', /^Run (\S+) · workspace/m, 90_000);
    await run.waitFor('stdout', /c started: general-purpose/, 30_000);
    run.kill('SIGINT');
    await run.waitFor('stderr', /SIGINT: cancelling run/, 10_000);
    run.kill('SIGINT');
    const exit = await run.exit();
    expect(exit).toMatchObject({ code: 130, signal: null });
    expect(exit.ms).toBeLessThan(5_000);
    expect(run.stderr).toContain('SIGINT again: exiting without waiting');
    expect(run.stderr).toContain(`run ${runId} stays on the dev server on ${address}`);
    expect(run.stderr).toMatch(
      /^ {2}resume it: subagents worker --address \S+ --task-queue durable-subagents --config /m,
    );
    expect(run.stderr).toContain(`  cancel it: subagents cancel ${runId} --address ${address} --config `);
    expect(run.stderr).not.toMatch(STACK_FRAME);

    // The run is still there, on the server that outlives the command.
    const { client, close } = await connectClient(address);
    try {
      const handle = client.workflow.getHandle(runId);
      expect((await handle.describe()).status.name).toBe('RUNNING');
      await handle.terminate('test cleanup');
    } finally {
      await close();
    }
  } finally {
    await run.stop();
    await stop(server.child);
  }
});

it('`run --address`: SIGINT stops following the run, which goes on on the server; exit 130', async () => {
  const address = testAddress();
  // No worker polls this task queue: the run stays running, whatever the test's timing.
  const taskQueue = uniqueTaskQueue('sigint-detach');
  const dir = tempDir('sigint-detach');
  const config = writeDelegatingConfig(dir, ['a']);
  const run = new CliProcess(
    ['run', '--address', address, '--task-queue', taskQueue, '--config', config, 'Do the part.'],
    cliEnv(),
  );
  let runId: string | undefined;
  try {
    [, runId] = await run.waitFor('stdout', /^Run (\S+) · workspace/m, 60_000);
    run.kill('SIGINT');
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(run.stderr).toContain(
      `subagents: SIGINT: stopped following run ${runId}; it keeps running on ${address}\n` +
        `  follow it: subagents status ${runId} --address ${address} --config ${config}\n` +
        `             subagents events ${runId} --address ${address} --config ${config} --follow\n` +
        `  cancel it: subagents cancel ${runId} --address ${address} --config ${config}\n`,
    );
    expect(run.stderr).not.toMatch(STACK_FRAME);
  } finally {
    await run.stop();
    if (runId !== undefined) {
      const { client, close } = await connectClient();
      try {
        const handle = client.workflow.getHandle(runId);
        expect((await handle.describe()).status.name).toBe('RUNNING');
        await handle.cancel();
        await handle.terminate('test cleanup: no worker polls its task queue');
      } finally {
        await close();
      }
    }
  }
});

describe('`subagents worker` stopped with SIGINT exits 0 without a stack trace', () => {
  it.each([
    ['once', 1],
    ['twice in a row (the second while it drains)', 2],
  ])('%s', async (_name, signals) => {
    const worker = new CliProcess(
      ['worker', '--address', testAddress(), '--task-queue', uniqueTaskQueue('sigint-worker')],
      cliEnv(),
    );
    try {
      await worker.waitFor('stdout', /^worker ready: /m, 90_000);
      for (let i = 0; i < signals; i++) worker.kill('SIGINT');
      const exit = await worker.exit();
      // A second signal may find the worker stopped already (0) or still draining (exits at once, 130).
      expect([0, signals === 1 ? 0 : 130]).toContain(exit.code);
      expect(exit.signal).toBeNull();
      expect(worker.stderr).toContain('SIGINT: stopping the worker');
      expect(worker.stderr).not.toMatch(/IllegalStateError|DRAINING|Error:/);
      expect(worker.stderr).not.toMatch(STACK_FRAME);
    } finally {
      await worker.stop();
    }
  });
});
