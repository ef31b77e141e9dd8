import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadSettings } from '../../../contracts/config/payloads';
import {
  blobKey,
  configurePayloads,
  defaultPayloadDir,
  LocalDirBlobStore,
  localPayloadDir,
  openBlobStore,
  payloadStore,
  S3BlobStore,
} from '../../../payloads/store';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('LocalDirBlobStore', () => {
  let dir: string;
  let store: LocalDirBlobStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'blob-store-'));
    store = new LocalDirBlobStore(join(dir, 'payloads'));
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stores a blob under its sha256, in a folder named by the first two hex digits', async () => {
    const blob = bytes('a transcript');
    const key = blobKey(blob);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    await store.put(key, blob);
    const file = join(dir, 'payloads', key.slice(0, 2), key.slice(2));
    expect(readFileSync(file, 'utf8')).toBe('a transcript');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await store.get(key)) ?? []).toString('utf8')).toBe('a transcript');
    // Only the blob: the temporary file was renamed into place.
    expect(readdirSync(join(dir, 'payloads', key.slice(0, 2)))).toEqual([key.slice(2)]);
  });

  it('leaves a blob that is already stored as it is', async () => {
    const blob = bytes('same bytes');
    const key = blobKey(blob);
    await store.put(key, blob);
    const before = statSync(store.pathOf(key));
    await store.put(key, blob);
    const after = statSync(store.pathOf(key));
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
  });

  it('makes its folder again when it was removed behind its back', async () => {
    const blob = bytes('kept twice');
    const key = blobKey(blob);
    await store.put(key, blob);
    rmSync(join(dir, 'payloads'), { recursive: true });
    await store.put(key, blob);
    expect(readFileSync(store.pathOf(key), 'utf8')).toBe('kept twice');
    expect(statSync(join(dir, 'payloads', key.slice(0, 2))).mode & 0o777).toBe(0o700);
  });

  it('answers undefined for a blob it does not have', async () => {
    expect(await store.get(blobKey(bytes('never stored')))).toBeUndefined();
  });

  it('refuses a key that is not 64 lowercase hex digits, so no key can name another file', async () => {
    await expect(store.get('../../etc/passwd')).rejects.toThrow(
      /not a payload blob key: "..\/..\/etc\/passwd"/,
    );
    await expect(store.put('ABC', bytes('x'))).rejects.toThrow(/not a payload blob key/);
    await expect(store.get(blobKey(bytes('x')).toUpperCase())).rejects.toThrow(/64 lowercase hex digits/);
  });

  it('names its folder in its description', () => {
    expect(store.description).toBe(`local directory ${join(dir, 'payloads')}`);
  });
});

describe('where the local store is', () => {
  it('defaults to the payloads folder of the project cache (the Temporal CLI build sits beside it)', () => {
    expect(defaultPayloadDir({ XDG_CACHE_HOME: '/x/cache' })).toBe('/x/cache/durable-subagents/payloads');
    expect(defaultPayloadDir({ DURABLE_SUBAGENTS_CACHE: '/c' })).toBe('/c/payloads');
    expect(localPayloadDir(defaultPayloadSettings(), { DURABLE_SUBAGENTS_CACHE: '/c' })).toBe('/c/payloads');
  });

  it('takes payloads.path, and SUBAGENTS_PAYLOAD_DIR over both', () => {
    const settings = { ...defaultPayloadSettings(), path: '/from/config' };
    expect(localPayloadDir(settings, {})).toBe('/from/config');
    expect(localPayloadDir(settings, { SUBAGENTS_PAYLOAD_DIR: '/from/env' })).toBe('/from/env');
  });
});

describe('openBlobStore and the process store', () => {
  afterEach(() => configurePayloads(defaultPayloadSettings()));

  it('opens the store the settings name', () => {
    expect(openBlobStore(defaultPayloadSettings(), { SUBAGENTS_PAYLOAD_DIR: '/p' })).toBeInstanceOf(
      LocalDirBlobStore,
    );
    const s3 = openBlobStore(
      {
        ...defaultPayloadSettings(),
        store: 's3',
        s3: { bucket: 'runs', region: 'eu-west-1', prefix: 'p/', force_path_style: false },
      },
      {},
    );
    expect(s3).toBeInstanceOf(S3BlobStore);
    expect(s3.description).toBe('S3 bucket runs (prefix p/) at AWS region eu-west-1');
  });

  it('refuses S3 credentials named in the config but missing from the environment, when it opens', () => {
    expect(() =>
      openBlobStore(
        {
          ...defaultPayloadSettings(),
          store: 's3',
          s3: {
            bucket: 'runs',
            region: 'us-east-1',
            prefix: '',
            access_key_id_env: 'RUNS_KEY_ID',
            secret_access_key_env: 'RUNS_SECRET',
            force_path_style: true,
          },
        },
        { RUNS_KEY_ID: 'id' },
      ),
    ).toThrow('payloads.s3.secret_access_key_env: the environment variable RUNS_SECRET is not set');
  });

  it('gives one store per process, the one configurePayloads names', () => {
    configurePayloads({ ...defaultPayloadSettings(), path: '/tmp/configured-payloads' });
    const first = payloadStore();
    expect(payloadStore()).toBe(first);
    expect(first.description).toBe(
      `local directory ${process.env.SUBAGENTS_PAYLOAD_DIR ?? '/tmp/configured-payloads'}`,
    );
  });
});
