import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { defaultPayloadSettings } from '../../../contracts/config/payloads';
import {
  LocalDirRecordStore,
  openRecordStore,
  recordNameProblem,
  S3RecordStore,
} from '../../../payloads/records';
import { PAYLOAD_DIR_ENV } from '../../../payloads/store';
import { describeWithMoto, MOTO_CREDENTIALS, startMoto, type MotoServer } from '../../support/moto';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (value: Uint8Array | undefined) =>
  value === undefined ? undefined : Buffer.from(value).toString('utf8');

describe('LocalDirRecordStore', () => {
  let dir: string;
  let store: LocalDirRecordStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'record-store-'));
    store = new LocalDirRecordStore(join(dir, 'records'));
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates a record once: a second create leaves the first bytes and answers false', async () => {
    expect(await store.create('runs/r1/epoch-1', bytes('host-a'))).toBe(true);
    expect(await store.create('runs/r1/epoch-1', bytes('host-b'))).toBe(false);
    expect(text(await store.get('runs/r1/epoch-1'))).toBe('host-a');
    const file = join(dir, 'records', 'runs', 'r1', 'epoch-1');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // No temporary file is left beside the record, whichever way the create went.
    expect(readdirSync(join(dir, 'records', 'runs', 'r1'))).toEqual(['epoch-1']);
  });

  it('lets exactly one of many concurrent creates win', async () => {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.create('runs/r2/home', bytes(`host-${i}`))),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    const winner = outcomes.indexOf(true);
    expect(text(await store.get('runs/r2/home'))).toBe(`host-${winner}`);
    expect(readdirSync(join(dir, 'records', 'runs', 'r2'))).toEqual(['home']);
  });

  it('replaces a record with put, and answers undefined for one that is not there', async () => {
    await store.put('runs/r3/manifest', bytes('first'));
    await store.put('runs/r3/manifest', bytes('second'));
    expect(readFileSync(join(dir, 'records', 'runs', 'r3', 'manifest'), 'utf8')).toBe('second');
    expect(text(await store.get('runs/r3/manifest'))).toBe('second');
    expect(await store.get('runs/r3/never')).toBeUndefined();
    expect(await store.get('runs/r3/manifest/below')).toBeUndefined();
  });

  it('refuses names that could leave the records folder or are not plain', async () => {
    for (const name of [
      '../x',
      'a/../b',
      '/abs',
      'a/',
      'a//b',
      'Upper',
      '.hidden',
      'a/./b',
      '',
      'x'.repeat(302),
    ]) {
      expect(recordNameProblem(name)).toBeDefined();
      await expect(store.get(name)).rejects.toThrow(`not a payload record name: ${JSON.stringify(name)} (`);
      await expect(store.create(name, bytes('x'))).rejects.toThrow('not a payload record name');
    }
    expect(recordNameProblem('runs/lead-1.task_2/epoch-3')).toBeUndefined();
  });

  it('is opened under the local payload folder, beside the blobs', () => {
    const opened = openRecordStore(defaultPayloadSettings(), { [PAYLOAD_DIR_ENV]: join(dir, 'p') });
    expect(opened).toBeInstanceOf(LocalDirRecordStore);
    expect(opened.description).toBe(`records in local directory ${join(dir, 'p', 'records')}`);
  });
});

describeWithMoto('S3 record store tests')('S3RecordStore on a local S3-compatible server (moto)', () => {
  let moto: MotoServer;

  beforeAll(async () => {
    moto = await startMoto();
  }, 60_000);

  afterAll(async () => {
    await moto?.stop();
  });

  it('creates <prefix>records/<name> once, replaces it with put, reads a missing one as undefined', async () => {
    const store = new S3RecordStore(moto.settings, MOTO_CREDENTIALS);
    expect(store.description).toBe(
      `records in S3 bucket agent-runs (prefix payloads/) at ${moto.settings.endpoint}`,
    );
    expect(await store.create('runs/r1/epoch-1', bytes('host-a'))).toBe(true);
    expect(await store.create('runs/r1/epoch-1', bytes('host-b'))).toBe(false);
    expect(text(await store.get('runs/r1/epoch-1'))).toBe('host-a');
    const object = await moto.admin.send(
      new GetObjectCommand({ Bucket: 'agent-runs', Key: 'payloads/records/runs/r1/epoch-1' }),
    );
    expect(await object.Body?.transformToString()).toBe('host-a');

    await store.put('runs/r1/epoch-1', bytes('host-c'));
    expect(text(await store.get('runs/r1/epoch-1'))).toBe('host-c');
    expect(await store.get('runs/r1/never')).toBeUndefined();
  });

  it('lets exactly one of several concurrent creates win', async () => {
    const store = new S3RecordStore(moto.settings, MOTO_CREDENTIALS);
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, (_, i) => store.create('runs/r2/home', bytes(`host-${i}`))),
    );
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect(text(await store.get('runs/r2/home'))).toBe(`host-${outcomes.indexOf(true)}`);
  });

  it('reports a bucket that does not exist as a failure naming the record and the bucket', async () => {
    const store = new S3RecordStore({ ...moto.settings, bucket: 'no-such-bucket' }, MOTO_CREDENTIALS);
    await expect(store.create('runs/r3/home', bytes('x'))).rejects.toThrow(
      /^cannot create payload record runs\/r3\/home in records in S3 bucket no-such-bucket .*: /,
    );
  });
});
