import { randomBytes } from 'node:crypto';
import { createToolActivities, machineProbes } from '../../../../activities/tools';
import {
  inheritedEnv,
  isSecretLookingName,
  MIN_MASKED_SECRET_CHARS,
  openBashSecrets,
  secretMasker,
} from '../../../../activities/tools/bash-secrets';
import { OutputCollector } from '../../../../activities/tools/output';
import { ToolError } from '../../../../activities/tools/tool-context';
import { maskedSecret } from '../../../../contracts/secrets';
import type { SandboxKind, SandboxSettings } from '../../../../contracts/tools';
import { PayloadKeyring } from '../../../../payloads/encryption-codec';
import { sealSecrets } from '../../../../payloads/secrets';
import { describeEachSandbox } from '../../../support/sandboxes';
import { callTool, makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture();
});

afterEach(async () => {
  await removeFixture(fx);
});

const keyring = new PayloadKeyring([{ id: 'test-key', material: randomBytes(32) }]);
const otherKeyring = new PayloadKeyring([{ id: 'other-key', material: randomBytes(32) }]);
const TOKEN = 'tok-3f9a77c1-very-secret';
const probes = machineProbes();
const { executeToolCall: withKeyring } = createToolActivities({ probes, keyring });
const { executeToolCall: withoutKeyring } = createToolActivities({ probes });

/** The worker's secret-looking variables, set for the whole file: no bash kind may pass them on. */
const WORKER_SECRETS: Record<string, string> = {
  TEST_OPENAI_API_KEY: 'worker-api-key-value',
  TEST_CLIENT_SECRET: 'worker-client-secret-value',
  TEST_GH_TOKEN: 'worker-token-value',
  TEST_DB_PASSWORD: 'worker-password-value',
  DATABASE_URL: 'postgres://user:worker-db-value@db/app',
};
const saved: Record<string, string | undefined> = {};
beforeAll(() => {
  for (const [name, value] of Object.entries(WORKER_SECRETS)) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
afterAll(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('the environment policy and the masking, pure parts', () => {
  it.each([
    'OPENAI_API_KEY',
    'aws_secret_access_key',
    'GITHUB_TOKEN',
    'PGPASSWORD',
    'database_url',
    'SSH_KEYFILE',
  ])('%s looks secret', (name) => expect(isSecretLookingName(name)).toBe(true));

  it.each(['PATH', 'HOME', 'LANG', 'TZ', 'DATABASE_HOST'])('%s does not', (name) =>
    expect(isSecretLookingName(name)).toBe(false),
  );

  it('inherits only the named variables that are set and do not look secret', () => {
    expect(inheritedEnv(['PATH', 'MY_TOKEN', 'UNSET'], { PATH: '/bin', MY_TOKEN: 'x', OTHER: 'y' })).toEqual({
      PATH: '/bin',
    });
  });

  it('masks the longest value first, and no value shorter than the minimum', () => {
    const { mask, longest } = secretMasker({ LONG: 'abcdef-123', PART: 'abcdef', TINY: 'ab' });
    expect(mask('x abcdef-123 y abcdef z ab')).toBe(
      `x ${maskedSecret('LONG')} y ${maskedSecret('PART')} z ab`,
    );
    expect(longest).toBe(10);
    expect(MIN_MASKED_SECRET_CHARS).toBe(4);
  });

  it('never shows part of a value cut by the output cap', () => {
    const value = 'Zq9XsecretVALUE77';
    const { mask, longest } = secretMasker({ S: value });
    for (const offset of [0, 1, 5, 13, 40, 97]) {
      const collector = new OutputCollector(200, mask, longest);
      collector.push('.'.repeat(offset));
      for (let i = 0; i < 100; i += 1) collector.push(`${value}-`);
      const text = collector.text();
      expect(text).toContain('characters omitted');
      for (let cut = 4; cut <= value.length; cut += 1) {
        expect(text).not.toContain(value.slice(0, cut));
        expect(text).not.toContain(value.slice(value.length - cut));
      }
    }
  });

  it('opens what was sealed, and names (never shows) a secret that does not open', () => {
    const sealed = sealSecrets(keyring, { SKILL_TOKEN: TOKEN });
    expect(openBashSecrets(sealed, keyring)).toEqual({ SKILL_TOKEN: TOKEN });
    expect(openBashSecrets(undefined, undefined)).toEqual({});
    for (const ring of [otherKeyring, undefined]) {
      let thrown: unknown;
      try {
        openBashSecrets(sealed, ring);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(ToolError);
      expect((thrown as Error).message).toMatch(/^bash: secret SKILL_TOKEN cannot be opened: /);
      expect((thrown as Error).message).not.toContain(TOKEN);
    }
    // Moved under another name, it does not open either.
    const moved = [{ ...sealed[0], name: 'OTHER' }];
    expect(() => openBashSecrets(moved, keyring)).toThrow(/secret OTHER cannot be opened/);
  });
});

const KINDS: { name: string; settings: Partial<SandboxSettings> }[] = [
  { name: 'host', settings: { kind: 'host', allow_host_bash: true } },
];

function secretsSuite(name: string, settings: Partial<SandboxSettings>): void {
  const bash = (command: string, options: { secrets?: Record<string, string>; keyring?: boolean } = {}) =>
    callTool(
      fx.workspace,
      'bash',
      { command },
      {
        sandbox: settings,
        activity: options.keyring === false ? withoutKeyring : withKeyring,
        ...(options.secrets && { secrets: sealSecrets(keyring, options.secrets) }),
      },
    );

  it(`passes none of the worker's secret-looking variables on (${name})`, async () => {
    const result = await bash('env');
    expect(result.is_error).toBe(false);
    for (const [variable, value] of Object.entries(WORKER_SECRETS)) {
      expect(result.content).not.toContain(variable);
      expect(result.content).not.toContain(value);
    }
  });

  it(`hands the secrets to the command, and masks them in what comes back (${name})`, async () => {
    const result = await bash(
      'echo "token=$SKILL_TOKEN short=$SHORT"; printf %s "$SKILL_TOKEN" | wc -c; echo "$SKILL_TOKEN" >&2; ' +
        'test "$SKILL_TOKEN" = "' +
        TOKEN +
        '" && echo same',
      { secrets: { SKILL_TOKEN: TOKEN, SHORT: 'ab' } },
    );
    expect(result.is_error).toBe(false);
    expect(result.content).not.toContain(TOKEN);
    expect(result.content).toContain(`token=${maskedSecret('SKILL_TOKEN')} short=ab`);
    expect(result.content).toMatch(new RegExp(`\\b${TOKEN.length}\\b`));
    expect(result.content).toContain(`${maskedSecret('SKILL_TOKEN')}\n`);
  });

  it(`fails the call, naming the secret, when it does not open (${name})`, async () => {
    const result = await bash('echo ran', { secrets: { SKILL_TOKEN: TOKEN }, keyring: false });
    expect(result.is_error).toBe(true);
    expect(result.content).toContain('secret SKILL_TOKEN cannot be opened');
    expect(result.content).not.toContain('ran');
    expect(result.content).not.toContain(TOKEN);
  });
}

describeEachSandbox('bash and secrets', (sandbox) =>
  secretsSuite(sandbox.name, { kind: sandbox.kind as SandboxKind }),
);

for (const kind of KINDS)
  describe(`bash and secrets (${kind.name}, unsandboxed)`, () => secretsSuite(kind.name, kind.settings));
