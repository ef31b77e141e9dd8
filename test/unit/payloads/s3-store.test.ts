/**
 * The S3 store against a real S3-compatible server: moto's (`pip install 'moto[server]'`, which `.ci/run`
 * installs when pip is there). Without `moto_server` on the PATH the tests are skipped, with a note.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { CreateBucketCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { defaultPayloadConverter } from '@temporalio/common';
import type { S3PayloadSettings } from '../../../contracts/config/payloads';
import { ClaimCheckCodec, PayloadBlobError, readReference } from '../../../payloads/claim-check-codec';
import { blobKey, S3BlobStore } from '../../../payloads/store';
import { whichSync } from '../../../devserver/temporal-cli';
import { freePort } from '../../../devserver/temporal-server';
import { available } from '../../support/required';

const motoServer = whichSync('moto_server');
const describeWithS3 = available(
  's3',
  'the S3 store tests',
  motoServer ? undefined : "no moto_server on the PATH (pip install 'moto[server]')",
)
  ? describe
  : describe.skip;

const credentials = { RUNS_KEY_ID: 'testing', RUNS_SECRET: 'testing' };

describeWithS3('S3BlobStore on a local S3-compatible server (moto)', () => {
  let moto: ChildProcess;
  let settings: S3PayloadSettings;
  let admin: S3Client;

  beforeAll(async () => {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    moto = spawn(motoServer as string, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await fetch(endpoint);
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`moto_server did not answer on ${endpoint}: ${err}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    settings = {
      endpoint,
      bucket: 'agent-runs',
      region: 'us-east-1',
      prefix: 'payloads/',
      access_key_id_env: 'RUNS_KEY_ID',
      secret_access_key_env: 'RUNS_SECRET',
      force_path_style: true,
    };
    admin = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    await admin.send(new CreateBucketCommand({ Bucket: settings.bucket }));
  }, 60_000);

  afterAll(async () => {
    admin?.destroy();
    if (moto && moto.exitCode === null) {
      const exited = once(moto, 'exit');
      moto.kill('SIGTERM');
      await exited;
    }
  });

  it('stores a blob under <prefix><sha256> and reads it back; a missing key is undefined', async () => {
    const store = new S3BlobStore(settings, credentials);
    expect(store.description).toBe(`S3 bucket agent-runs (prefix payloads/) at ${settings.endpoint}`);
    const bytes = new TextEncoder().encode('a transcript segment');
    const key = blobKey(bytes);
    await store.put(key, bytes);
    await store.put(key, bytes);
    expect(Buffer.from((await store.get(key)) ?? []).toString('utf8')).toBe('a transcript segment');
    expect(await store.get(blobKey(new TextEncoder().encode('never stored')))).toBeUndefined();
    const object = await admin.send(new HeadObjectCommand({ Bucket: 'agent-runs', Key: `payloads/${key}` }));
    expect(object.ContentLength).toBe(bytes.length);
  });

  it('carries the claim-check codec: a large payload round-trips, a missing one names hash and bucket', async () => {
    const codec = new ClaimCheckCodec({
      store: new S3BlobStore(settings, credentials),
      thresholdBytes: 1024,
    });
    const value = { transcript: 's'.repeat(10_000) };
    const [reference] = await codec.encode([defaultPayloadConverter.toPayload(value)]);
    const [decoded] = await codec.decode([reference]);
    expect(defaultPayloadConverter.fromPayload(decoded)).toEqual(value);

    const elsewhere = new ClaimCheckCodec({
      store: new S3BlobStore({ ...settings, prefix: 'other/' }, credentials),
      thresholdBytes: 1024,
    });
    const error = await elsewhere.decode([reference]).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PayloadBlobError);
    expect((error as Error).message).toContain(
      `payload blob ${readReference(reference).sha256} is missing from S3 bucket agent-runs (prefix other/) at ${settings.endpoint}: `,
    );
  });

  it('reports a bucket that does not exist as a store failure, naming the bucket', async () => {
    const store = new S3BlobStore({ ...settings, bucket: 'no-such-bucket' }, credentials);
    const bytes = new TextEncoder().encode('x');
    await expect(store.put(blobKey(bytes), bytes)).rejects.toThrow(
      /^cannot (check|store) payload blob [0-9a-f]{64} in S3 bucket no-such-bucket .*: /,
    );
  });
});
