/**
 * What the CLI prints, each command a process of its own: `run --json` keeps stdout for the JSON while the
 * SDK (its Rust core included) logs on stderr.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { cliEnv, runCli } from '../support/cli-process';
import { tempDir, writeScript } from '../support/subagent-input';

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
  const result = JSON.parse(run.stdout) as LeadRunResult;
  expect(result.final_output).toBe('The slow part timed out; here is the rest.');
  expect(result.ledger.map((entry) => [entry.id, entry.status])).toEqual([['slow', 'timed_out']]);
  expect(run.stderr).toMatch(/\[INFO\] Initializing worker .*sdkComponent: 'core'/);
  // The run header goes to stderr too, where a user watching the terminal sees which run this is.
  expect(run.stderr).toContain(`Run ${result.run_id} · workspace`);
  expect(run.stderr).not.toMatch(STACK_FRAME);
});
