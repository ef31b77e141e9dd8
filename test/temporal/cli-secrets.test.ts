/**
 * `subagents run --secret NAME`, end to end in the default embedded mode: without a configured key the command
 * makes one of its own and runs on a server and worker of its own, saying so; with SUBAGENTS_ENCRYPTION_KEY it
 * seals with that key. Either way the run starts (its input, sealed, passes the workflow's checks) and completes,
 * and the value appears nowhere in what the command prints.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { cliEnv, runCli } from '../support/cli-process';
import { tempDir, writeScript } from '../support/subagent-input';

function answeringConfig(dir: string): string {
  const script = writeScript(dir, { scripts: [{ agent: 'lead', turns: [{ content: 'Done.' }] }] });
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `models:\n  - name: scripted\n    provider: scripted\n    script_file: ${script}\n`);
  return config;
}

const OWN_KEY_LINE = '--secret without an encryption key: this run gets a dev server and a worker';

it.each([
  ['without a configured key: a key of its own', {}, true],
  ['with SUBAGENTS_ENCRYPTION_KEY', { SUBAGENTS_ENCRYPTION_KEY: randomBytes(32).toString('base64') }, false],
])('run --secret %s', async (_title, extra: NodeJS.ProcessEnv, ownKey) => {
  const dir = tempDir('cli-secrets');
  const value = `value-${randomUUID()}`;
  const run = await runCli(
    [
      'run',
      '--config',
      answeringConfig(dir),
      '--workspace',
      join(dir, 'ws'),
      '--secret',
      'SKILL_API_TOKEN',
      '--json',
      'Answer.',
    ],
    cliEnv({ ...extra, SKILL_API_TOKEN: value }),
  );
  expect(run.stderr).not.toMatch(/unexpected error/);
  expect(run.code).toBe(0);
  expect((JSON.parse(run.stdout) as LeadRunResult).status).toBe('completed');
  expect(run.stderr.includes(OWN_KEY_LINE)).toBe(ownKey);
  expect(run.stdout + run.stderr).not.toContain(value);
});
