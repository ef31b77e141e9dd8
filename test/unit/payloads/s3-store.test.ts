/**
 * The S3 store against a real S3-compatible server: moto's (`pip install 'moto[server]'`, which `.ci/run`
 * installs when pip is there). Without `moto_server` on the PATH the tests are skipped, with a note.
 */
import { HeadObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { defaultPayloadConverter } from '@temporalio/common';
import type { S3PayloadSettings } from '../../../contracts/config/payloads';
import { ClaimCheckCodec, PayloadBlobError, readReference } from '../../../payloads/claim-check-codec';
import { blobKey, S3BlobStore } from '../../../payloads/store';
import { describeWithMoto, MOTO_CREDENTIALS, startMoto, type MotoServer } from '../../support/moto';

const credentials = MOTO_CREDENTIALS;

describeWithMoto('S3 store tests')('S3BlobStore on a local S3-compatible server (moto)', () => {
  let moto: MotoServer;
  let settings: S3PayloadSettings;
  let admin: S3Client;

  beforeAll(async () => {
    moto = await startMoto();
    ({ settings, admin } = moto);
  }, 60_000);

  afterAll(async () => {
    await moto?.stop();
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
