import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { defaultPayloadSettings, type EncryptionSettings } from '../../../contracts/config/payloads';
import { CLAIM_CHECK_ENCODING, ClaimCheckCodec } from '../../../payloads/claim-check-codec';
import { CodecChain, projectCodec } from '../../../payloads/data-converter';
import { EncryptedBlobStore } from '../../../payloads/encrypted-store';
import {
  ENCRYPTED_ENCODING,
  EncryptionCodec,
  KEY_ID_METADATA,
  MissingEncryptionKeyError,
  PayloadDecryptionError,
  PayloadKeyring,
} from '../../../payloads/encryption-codec';
import {
  EncryptionKeyError,
  keyIdOf,
  loadEncryptionKeys,
  parseEncryptionKeys,
  type EncryptionKey,
} from '../../../payloads/encryption-keys';
import { LocalDirBlobStore } from '../../../payloads/store';

const newKeyText = () => randomBytes(32).toString('base64');
const keysOf = (text: string) => parseEncryptionKeys(text, 'TEST_KEYS');
const codecOf = (keys: EncryptionKey[]) => new EncryptionCodec(new PayloadKeyring(keys));
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const fromPayload = (payload: Payload): unknown => defaultPayloadConverter.fromPayload(payload);
const SECRET = 'the launch code is 0000';

describe('encryption keys', () => {
  it('reads a list, newest first, each named by its hash or by the id written before it', () => {
    const [a, b] = [newKeyText(), newKeyText()];
    const keys = keysOf(`${a}, ops-2025:${b}\n# an old key, kept for reading\n`);
    expect(keys.map((key) => key.id)).toEqual([keyIdOf(Buffer.from(a, 'base64')), 'ops-2025']);
    expect(keys[0].id).toMatch(/^[0-9a-f]{8}$/);
    expect(keys[1].material.equals(Buffer.from(b, 'base64'))).toBe(true);
  });

  it('names the source and the entry of a bad key, never its text', () => {
    const short = randomBytes(16).toString('base64');
    const problem = () => keysOf(`${newKeyText()},${short}`);
    expect(problem).toThrow(EncryptionKeyError);
    expect(problem).toThrow(/^TEST_KEYS: entry 2 is not a key \(the base64 of 32 random bytes/);
    try {
      problem();
    } catch (err) {
      expect((err as Error).message).not.toContain(short);
    }
    expect(() => keysOf(`bad/id:${newKeyText()}`)).toThrow('TEST_KEYS: entry 1 has a key id that is not');
  });

  it('gathers the environment, a key file and a key command; refuses one id for two keys', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    try {
      const [fromEnv, fromFile, fromCommand] = [newKeyText(), newKeyText(), newKeyText()];
      const file = join(dir, 'keys.txt');
      writeFileSync(file, `file:${fromFile}\n`);
      const settings: EncryptionSettings = {
        key_env: 'TEST_KEYS',
        key_file: file,
        key_command: `echo command:${fromCommand}`,
        key_command_timeout_seconds: 10,
      };
      const keys = loadEncryptionKeys(settings, { TEST_KEYS: `env:${fromEnv}` });
      expect(keys.map((key) => key.id)).toEqual(['env', 'file', 'command']);
      expect(loadEncryptionKeys(settings, { TEST_KEYS: `file:${fromFile}` }).map((key) => key.id)).toEqual([
        'file',
        'command',
      ]);
      expect(() => loadEncryptionKeys(settings, { TEST_KEYS: `file:${fromEnv}` })).toThrow(
        'two different encryption keys have the id file',
      );
      expect(loadEncryptionKeys({ key_env: 'TEST_KEYS', key_command_timeout_seconds: 1 }, {})).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says why a key command gave nothing: its status, its time limit, no keys', () => {
    const base = { key_env: 'TEST_KEYS', key_command_timeout_seconds: 10 };
    expect(() => loadEncryptionKeys({ ...base, key_command: 'echo denied >&2; exit 3' }, {})).toThrow(
      'payloads.encryption.key_command exited with status 3: denied',
    );
    expect(() =>
      loadEncryptionKeys({ ...base, key_command: 'sleep 5', key_command_timeout_seconds: 0.2 }, {}),
    ).toThrow('payloads.encryption.key_command did not finish within 0.2 s');
    expect(() => loadEncryptionKeys({ ...base, key_command: 'true' }, {})).toThrow(
      'payloads.encryption.key_command printed no keys',
    );
  });
});

describe('the encryption codec', () => {
  it('round-trips a payload, which then carries neither its text nor its encoding in the clear', async () => {
    const codec = codecOf(keysOf(`k1:${newKeyText()}`));
    const [encoded] = await codec.encode([toPayload({ prompt: SECRET })]);
    expect(text(encoded.metadata?.encoding)).toBe(ENCRYPTED_ENCODING);
    expect(text(encoded.metadata?.[KEY_ID_METADATA])).toBe('k1');
    expect(text(encoded.data)).not.toContain('launch code');
    expect(text(encoded.data)).not.toContain('json/plain');
    const [decoded] = await codec.decode([encoded]);
    expect(fromPayload(decoded)).toEqual({ prompt: SECRET });
    // Equal payloads encrypt alike under one key (so a claim-checked transcript is stored once).
    const [again] = await codec.encode([toPayload({ prompt: SECRET })]);
    expect(Buffer.from(again.data ?? []).equals(Buffer.from(encoded.data ?? []))).toBe(true);
    const [other] = await codec.encode([toPayload({ prompt: `${SECRET}!` })]);
    expect(Buffer.from(other.data ?? []).subarray(0, 12)).not.toEqual(
      Buffer.from(encoded.data ?? []).subarray(0, 12),
    );
  });

  it('rotates: old payloads decrypt once a new key is listed first, new ones use the new key', async () => {
    const [oldKey, newKey] = [newKeyText(), newKeyText()];
    const before = codecOf(keysOf(oldKey));
    const [old] = await before.encode([toPayload('written before the rotation')]);
    const after = codecOf(keysOf(`${newKey},${oldKey}`));
    expect(fromPayload((await after.decode([old]))[0])).toBe('written before the rotation');
    const [fresh] = await after.encode([toPayload('written after')]);
    expect(text(fresh.metadata?.[KEY_ID_METADATA])).toBe(keyIdOf(Buffer.from(newKey, 'base64')));
    expect(text(old.metadata?.[KEY_ID_METADATA])).toBe(keyIdOf(Buffer.from(oldKey, 'base64')));
    // A process that still holds only the old key cannot read the new payload, and says which key it lacks.
    await expect(before.decode([fresh])).rejects.toThrow(MissingEncryptionKeyError);
  });

  it('names the id of a missing key, and the keys it holds', async () => {
    const [encoded] = await codecOf(keysOf(`team-a:${newKeyText()}`)).encode([toPayload(SECRET)]);
    const decode = codecOf(keysOf(`team-b:${newKeyText()}`)).decode([encoded], {
      type: 'workflow',
      namespace: 'default',
      workflowId: 'run-1',
    });
    await expect(decode).rejects.toThrow(
      'payload of workflow run-1 is encrypted with key team-a, which this process does not hold ' +
        '(keys held: team-b); add the key team-a to SUBAGENTS_ENCRYPTION_KEY',
    );
    await expect(codecOf([]).decode([encoded])).rejects.toThrow('(keys held: none)');
    await expect(codecOf([]).decode([encoded])).rejects.toMatchObject({ keyId: 'team-a' });
  });

  it('refuses altered ciphertext and a payload whose key id was swapped', async () => {
    const keys = keysOf(`one:${newKeyText()} two:${newKeyText()}`);
    const codec = codecOf(keys);
    const [encoded] = await codec.encode([toPayload(SECRET)]);
    const altered = Buffer.from(encoded.data ?? []);
    altered[20] ^= 1;
    await expect(codec.decode([{ ...encoded, data: altered }])).rejects.toThrow(PayloadDecryptionError);
    await expect(codec.decode([{ ...encoded, data: altered }])).rejects.toThrow(
      'payload is encrypted with key one but does not decrypt: it was altered',
    );
    const swapped = { ...encoded, metadata: { ...encoded.metadata, [KEY_ID_METADATA]: Buffer.from('two') } };
    await expect(codec.decode([swapped])).rejects.toThrow(PayloadDecryptionError);
  });

  it('leaves payloads alone without keys, and decodes plain payloads written before encryption', async () => {
    const plain = toPayload(SECRET);
    expect(await codecOf([]).encode([plain])).toEqual([plain]);
    expect(await codecOf(keysOf(newKeyText())).decode([plain])).toEqual([plain]);
  });
});

describe('encryption before the claim-check', () => {
  const dir = mkdtempSync(join(tmpdir(), 'encrypted-payloads-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const allBlobs = () =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name)));

  it('stores only ciphertext for a large payload, and reads it back through both codecs', async () => {
    const codec = new CodecChain([
      codecOf(keysOf(newKeyText())),
      new ClaimCheckCodec({ store: new LocalDirBlobStore(join(dir, 'claim-check')) }),
    ]);
    const large = `${SECRET}\n`.repeat(2000);
    const [encoded] = await codec.encode([toPayload(large)]);
    expect(text(encoded.metadata?.encoding)).toBe(CLAIM_CHECK_ENCODING);
    const blobs = allBlobs();
    expect(blobs).toHaveLength(1);
    expect(blobs[0].toString('latin1')).not.toContain('launch code');
    expect(fromPayload((await codec.decode([encoded]))[0])).toBe(large);
  });

  it('is what the project codec does with the keys of SUBAGENTS_ENCRYPTION_KEY', async () => {
    const previous = process.env.SUBAGENTS_ENCRYPTION_KEY;
    process.env.SUBAGENTS_ENCRYPTION_KEY = `env-key:${newKeyText()}`;
    try {
      const [, encryption] = projectCodec(defaultPayloadSettings()).codecs as [unknown, EncryptionCodec];
      expect(encryption.keyring.keyIds).toEqual(['env-key']);
    } finally {
      if (previous === undefined) delete process.env.SUBAGENTS_ENCRYPTION_KEY;
      else process.env.SUBAGENTS_ENCRYPTION_KEY = previous;
    }
  });

  it('keeps blobs stored directly (transcripts) encrypted at rest, read back as written', async () => {
    const inner = new LocalDirBlobStore(join(dir, 'direct'));
    const store = new EncryptedBlobStore(inner, new PayloadKeyring(keysOf(`k:${newKeyText()}`)));
    const bytes = Buffer.from(JSON.stringify({ messages: [SECRET] }));
    const key = '0'.repeat(64);
    await store.put(key, bytes);
    expect(Buffer.from((await inner.get(key)) ?? []).toString('latin1')).not.toContain('launch code');
    expect(Buffer.from((await store.get(key)) ?? []).equals(bytes)).toBe(true);
    // A blob written before encryption is read as it is.
    const older = '1'.repeat(64);
    await inner.put(older, bytes);
    expect(Buffer.from((await store.get(older)) ?? []).equals(bytes)).toBe(true);
    // Without the key: an error naming it.
    await expect(new EncryptedBlobStore(inner, new PayloadKeyring([])).get(key)).rejects.toThrow(
      `payload blob ${key} in ${inner.description} is encrypted with key k, which this process does not hold`,
    );
  });
});
