import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { PayloadBlobError } from '../../../payloads/claim-check-codec';
import { SHARED_FIELDS_ENCODING, SharedFieldsCodec } from '../../../payloads/shared-fields-codec';
import { blobKey, LocalDirBlobStore } from '../../../payloads/store';

const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const fromPayload = (payload: Payload): unknown => defaultPayloadConverter.fromPayload(payload);
const encoding = (payload: Payload) =>
  new TextDecoder().decode(payload.metadata?.encoding ?? new Uint8Array());
const size = (payload: Payload) => payload.data?.length ?? 0;

function blobFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** An agent definition of the size a child's input carries (a system prompt, its tools). */
const agent = {
  name: 'general-purpose',
  system_prompt: 'You are a careful research assistant. '.repeat(30),
  tools: ['bash', 'ls', 'read_file', 'write_file', 'str_replace'],
  max_turns: 150,
};

describe('SharedFieldsCodec', () => {
  let dir: string;
  let codec: SharedFieldsCodec;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'shared-fields-'));
    codec = new SharedFieldsCodec({ store: new LocalDirBlobStore(dir) });
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('sends a large field as its digest and gives back the same bytes', async () => {
    const original = toPayload({ task_id: 'call-1', prompt: 'Report part 1.', agent, depth: 1 });
    const [encoded] = await codec.encode([original]);
    expect(encoding(encoded)).toBe(SHARED_FIELDS_ENCODING);
    expect(size(encoded)).toBeLessThan(250);
    const digest = blobKey(new TextEncoder().encode(JSON.stringify(agent)));
    expect(new TextDecoder().decode(encoded.data)).toContain(digest);
    const [decoded] = await codec.decode([encoded]);
    expect(encoding(decoded)).toBe('json/plain');
    expect(Buffer.from(decoded.data ?? []).equals(Buffer.from(original.data ?? []))).toBe(true);
  });

  it('stores a field repeated in many payloads once, and another process reads it from the store', async () => {
    const inputs = [1, 2, 3].map((i) => toPayload({ task_id: `call-${i}`, agent }));
    const encoded = await codec.encode(inputs);
    expect(blobFiles(dir)).toHaveLength(1);
    const elsewhere = new SharedFieldsCodec({ store: new LocalDirBlobStore(dir) });
    const decoded = await elsewhere.decode(encoded);
    expect(decoded.map(fromPayload)).toEqual([1, 2, 3].map((i) => ({ task_id: `call-${i}`, agent })));
  });

  it('leaves small payloads, small fields, arrays and other encodings as they are', async () => {
    const payloads = [
      toPayload({ task_id: 'call-1', prompt: 'short' }),
      toPayload({ a: 'x'.repeat(200), b: 'y'.repeat(200) }),
      toPayload(Array.from({ length: 100 }, () => agent.system_prompt.slice(0, 20))),
      toPayload(new Uint8Array(4096)),
    ];
    const encoded = await codec.encode(payloads);
    encoded.forEach((payload, i) => expect(payload).toBe(payloads[i]));
    expect(readdirSync(dir)).toHaveLength(0);
  });

  it("writes a result and a query's answer whole: only the inputs a run repeats are stored", async () => {
    const ledger = Array.from({ length: 8 }, (_, i) => ({ task_id: `call-${i}`, status: 'completed' }));
    const payloads = [
      // A lead's result: other Temporal clients read it without the project's codecs.
      toPayload({ status: 'completed', final_output: 'Done. '.repeat(100), ledger }),
      // The Web UI's metadata query: its current details are read by the UI, no codec in between.
      toPayload({ definition: { type: 'leadRunWorkflow' }, currentDetails: 'lead · completed. '.repeat(40) }),
    ];
    const encoded = await codec.encode(payloads);
    encoded.forEach((payload, i) => expect(payload).toBe(payloads[i]));
    const [input] = await codec.encode([toPayload({ agent, ledger, note: 'n'.repeat(400) })]);
    expect(JSON.parse(new TextDecoder().decode(input.data))).toMatchObject({ shared: ['agent'] });
  });

  it('leaves a payload the claim-check stores whole to it', async () => {
    const bounded = new SharedFieldsCodec({ store: new LocalDirBlobStore(dir), wholeAboveBytes: 4096 });
    const large = toPayload({ agent, notes: 'n'.repeat(4096) });
    const [encoded] = await bounded.encode([large]);
    expect(encoded).toBe(large);
    expect(encoding((await bounded.encode([toPayload({ agent })]))[0])).toBe(SHARED_FIELDS_ENCODING);
  });

  it('writes payloads whole when sharing is off, and still reads shared ones', async () => {
    const [shared] = await codec.encode([toPayload({ agent })]);
    const off = new SharedFieldsCodec({ store: new LocalDirBlobStore(dir), share: false });
    const whole = toPayload({ agent });
    expect((await off.encode([whole]))[0]).toBe(whole);
    expect(fromPayload((await off.decode([shared]))[0])).toEqual({ agent });
  });

  it('leaves JSON it could not restore byte for byte (not written by JSON.stringify) as it is', async () => {
    const text = `{ "agent": ${JSON.stringify(agent, null, 2)} }`;
    const payload: Payload = {
      metadata: { encoding: new TextEncoder().encode('json/plain') },
      data: new TextEncoder().encode(text),
    };
    const [encoded] = await codec.encode([payload]);
    expect(encoded).toBe(payload);
  });

  it('keeps a `__proto__` field in place', async () => {
    const text = `{"__proto__":${JSON.stringify(agent)},"task_id":"call-1"}`;
    const payload: Payload = {
      metadata: { encoding: new TextEncoder().encode('json/plain') },
      data: new TextEncoder().encode(text),
    };
    const [encoded] = await codec.encode([payload]);
    expect(new TextDecoder().decode(encoded.data)).toBe(text);
  });

  it('refuses a missing or altered blob, naming its digest', async () => {
    const [encoded] = await codec.encode([toPayload({ agent })]);
    const digest = blobKey(new TextEncoder().encode(JSON.stringify(agent)));
    const [file] = blobFiles(dir);
    writeFileSync(file, '{"name":"someone else"}');
    const fresh = () => new SharedFieldsCodec({ store: new LocalDirBlobStore(dir) });
    await expect(fresh().decode([encoded])).rejects.toThrow(PayloadBlobError);
    await expect(fresh().decode([encoded])).rejects.toThrow(`payload blob ${digest}`);
    rmSync(file);
    await expect(fresh().decode([encoded])).rejects.toThrow(/is missing from local directory/);
  });
});
