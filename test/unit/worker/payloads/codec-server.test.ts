/** The codec endpoint over real HTTP on loopback, with a local store: the protocol, CORS and its limits. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { CLAIM_CHECK_ENCODING, ClaimCheckCodec } from '../../../../worker/payloads/claim-check-codec';
import {
  isAllowedOrigin,
  startCodecServer,
  type RunningCodecServer,
} from '../../../../worker/payloads/codec-server';
import { LocalDirBlobStore } from '../../../../worker/payloads/store';

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

const toJson = (payload: Payload): JsonPayload => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [
      key,
      Buffer.from(value ?? []).toString('base64'),
    ]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});
const valueOf = (payload: JsonPayload): unknown =>
  JSON.parse(Buffer.from(payload.data, 'base64').toString('utf8'));
const encodingOf = (payload: JsonPayload): string =>
  Buffer.from(payload.metadata.encoding, 'base64').toString('utf8');

describe('codec server', () => {
  let dir: string;
  let codec: ClaimCheckCodec;
  let server: RunningCodecServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'codec-server-'));
    codec = new ClaimCheckCodec({ store: new LocalDirBlobStore(dir), thresholdBytes: 1024 });
    server = await startCodecServer({ codec, maxRequestBytes: 64 * 1024 });
  });

  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Namespace': 'default', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('listens on loopback', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('encodes a large payload to a reference and decodes the reference back, in protobuf JSON', async () => {
    const value = { messages: ['m'.repeat(4000)] };
    const original = toJson(defaultPayloadConverter.toPayload(value));
    const small = toJson(defaultPayloadConverter.toPayload('small'));
    const encoded = await post('/encode', { payloads: [original, small] });
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get('content-type')).toBe('application/json');
    const { payloads: references } = (await encoded.json()) as { payloads: JsonPayload[] };
    expect(encodingOf(references[0])).toBe(CLAIM_CHECK_ENCODING);
    expect(references[1]).toEqual(small);

    // Any path ending in /decode: the CLI puts the namespace in front.
    const decoded = await post('/default/decode', { payloads: references });
    expect(decoded.status).toBe(200);
    const { payloads } = (await decoded.json()) as { payloads: JsonPayload[] };
    expect(payloads).toEqual([original, small]);
    expect(valueOf(payloads[0])).toEqual(value);
  });

  it('answers the Web UI’s preflight from a loopback origin with CORS headers', async () => {
    const response = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'http://localhost:8233',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type,x-namespace',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(response.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    expect(response.headers.get('access-control-allow-headers')).toBe('content-type,x-namespace');
    expect(response.headers.get('access-control-allow-credentials')).toBe('true');
    expect(response.headers.get('vary')).toBe('Origin');

    const plain = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://127.0.0.1:1' },
    });
    expect(plain.headers.get('access-control-allow-headers')).toBe(
      'Content-Type, X-Namespace, Authorization',
    );
  });

  it('refuses a page of another origin, preflight or not', async () => {
    const preflight = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const post403 = await post('/encode', { payloads: [] }, { Origin: 'https://evil.example' });
    expect(post403.status).toBe(403);
    expect(((await post403.json()) as { error: string }).error).toMatch(
      /^origin https:\/\/evil\.example may not call this codec endpoint .*payloads\.codec_server\.allowed_origins/,
    );
  });

  it('answers with a JSON error naming the problem', async () => {
    const cases: [Promise<Response>, number, RegExp][] = [
      [post('/decode', 'not json'), 400, /^request body is not JSON/],
      [post('/decode', { payload: [] }), 400, /^request body has no payloads list/],
      [
        post('/decode', { payloads: [{ metadata: { encoding: '%%%' } }] }),
        400,
        /payloads\[0\]\.metadata\.encoding is not base64/,
      ],
      [
        post('/translate', { payloads: [] }),
        404,
        /^no endpoint at \/translate \(POST …\/decode or …\/encode\)/,
      ],
      [fetch(`${server.url}/decode`), 405, /^GET is not allowed here \(POST\)/],
      [post('/encode', { payloads: [{ data: 'a'.repeat(70 * 1024) }] }), 413, /over the 65536-byte limit/],
    ];
    for (const [request, status, message] of cases) {
      const response = await request;
      expect(response.status).toBe(status);
      expect(((await response.json()) as { error: string }).error).toMatch(message);
    }
  });

  it('answers 400 naming the hash when a blob is missing', async () => {
    const reference = {
      metadata: { encoding: Buffer.from(CLAIM_CHECK_ENCODING).toString('base64') },
      data: Buffer.from(JSON.stringify({ sha256: 'ab'.repeat(32), size: 10 })).toString('base64'),
    };
    const response = await post('/decode', { payloads: [reference] });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(
      new RegExp(`^payload blob ${'ab'.repeat(32)} is missing from local directory `),
    );
  });
});

describe('isAllowedOrigin', () => {
  it('allows loopback pages on any port, listed origins, or any with *', () => {
    expect(isAllowedOrigin('http://127.0.0.1:8233')).toBe(true);
    expect(isAllowedOrigin('http://localhost:5173')).toBe(true);
    expect(isAllowedOrigin('http://[::1]:8233')).toBe(true);
    expect(isAllowedOrigin('https://temporal.example.com')).toBe(false);
    expect(isAllowedOrigin('https://temporal.example.com', ['https://temporal.example.com'])).toBe(true);
    expect(isAllowedOrigin('https://temporal.example.com', ['*'])).toBe(true);
    expect(isAllowedOrigin('null')).toBe(false);
    expect(isAllowedOrigin('http://localhost.evil.example')).toBe(false);
  });
});
