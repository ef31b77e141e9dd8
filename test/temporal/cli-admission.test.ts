/**
 * Admission as a user sees it, each command a process of its own: a worker started with `--max-running 1`
 * bounds a run whose lead fans out three tasks (the run's own config allows three per response). The run's
 * event lines, `subagents status` and `subagents events` show one running and two queued.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { testAddress, testNamespace, uniqueTaskQueue, waitFor } from '../harness/temporal';
import { CLI, ROOT, cliEnv, runCli, startProcess, stop, writeDelegatingConfig } from '../support/cli-process';
import { tempDir } from '../support/subagent-input';

it('worker --max-running 1: a fan-out of three shows 1 running and 2 queued in the run, status and events', async () => {
  const dir = tempDir('cli-admission');
  // Each part takes 15 s: \`status\` and \`events\`, processes of their own, start within that on a loaded machine.
  const config = writeDelegatingConfig(dir, ['a', 'b', 'c'], 15_000);
  const taskQueue = uniqueTaskQueue('cli-admission');
  const server = ['--address', testAddress(), '--namespace', testNamespace(), '--task-queue', taskQueue];
  const env = cliEnv();
  const worker = await startProcess(
    [CLI, 'worker', ...server, '--config', config, '--max-running', '1'],
    env,
    /^admission: /,
  );
  try {
    expect(worker.line).toBe(
      'admission: max_running 1, max_queued 64, policy queue, queue timeout 300 s (every run on the task queue)',
    );
    const run = spawn(
      process.execPath,
      [CLI, 'run', ...server, '--config', config, '--workspace', join(dir, 'ws'), 'Do the parts.'],
      { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const lines: string[] = [];
    createInterface({ input: run.stdout }).on('line', (line) => lines.push(line));
    const exited = new Promise<number | null>((resolve) => run.on('close', resolve));

    await waitFor('two task_queued lines', () => lines.filter((line) => / queued: /.test(line)).length === 2);
    const runId = /^Run (\S+) /.exec(lines.find((line) => line.startsWith('Run ')) ?? '')?.[1];
    expect(runId).toBeDefined();
    const status = await runCli(['status', runId!, ...server], env);
    // One at a time: two wait while one runs (or, past the first part's end, one waits behind the second).
    expect(status.stdout).toMatch(
      /delegations: (2 queued, 1 in_progress|1 queued, 1 in_progress, 1 completed)\n$/,
    );
    const events = await runCli(['events', runId!, ...server], env);
    expect(events.stdout.split('\n').filter((line) => / queued: /.test(line))).toHaveLength(2);

    expect(await exited).toBe(0);
    const queuedLines = lines.filter((line) => / queued: /.test(line));
    expect(queuedLines.map((line) => line.replace(/^\S+ /, ''))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^[bc] queued: general-purpose "Part [bc]" \(1 running, [12] queued\)$/),
      ]),
    );
    expect(lines.filter((line) => / completed after /.test(line))).toHaveLength(3);
  } finally {
    await stop(worker.child);
  }
});
