/**
 * The codec endpoint over real HTTP on loopback, with a local store: the protocol, CORS, who may call it
 * (origins, the Host it is addressed by, a bearer token) and what `/encode` may write.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { CLAIM_CHECK_ENCODING, ClaimCheckCodec } from '../../../payloads/claim-check-codec';
import {
  codecHttpOptions,
  isAllowedOrigin,
  isLoopbackHost,
  startCodecServer,
  type CodecServerOptions,
  type RunningCodecServer,
} from '../../../payloads/codec-server';
import { defaultPayloadSettings } from '../../../contracts/config/payloads';
import { EncryptionCodec, PayloadKeyring } from '../../../payloads/encryption-codec';
import { parseEncryptionKeys } from '../../../payloads/encryption-keys';
import { LocalDirBlobStore } from '../../../payloads/store';

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
const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
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
    server = await startCodecServer({
      codec,
      maxRequestBytes: 64 * 1024,
      allowedOrigins: ['http://localhost:8233', 'http://127.0.0.1:1'],
      allowEncode: true,
    });
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

  it('answers the Web UI’s preflight from an allowed origin with CORS headers', async () => {
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

  it('refuses a page of an origin it was not given, loopback ones and look-alike names included', async () => {
    const origins = [
      'http://127.0.0.1.evil.example',
      'http://127.attacker.example',
      'https://127.0.0.1.nip.io',
      'http://localhost.evil.example',
      // Loopback, but not the Web UI: another local app's page.
      'http://127.0.0.1:5173',
      'http://localhost:8234',
      'http://[::1]:8233',
    ];
    for (const origin of origins) {
      const preflight = await fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Private-Network': 'true',
        },
      });
      expect([origin, preflight.status]).toEqual([origin, 403]);
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(preflight.headers.get('access-control-allow-credentials')).toBeNull();
      expect(preflight.headers.get('access-control-allow-private-network')).toBeNull();
      const write = await post('/encode', { payloads: [] }, { Origin: origin });
      expect([origin, write.status]).toEqual([origin, 403]);
      expect(write.headers.get('access-control-allow-origin')).toBeNull();
    }
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
      /^origin https:\/\/evil\.example may not call this codec endpoint \(allowed: http:\/\/localhost:8233, http:\/\/127\.0\.0\.1:1; add it to payloads\.codec_server\.allowed_origins\)$/,
    );
  });

  it('answers only requests addressed to a loopback host, so a re-pointed name reaches nothing', async () => {
    const byHost = (host: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const body = JSON.stringify({ payloads: [] });
        const request = httpRequest(
          `${server.url}/decode`,
          {
            method: 'POST',
            headers: { Host: host, 'Content-Type': 'application/json', 'Content-Length': body.length },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
            );
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    for (const host of ['127.0.0.1.nip.io:8081', '127.attacker.example', 'evil.example:8081']) {
      const answer = await byHost(host);
      expect([host, answer.status]).toEqual([host, 421]);
      expect(JSON.parse(answer.body)).toEqual({
        error: `this codec endpoint answers requests to a loopback address only (127.0.0.1, [::1], localhost), not to "${host}"`,
      });
    }
    for (const host of ['127.0.0.1:8081', 'localhost:8081', '127.0.0.2', '[::1]:8081']) {
      expect([host, (await byHost(host)).status]).toEqual([host, 200]);
    }
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

describe('codec server defaults and guards', () => {
  let dir: string;
  let codec: ClaimCheckCodec;
  const servers: RunningCodecServer[] = [];

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'codec-server-guards-'));
    codec = new ClaimCheckCodec({ store: new LocalDirBlobStore(dir), thresholdBytes: 1024 });
  });

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (options: Omit<CodecServerOptions, 'codec'> = {}) => {
    const server = await startCodecServer({ codec, ...options });
    servers.push(server);
    return server;
  };
  const largePayload = (seed: string, bytes = 2000) =>
    toJson(defaultPayloadConverter.toPayload({ text: seed.repeat(bytes) }));
  const error = async (response: Response) => ((await response.json()) as { error: string }).error;

  it('trusts no page by default, and a page of an origin it is told of afterwards', async () => {
    const server = await start();
    const ask = (origin: string) =>
      fetch(`${server.url}/decode`, {
        method: 'OPTIONS',
        headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' },
      });
    expect((await ask('http://127.0.0.1:8233')).status).toBe(403);
    expect((await ask('http://localhost:8233')).status).toBe(403);
    server.allowOrigins(['http://127.0.0.1:8233', 'http://localhost:8233']);
    for (const origin of ['http://127.0.0.1:8233', 'http://localhost:8233']) {
      const answer = await ask(origin);
      expect(answer.status).toBe(204);
      expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
    }
    expect((await ask('http://127.0.0.1:8234')).status).toBe(403);
  });

  it('serves /encode only when asked to, and /decode always', async () => {
    const server = await start();
    const encode = await fetch(`${server.url}/encode`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ payloads: [largePayload('x')] }),
    });
    expect(encode.status).toBe(403);
    expect(await error(encode)).toBe(
      '/encode is off on this codec endpoint (payloads.codec_server.allow_encode: true turns it on; ' +
        'the Web UI needs it to start a workflow or send a signal with input)',
    );
    const decode = await fetch(`${server.url}/decode`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ payloads: [largePayload('x')] }),
    });
    expect(decode.status).toBe(200);
  });

  it('with a token, answers only calls that carry it as a bearer token; a preflight needs none', async () => {
    const server = await start({
      token: 's3cret-token',
      tokenSource: 'the value of $SUBAGENTS_CODEC_TOKEN',
      allowedOrigins: ['https://temporal.example.com'],
    });
    const call = (headers: Record<string, string>) =>
      fetch(`${server.url}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ payloads: [] }),
      });
    const refusedHeaders: Record<string, string>[] = [
      {},
      { Authorization: 'Bearer wrong-token' },
      { Authorization: 's3cret-token' },
      { Authorization: 'Basic s3cret-token' },
      { Authorization: 'Bearer s3cret-token-and-more' },
    ];
    for (const headers of refusedHeaders) {
      const answer = await call(headers);
      expect([headers, answer.status]).toEqual([headers, 401]);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(await error(answer)).toBe(
        'this codec endpoint needs Authorization: Bearer <token>, the token being the value of $SUBAGENTS_CODEC_TOKEN',
      );
    }
    expect((await call({ Authorization: 'Bearer s3cret-token' })).status).toBe(200);
    expect((await call({ Authorization: 'bearer s3cret-token' })).status).toBe(200);
    // The browser's own question carries no credentials; the answer lets the UI send Authorization.
    const preflight = await fetch(`${server.url}/decode`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://temporal.example.com',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization,content-type,x-namespace',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('authorization');
    // A refused call from an allowed page still says why, readable by the page.
    const refused = await call({ Origin: 'https://temporal.example.com' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('https://temporal.example.com');
  });

  it('bounds what one client, and all clients, may write through /encode per window', async () => {
    const server = await start({
      allowEncode: true,
      encodeQuota: { perClientBytes: 12_000, totalBytes: 18_000, windowMs: 3_600_000 },
    });
    // From a given loopback address: the endpoint counts by remote address.
    const encodeFrom = (localAddress: string, payload: JsonPayload) =>
      new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
        const body = JSON.stringify({ payloads: [payload] });
        const request = httpRequest(
          `${server.url}/encode`,
          {
            method: 'POST',
            localAddress,
            headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                headers: response.headers,
                body: Buffer.concat(chunks).toString('utf8'),
              }),
            );
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    // Each request is about 2.7 KB of JSON (a 2,000-character value, base64).
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await encodeFrom('127.0.0.1', largePayload(`a${i}`, 1000))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    const spent = await encodeFrom('127.0.0.1', largePayload('b2', 1000));
    expect(spent.status).toBe(429);
    expect(Number(spent.headers['retry-after'])).toBeGreaterThan(3500);
    expect((JSON.parse(spent.body) as { error: string }).error).toMatch(
      /^127\.0\.0\.1 has written \d+ of its 12000 bytes through \/encode in this 3600 s window; \d+ more would pass it \(payloads\.codec_server\.max_encode_bytes_per_client\)$/,
    );
    // Another client has a budget of its own, up to the total.
    const other: number[] = [];
    for (let i = 0; i < 4; i++)
      other.push((await encodeFrom('127.0.0.2', largePayload(`c${i}`, 1000))).status);
    expect(other).toEqual([200, 200, 429, 429]);
    const total = await encodeFrom('127.0.0.2', largePayload('d2', 1000));
    expect((JSON.parse(total.body) as { error: string }).error).toMatch(
      /^all clients have written \d+ of 18000 bytes .*\(payloads\.codec_server\.max_encode_bytes\)$/,
    );
    // A request larger than any budget can never pass: 413, not a retry.
    const huge = await encodeFrom('127.0.0.3', largePayload('e', 10_000));
    expect(huge.status).toBe(413);
    expect((JSON.parse(huge.body) as { error: string }).error).toMatch(
      /^an \/encode request of \d+ bytes is over what one client may write in 3600 s \(12000 bytes; /,
    );
  });

  it('reads its settings from payloads.codec_server and the token from the variable token_env names', () => {
    const settings = defaultPayloadSettings().codec_server;
    expect(codecHttpOptions(settings, {})).toEqual({
      allowedOrigins: [],
      allowEncode: false,
      encodeQuota: { perClientBytes: 64 * 1024 * 1024, totalBytes: 256 * 1024 * 1024, windowMs: 3_600_000 },
    });
    expect(codecHttpOptions(settings, { SUBAGENTS_CODEC_TOKEN: '' }).token).toBeUndefined();
    expect(codecHttpOptions(settings, { SUBAGENTS_CODEC_TOKEN: 'tok' })).toMatchObject({
      token: 'tok',
      tokenSource: 'the value of $SUBAGENTS_CODEC_TOKEN',
    });
    expect(
      codecHttpOptions(
        { ...settings, token_env: 'UI_CODEC_TOKEN', allow_encode: true },
        { UI_CODEC_TOKEN: 'u' },
      ),
    ).toMatchObject({ token: 'u', tokenSource: 'the value of $UI_CODEC_TOKEN', allowEncode: true });
  });
});

describe('codec server over encrypted payloads', () => {
  const newKey = (id: string) =>
    parseEncryptionKeys(`${id}:${randomBytes(32).toString('base64')}`, 'TEST')[0];
  const [older, newer] = [newKey('old-2024'), newKey('new-2025')];
  let server: RunningCodecServer;

  beforeAll(async () => {
    server = await startCodecServer({ codec: new EncryptionCodec(new PayloadKeyring([newer])) });
  });

  afterAll(() => server.close());

  const sealed = async (key = older) =>
    toJson((await new EncryptionCodec(new PayloadKeyring([key])).encode([toPayload('the launch code')]))[0]);
  const decode = async (payload: JsonPayload) => {
    const response = await fetch(`${server.url}/decode`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ payloads: [payload] }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it('decodes a payload sealed with a key it holds', async () => {
    const { status, body } = await decode(await sealed(newer));
    expect(status).toBe(200);
    expect(valueOf((body.payloads as JsonPayload[])[0])).toBe('the launch code');
  });

  it('answers 422 naming the key it lacks, and shows nothing of the payload', async () => {
    const { status, body } = await decode(await sealed());
    expect(status).toBe(422);
    expect(body.key_id).toBe('old-2024');
    expect(body.error).toMatch(
      /^payload is encrypted with key old-2024, which this process does not hold \(keys held: new-2025\); add the key old-2024 to SUBAGENTS_ENCRYPTION_KEY/,
    );
    expect(JSON.stringify(body)).not.toContain('launch code');
  });

  it('answers 422 for a payload that does not decrypt under the key it names', async () => {
    const payload = await sealed(newer);
    const data = Buffer.from(payload.data, 'base64');
    data[data.length - 1] ^= 1;
    const { status, body } = await decode({ ...payload, data: data.toString('base64') });
    expect(status).toBe(422);
    expect(body.error).toMatch(
      /^payload is encrypted with key new-2025 but does not decrypt: it was altered/,
    );
  });
});

describe('isAllowedOrigin', () => {
  it('allows listed origins only, compared as origins, or any with *', () => {
    expect(isAllowedOrigin('http://127.0.0.1:8233')).toBe(false);
    expect(isAllowedOrigin('http://localhost:5173')).toBe(false);
    expect(isAllowedOrigin('http://127.0.0.1:8233', ['http://127.0.0.1:8233'])).toBe(true);
    expect(isAllowedOrigin('http://127.0.0.1:8234', ['http://127.0.0.1:8233'])).toBe(false);
    expect(isAllowedOrigin('https://temporal.example.com')).toBe(false);
    expect(isAllowedOrigin('https://temporal.example.com', ['https://temporal.example.com'])).toBe(true);
    expect(isAllowedOrigin('https://temporal.example.com', ['https://Temporal.Example.com:443/'])).toBe(true);
    expect(isAllowedOrigin('http://temporal.example.com', ['https://temporal.example.com'])).toBe(false);
    expect(isAllowedOrigin('https://temporal.example.com', ['*'])).toBe(true);
    expect(isAllowedOrigin('null', ['*'])).toBe(false);
    for (const lookAlike of [
      'http://127.0.0.1.evil.example',
      'http://127.attacker.example',
      'https://127.0.0.1.nip.io',
      'http://localhost.evil.example',
    ]) {
      expect([
        lookAlike,
        isAllowedOrigin(lookAlike, ['http://127.0.0.1:8233', 'http://localhost:8233']),
      ]).toEqual([lookAlike, false]);
    }
  });
});

describe('isLoopbackHost', () => {
  it('compares the host as an address in 127.0.0.0/8 or ::1, not as text', () => {
    for (const host of [
      '127.0.0.1',
      '127.0.0.1:8081',
      '127.1.2.3',
      'localhost:1',
      '[::1]',
      '[::1]:8081',
      '::1',
    ])
      expect([host, isLoopbackHost(host)]).toEqual([host, true]);
    for (const host of [
      '127.0.0.1.evil.example',
      '127.attacker.example',
      '127.0.0.1.nip.io:443',
      'localhost.evil.example',
      '128.0.0.1',
      '10.0.0.1:8081',
      '[::2]',
      '',
    ])
      expect([host, isLoopbackHost(host)]).toEqual([host, false]);
  });
});
