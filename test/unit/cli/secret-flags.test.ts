/**
 * `--secret NAME` on the client side: the flag (repeatable, `run` and `start`, refused by commands whose runs take
 * none), the value read from the environment, sealed into the run's input so that no plain value is ever
 * serialized, and the key it is sealed with (a shared one, or an embedded run's own). A missing variable ends
 * the command with one line and exit code 2, before anything is made.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withSecrets } from '../../../client/api';
import { parseFlags, RUN_FLAGS, secretFlags, UsageError } from '../../../cli/flags';
import { ownServerForSecrets } from '../../../cli/run-command';
import { parseConfig } from '../../../contracts/config';
import { buildLeadRunInput } from '../../../contracts/config/lead-input';
import { assertLeadRunInput } from '../../../contracts/inputs';
import { PayloadKeyring } from '../../../payloads/encryption-codec';
import { openSecrets, processSecretsKeyring, SecretError } from '../../../payloads/secrets';

const cli = join(__dirname, '..', '..', '..', 'client', 'cli.js');
const VALUE = 'sk-live-4c1f0e9b7a-not-for-history';
const keyring = new PayloadKeyring([{ id: 'shared', material: randomBytes(32) }]);

function input() {
  const { config } = parseConfig({});
  return buildLeadRunInput(config, { prompt: 'p', workspace: '/tmp/w', run_id: 'run-1' });
}

describe('--secret NAME', () => {
  it('is repeatable and reads each value from the environment, by name', () => {
    const { values } = parseFlags(['--secret', 'API_TOKEN', '--secret', 'OTHER', 'prompt'], RUN_FLAGS);
    expect(values.secret).toEqual(['API_TOKEN', 'OTHER']);
    expect(secretFlags(values, { API_TOKEN: VALUE, OTHER: 'x', UNRELATED: 'y' })).toEqual({
      API_TOKEN: VALUE,
      OTHER: 'x',
    });
    expect(secretFlags(parseFlags(['prompt'], RUN_FLAGS).values, {})).toBeUndefined();
  });

  it('refuses a variable that is not set, and a name that is not a variable name, naming it', () => {
    const { values } = parseFlags(['--secret', 'API_TOKEN'], RUN_FLAGS);
    expect(() => secretFlags(values, {})).toThrow(UsageError);
    expect(() => secretFlags(values, {})).toThrow(
      /^--secret API_TOKEN: the environment variable API_TOKEN is not set/,
    );
    const bad = parseFlags(['--secret', '1-bad'], RUN_FLAGS).values;
    expect(() => secretFlags(bad, { '1-bad': 'v' })).toThrow(/--secret "1-bad" is not a secret name/);
  });

  it('is a flag of run: batch start says so', () => {
    expect(() => parseFlags(['--secret', 'A'], { items: { type: 'string' } }, 'batch start')).toThrow(
      /batch start: --secret is a flag of `subagents run` \(the run takes the secrets its skills need/,
    );
  });
});

describe('the sealed input', () => {
  it('holds the values sealed only, opens to them again, and passes the run input checks', () => {
    const sealed = withSecrets(input(), { API_TOKEN: VALUE, B_KEY: 'second-value' }, keyring);
    const serialized = JSON.stringify(sealed);
    expect(serialized).not.toContain(VALUE);
    expect(serialized).not.toContain('second-value');
    expect(sealed.scope.secrets?.map((secret) => [secret.name, secret.key_id])).toEqual([
      ['API_TOKEN', 'shared'],
      ['B_KEY', 'shared'],
    ]);
    expect(() => assertLeadRunInput(sealed)).not.toThrow();
    expect(openSecrets(keyring, sealed.scope.secrets ?? [])).toEqual({
      API_TOKEN: VALUE,
      B_KEY: 'second-value',
    });
    // The same request sealed again is the same input (a retried start keeps its digest).
    expect(withSecrets(input(), { API_TOKEN: VALUE, B_KEY: 'second-value' }, keyring)).toEqual(sealed);
  });

  it('replaces a secret of the same name, and leaves an input without secrets as it was', () => {
    const first = withSecrets(input(), { API_TOKEN: 'old-value' }, keyring);
    const again = withSecrets(first, { API_TOKEN: VALUE }, keyring);
    expect(openSecrets(keyring, again.scope.secrets ?? [])).toEqual({ API_TOKEN: VALUE });
    expect(withSecrets(input(), undefined, keyring)).toEqual(input());
    expect(withSecrets(input(), {}, keyring)).toEqual(input());
  });

  it('cannot be sealed without a key', () => {
    expect(() => withSecrets(input(), { API_TOKEN: VALUE }, new PayloadKeyring([]))).toThrow(SecretError);
  });
});

describe('the key secrets are sealed with', () => {
  it('refuses a run on a server given by address when no key is configured', () => {
    expect(() => ownServerForSecrets('temporal.example:7233', 'SUBAGENTS_ENCRYPTION_KEY')).toThrow(
      /--secret needs an encryption key shared by this command and the workers of temporal\.example:7233.*set SUBAGENTS_ENCRYPTION_KEY/,
    );
  });

  it("gives an embedded run a key of this process's own, which the process's worker keyring opens", () => {
    const { config } = parseConfig({});
    const settings = config.payloads.encryption;
    expect(processSecretsKeyring(settings).keyId).toBeUndefined();
    const write = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(ownServerForSecrets(undefined, settings.key_env)).toBe(true);
    } finally {
      write.mockRestore();
    }
    const client = processSecretsKeyring(settings);
    expect(client.keyId).toMatch(/^process-[0-9a-f]{8}$/);
    const sealed = withSecrets(input(), { API_TOKEN: VALUE }, client);
    // The worker builds its own keyring from the same process state (worker/worker.ts).
    expect(openSecrets(processSecretsKeyring(settings), sealed.scope.secrets ?? [])).toEqual({
      API_TOKEN: VALUE,
    });
  });
});

describe('subagents run --secret, as a user runs it', () => {
  function run(args: string[], env: NodeJS.ProcessEnv) {
    const root = mkdtempSync(join(tmpdir(), 'secret-flag-'));
    const result = spawnSync(process.execPath, [cli, 'run', ...args], {
      encoding: 'utf8',
      env: { ...env, PATH: process.env.PATH, HOME: root },
      cwd: root,
    });
    return { code: result.status, stderr: result.stderr, stdout: result.stdout, root };
  }

  it('ends with exit code 2 and one line when the variable is not set, before any workspace is made', () => {
    const { code, stderr, stdout, root } = run(['--secret', 'NOT_SET_ANYWHERE', 'a prompt'], {});
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(
      '--secret NOT_SET_ANYWHERE: the environment variable NOT_SET_ANYWHERE is not set',
    );
    expect(readdirSync(root)).toEqual([]);
  });

  it('refuses a server given by address without a shared key, never printing the value', () => {
    const { code, stderr } = run(['--secret', 'API_TOKEN', '--address', '127.0.0.1:1', 'a prompt'], {
      API_TOKEN: VALUE,
    });
    expect(code).toBe(2);
    expect(stderr).toContain('--secret needs an encryption key shared by this command and the workers');
    expect(stderr).not.toContain(VALUE);
  });
});
