/**
 * Flags and the commands' answers, end to end: each command a process of its own, so what is checked is what
 * a user sees (the run's ledger, the one line on stderr, the exit code).
 */
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { testAddress, testNamespace } from '../harness/temporal';
import { cliEnv, runCli, writeDelegatingConfig } from '../support/cli-process';
import { tempDir } from '../support/subagent-input';

it('run --max-running 2 lets one response delegate two tasks at once (the default allows three)', async () => {
  const dir = tempDir('cli-max-running');
  const parts = ['a', 'b', 'c', 'd'];
  const config = writeDelegatingConfig(dir, parts);

  const run = await runCli(
    [
      'run',
      '--config',
      config,
      '--max-running',
      '2',
      '--workspace',
      join(dir, 'ws'),
      '--json',
      'Do the parts.',
    ],
    cliEnv(),
  );
  expect(run.stderr).not.toMatch(/unexpected error/);
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout) as LeadRunResult;
  // The per-response limit follows the capacity down: the calls past it were dropped, never started.
  expect(result.ledger.map((entry) => [entry.id, entry.status])).toEqual([
    ['a', 'completed'],
    ['b', 'completed'],
  ]);
});

it('status, ledger and events of a run the server does not know end in one line and exit code 2', async () => {
  const env = cliEnv();
  const address = testAddress();
  for (const command of ['status', 'ledger', 'events']) {
    const run = await runCli(
      [command, 'run-that-never-was', '--address', address, '--namespace', testNamespace()],
      env,
    );
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(`subagents: ${command}: no run run-that-never-was on ${address}`);
  }
});

it('worker --provider openai says in one line that the flag belongs to `run`, exit code 2', async () => {
  const run = await runCli(['worker', '--provider', 'openai', '--model', 'gpt-4o-mini'], cliEnv());
  expect(run.code).toBe(2);
  expect(run.stderr).toBe(
    'subagents: worker: --provider is a flag of `subagents run` (the run chooses the model, not `subagents worker`)\n',
  );
  expect(run.stdout).toBe('');
});
