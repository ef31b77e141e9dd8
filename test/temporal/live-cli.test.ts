/**
 * The live stream in the CLI, each command a process of its own against the suite's server (docs/live.md):
 * `run --stream` prints the lead's text and each subagent's (behind its path) while the run goes, then the
 * usual end; `watch --tokens --agent PATH` prints one subagent's text as it comes and how it ended; `watch
 * --tokens` on a run that has ended prints the lead's text from the stream's backlog.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STREAM_DIR_ENV } from '../../payloads/stream/bridge';
import { CLI, cliEnv, runCli, WatchedProcess } from '../support/cli-process';
import { LEAD_ANSWER, PARTS, partAnswer, testFileBridge, threePartScript } from '../support/live-stream';
import { scriptedWorkspace } from '../support/subagent-input';
import { testAddress, testNamespace, uniqueTaskQueue, withProjectWorker } from '../harness/temporal';

/** Each part's answer streams over this long: long enough to be seen while the run goes. */
const ANSWER_MS = 3000;

it('run --stream prints every agent as it writes; watch --tokens follows one agent', async () => {
  const { dir, workspace, scriptFile } = scriptedWorkspace('live-cli', threePartScript(ANSWER_MS));
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `models:\n  - name: scripted\n    provider: scripted\n    model: live\n    script_file: ${scriptFile}\n` +
      'subagent_runtime:\n  max_running: 3\nsubagents:\n  max_concurrent: 3\n',
  );
  const bridge = testFileBridge('cli');
  const env = cliEnv({ [STREAM_DIR_ENV]: bridge.dir });
  const taskQueue = uniqueTaskQueue('live-cli');
  const server = ['--address', testAddress(), '--namespace', testNamespace()];
  await withProjectWorker(
    taskQueue,
    async () => {
      const run = new WatchedProcess(
        [CLI, 'run', '--stream', ...server, '--task-queue', taskQueue, '--config', config].concat([
          '--workspace',
          workspace,
          'Do the three parts.',
        ]),
        env,
      );
      const runId = (await run.waitFor('stdout', /^Run (\S+) · workspace/m, 120_000))[1];
      // A subagent's text while the run goes: its first words, then one agent followed by another process.
      await run.waitFor('stdout', /^\[part1\] Part /m, 120_000);
      const watch = new WatchedProcess(
        [CLI, 'watch', runId, '--tokens', '--agent', `${runId}/task/part1`, ...server],
        env,
      );
      expect(await run.exited).toEqual({ code: 0, signal: null });
      expect(await watch.exited).toEqual({ code: 0, signal: null });

      // Each part's pieces, wherever another agent's lines cut them, add up to its answer.
      const lines = run.stdout.split('\n');
      for (const id of PARTS) {
        const own = lines.filter((line) => line.startsWith(`[${id}] `));
        expect(own.map((line) => line.slice(id.length + 3)).join('')).toBe(partAnswer(id));
      }
      // The lead's text, unprefixed between the task events' lines, then the usual summary and ledger.
      const summaryAt = lines.findIndex((line) => /^run +run-/.test(line));
      const leadText = lines
        .slice(1, summaryAt)
        .filter((line) => !line.startsWith('[') && !/^\d\d:\d\d:\d\d /.test(line))
        .join('');
      expect(leadText).toBe(LEAD_ANSWER);
      expect(lines.findIndex((line) => line.startsWith('Ledger:'))).toBeGreaterThan(summaryAt);
      expect(run.stdout).toMatch(/^status +completed/m);

      expect(watch.stdout).toBe(`${partAnswer('part1')}\npart1 completed\n`);
      // After the end: the lead's text from the backlog, and the run's end.
      const ended = await runCli(['watch', runId, '--tokens', ...server], env);
      expect({ code: ended.code, stdout: ended.stdout }).toEqual({
        code: 0,
        stdout: `${LEAD_ANSWER}\nrun completed\n`,
      });
    },
    { stream: bridge },
  );
});
