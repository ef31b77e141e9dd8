/**
 * Which key payloads are encrypted with, by its id and never the key: the Payloads check of `subagents doctor`
 * and the worker's start line say the same.
 */
import { randomBytes } from 'node:crypto';
import { defaultConfig } from '../../../contracts/config';
import { payloadsCheck, renderDoctor, type DoctorContext } from '../../../cli/doctor';
import { keyIdOf } from '../../../payloads/encryption-keys';
import { workerStartLines } from '../../../worker/worker-main';

const newKey = () => randomBytes(32).toString('base64');
const context = (env: NodeJS.ProcessEnv, config = defaultConfig()): DoctorContext => ({
  env,
  values: {},
  config: { config, warnings: [] },
});

describe('the Payloads check of doctor', () => {
  it('without a key: not encrypted, and how to turn it on', () => {
    const check = payloadsCheck(context({}));
    expect(check).toEqual({
      name: 'Payloads',
      status: 'ok',
      lines: ['not encrypted (set SUBAGENTS_ENCRYPTION_KEY to encrypt)'],
    });
  });

  it('with keys: the id of the one that encrypts and how many are held, no key material', () => {
    const [newest, older] = [newKey(), newKey()];
    const check = payloadsCheck(context({ SUBAGENTS_ENCRYPTION_KEY: `${newest}, ops-2024:${older}` }));
    expect(check.status).toBe('ok');
    expect(check.lines).toEqual([
      `encrypted with key ${keyIdOf(Buffer.from(newest, 'base64'))} (2 keys held)`,
    ]);
    const shown = renderDoctor([check]).join('\n');
    expect(shown).toMatch(/^ {2}ok {6}Payloads {2}encrypted with key [0-9a-f]{8} \(2 keys held\)$/m);
    expect(shown).not.toContain(newest);
    expect(shown).not.toContain(older);
  });

  it('reads the variable payloads.encryption.key_env names, and says it when there is none', () => {
    const config = defaultConfig();
    const own = {
      ...config,
      payloads: { ...config.payloads, encryption: { ...config.payloads.encryption, key_env: 'OUR_KEYS' } },
    };
    expect(payloadsCheck(context({ SUBAGENTS_ENCRYPTION_KEY: newKey() }, own)).lines).toEqual([
      'not encrypted (set OUR_KEYS to encrypt)',
    ]);
    expect(payloadsCheck(context({ OUR_KEYS: `team:${newKey()}` }, own)).lines).toEqual([
      'encrypted with key team (1 key held)',
    ]);
  });

  it('a key source that holds something else than keys is missing, named without its text', () => {
    const check = payloadsCheck(context({ SUBAGENTS_ENCRYPTION_KEY: 'not-a-key-at-all' }));
    expect(check.status).toBe('missing');
    expect(check.lines[0]).toMatch(/^SUBAGENTS_ENCRYPTION_KEY: entry 1 is not a key/);
    expect(check.lines.join('\n')).not.toContain('not-a-key-at-all');
    expect(check.fix).toMatch(/^fix that key source/);
  });
});

describe('the worker start lines', () => {
  const service = {
    address: '127.0.0.1:7233',
    namespace: 'default',
    taskQueue: 'durable-subagents',
    admission: defaultConfig().subagent_runtime,
    runAdmission: defaultConfig().lead_runtime,
  };
  const sandbox = { kind: 'bubblewrap' as const, description: 'bubblewrap' };

  it('say which key id payloads are encrypted with, or that they are not', () => {
    expect(
      workerStartLines(service, sandbox, {
        keyIds: ['new-2025', 'old-2024'],
        keyEnv: 'SUBAGENTS_ENCRYPTION_KEY',
      }),
    ).toContain('payloads: encrypted with key new-2025 (2 keys held)');
    expect(workerStartLines(service, sandbox, { keyIds: [], keyEnv: 'SUBAGENTS_ENCRYPTION_KEY' })).toContain(
      'payloads: not encrypted (set SUBAGENTS_ENCRYPTION_KEY to encrypt)',
    );
  });
});
