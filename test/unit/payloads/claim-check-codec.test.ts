import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import {
  CLAIM_CHECK_ENCODING,
  ClaimCheckCodec,
  claimCheckPayload,
  isClaimCheckPayload,
  PayloadBlobError,
  readReference,
} from '../../../payloads/claim-check-codec';
import { LocalDirBlobStore, type BlobStore } from '../../../payloads/store';

/** A store that counts the writes that reach it. */
class CountingStore implements BlobStore {
  puts = 0;
  constructor(readonly inner: LocalDirBlobStore) {}
  get description() {
    return this.inner.description;
  }
  async put(key: string, bytes: Uint8Array) {
    this.puts++;
    return this.inner.put(key, bytes);
  }
  get(key: string) {
    return this.inner.get(key);
  }
}

const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const fromPayload = (payload: Payload): unknown => defaultPayloadConverter.fromPayload(payload);
const encoding = (payload: Payload) =>
  new TextDecoder().decode(payload.metadata?.encoding ?? new Uint8Array());

/** Every blob file in the store's folder. */
function blobFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('ClaimCheckCodec', () => {
  let dir: string;
  let store: CountingStore;
  let codec: ClaimCheckCodec;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'claim-check-'));
    store = new CountingStore(new LocalDirBlobStore(dir));
    codec = new ClaimCheckCodec({ store, thresholdBytes: 1024 });
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('leaves a payload at or below the threshold untouched and stores nothing', async () => {
    const small = toPayload({ messages: ['hello'] });
    const [encoded] = await codec.encode([small]);
    expect(encoded).toBe(small);
    expect(store.puts).toBe(0);
    expect(fromPayload((await codec.decode([encoded]))[0])).toEqual({ messages: ['hello'] });
  });

  it('replaces a larger payload by a reference and decodes it back to the same value', async () => {
    const value = { transcript: 'x'.repeat(5000), turn: 7 };
    const [encoded] = await codec.encode([toPayload(value)]);
    expect(encoding(encoded)).toBe(CLAIM_CHECK_ENCODING);
    expect(Object.keys(encoded.metadata ?? {})).toEqual(['encoding']);
    const reference = JSON.parse(new TextDecoder().decode(encoded.data ?? new Uint8Array()));
    expect(reference).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), size: expect.any(Number) });
    expect(reference.size).toBeGreaterThan(5000);
    expect(encoded.data?.length).toBeLessThan(120);
    const [decoded] = await codec.decode([encoded]);
    expect(encoding(decoded)).toBe('json/plain');
    expect(fromPayload(decoded)).toEqual(value);
  });

  it('decides by the encoded size: a payload just past the threshold is stored, one just under is not', async () => {
    let text = 'y'.repeat(900);
    while (encodedSize(toPayload(text)) <= 1024) text += 'y';
    expect(isClaimCheckPayload((await codec.encode([toPayload(text)]))[0])).toBe(true);
    expect(isClaimCheckPayload((await codec.encode([toPayload(text.slice(1))]))[0])).toBe(false);
  });

  it('stores identical payloads once, from one codec or several', async () => {
    const payload = toPayload({ transcript: 'z'.repeat(4000) });
    const [a, b] = await codec.encode([payload, toPayload({ transcript: 'z'.repeat(4000) })]);
    const [c] = await codec.encode([payload]);
    const [d] = await new ClaimCheckCodec({ store, thresholdBytes: 1024 }).encode([payload]);
    expect(readReference(a)).toEqual(readReference(b));
    expect(readReference(c)).toEqual(readReference(a));
    expect(readReference(d)).toEqual(readReference(a));
    expect(blobFiles(dir)).toHaveLength(1);
    // The second codec asks the store, which keeps the blob it has; this one remembers what it stored.
    expect(store.puts).toBeLessThanOrEqual(3);
    const again = store.puts;
    await codec.encode([payload]);
    expect(store.puts).toBe(again);
  });

  it('passes payloads of other encodings through on decode, so histories from before the codec replay', async () => {
    const plain = toPayload('x'.repeat(5000));
    const binary: Payload = { metadata: { encoding: new TextEncoder().encode('binary/null') } };
    const decoded = await codec.decode([plain, binary]);
    expect(decoded[0]).toBe(plain);
    expect(decoded[1]).toBe(binary);
  });

  it('refuses a blob whose bytes were altered', async () => {
    const [encoded] = await codec.encode([toPayload({ text: 'q'.repeat(3000) })]);
    const { sha256 } = readReference(encoded);
    const [file] = blobFiles(dir);
    writeFileSync(file, 'tampered');
    const error = await codec.decode([encoded]).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PayloadBlobError);
    expect((error as Error).message).toMatch(
      new RegExp(
        `^payload blob ${sha256} in local directory .* is corrupt: its 8 bytes hash to [0-9a-f]{64}; refusing`,
      ),
    );
  });

  it('says which blob is missing from which store, and for which workflow', async () => {
    const [encoded] = await codec.encode([toPayload({ text: 'm'.repeat(3000) })]);
    const { sha256 } = readReference(encoded);
    rmSync(blobFiles(dir)[0]);
    const error = await codec
      .decode([encoded], { type: 'workflow', namespace: 'default', workflowId: 'run-1' })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(PayloadBlobError);
    expect((error as Error).message).toBe(
      `payload blob ${sha256} is missing from local directory ${dir} (workflow run-1): it was deleted, or ` +
        'stored by a process on another payloads store (every worker, client and codec server of a deployment ' +
        'must use the same payloads.store)',
    );
  });

  it('refuses a malformed reference without touching the store', async () => {
    const bad = claimCheckPayload({ sha256: '../../secrets', size: 1 });
    await expect(codec.decode([bad])).rejects.toThrow(
      /^malformed binary\/claim-check payload: .*expected \{"sha256": "<64 lowercase hex digits>"/,
    );
  });
});

/** The protobuf-encoded size the codec compares with its threshold. */
function encodedSize(payload: Payload): number {
  return temporal.api.common.v1.Payload.encode(payload).finish().length;
}
