/**
 * A codec endpoint for the Temporal Web UI and CLI (Temporal's remote codec protocol): `POST …/decode` and
 * `POST …/encode` take `{"payloads": [{"metadata": {key: base64}, "data": base64}]}` (a Payloads message in
 * protobuf JSON) and answer the same shape, run through the claim-check codec. Only the path's last segment
 * counts, so `/<namespace>/decode` works too. The Web UI calls it from the browser, hence CORS.
 *
 * It trusts no one by default: a browser page may call it only from a listed origin (the embedded dev server
 * adds its own UI's), `/encode` (which writes to the store) is off unless asked for and bounded per client,
 * an optional bearer token guards every call, and on loopback it answers only requests addressed to a
 * loopback host, so a name re-pointed at 127.0.0.1 (DNS rebinding) reaches nothing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { BlockList, isIP } from 'node:net';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { CodecServerSettings, PayloadSettings } from '../contracts/config/payloads';
import { PayloadBlobError } from './claim-check-codec';
import { projectCodec } from './data-converter';
import { MissingEncryptionKeyError, PayloadDecryptionError } from './encryption-codec';
import { EncodeQuota, type EncodeQuotaLimits, type EncodeRefusal } from './encode-quota';

/** References are small, but `/encode` may get a whole workflow input from the UI. */
export const DEFAULT_MAX_REQUEST_BYTES = 8 * 1024 * 1024;
const LOOPBACK = '127.0.0.1';
/** What the Web UI sends (`Authorization` when it passes the user's token); any header a preflight asks for is allowed too. */
const ALLOWED_HEADERS = 'Content-Type, X-Namespace, Authorization';

export interface CodecServerOptions {
  codec: PayloadCodec;
  /** 0 or absent: a free port. */
  port?: number;
  /** Default 127.0.0.1: decoded payloads are transcripts, not for the network. */
  host?: string;
  /**
   * Browser origins (scheme://host[:port]) that may call it; `*` allows any. None by default: requests without
   * an Origin (the CLI, scripts) are not browser pages and pass. Read on each request, so allowOrigins() acts.
   */
  allowedOrigins?: readonly string[];
  /** Serve `/encode`, which writes to the store. Off by default. */
  allowEncode?: boolean;
  /** When set, every call but a CORS preflight must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** Where the token is set, for the 401's message (e.g. `$SUBAGENTS_CODEC_TOKEN`). */
  tokenSource?: string;
  /** What `/encode` may write per client and in total (default DEFAULT_ENCODE_QUOTA). */
  encodeQuota?: EncodeQuotaLimits;
  maxRequestBytes?: number;
}

/** The defaults of payloads.codec_server's max_encode_bytes_per_client, max_encode_bytes, encode_window_seconds. */
export const DEFAULT_ENCODE_QUOTA: EncodeQuotaLimits = {
  perClientBytes: 64 * 1024 * 1024,
  totalBytes: 256 * 1024 * 1024,
  windowMs: 3600 * 1000,
};

export interface RunningCodecServer {
  /** The endpoint to give the Web UI (`--ui-codec-endpoint`) or the CLI (`--codec-endpoint`). */
  url: string;
  port: number;
  /** Lets pages of these origins call it too (the embedded Web UI's, once its port is known). */
  allowOrigins(origins: readonly string[]): void;
  close(): Promise<void>;
}

/** The endpoint could not start (its port is taken): a line for the user, not a crash. */
export class CodecServerError extends Error {
  override name = 'CodecServerError';
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

/** `http://host:port` as the browser sends it (lowercase host, default port dropped); undefined if not http(s). */
function webOrigin(text: string): string | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

/** May a page served from `origin` call the endpoint? Only when listed (or `*` is); loopback pages too. */
export function isAllowedOrigin(origin: string, allowed: readonly string[] = []): boolean {
  const own = webOrigin(origin);
  if (own === undefined) return false;
  return allowed.some((entry) => entry === '*' || webOrigin(entry) === own);
}

const LOOPBACK_RANGES = new BlockList();
LOOPBACK_RANGES.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK_RANGES.addAddress('::1', 'ipv6');
// IPv4-mapped: ::ffff:127.0.0.0/104.
LOOPBACK_RANGES.addSubnet('::ffff:7f00:0', 104, 'ipv6');

/**
 * Is `host` (a host name, an IP, or a Host header's `host[:port]`) this machine's loopback? Compared as an
 * address: `127.0.0.1.evil.example` and `127.attacker.example` are names, not addresses in 127.0.0.0/8.
 */
export function isLoopbackHost(host: string): boolean {
  let hostname: string;
  try {
    hostname = new URL(`http://${host.includes(':') && isIP(host) === 6 ? `[${host}]` : host}`).hostname;
  } catch {
    return false;
  }
  if (hostname === 'localhost') return true;
  const address = hostname.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(address);
  if (family === 0) return false;
  return LOOPBACK_RANGES.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Does `authorization` carry `Bearer <token>`? Compared in constant time. */
function hasBearerToken(authorization: string | undefined, token: string): boolean {
  const given = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '')?.[1];
  if (given === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(token));
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

function bytesFromBase64(value: unknown, where: string): Uint8Array {
  if (typeof value !== 'string' || !BASE64.test(value)) {
    throw new HttpError(400, `${where} is not base64 text`);
  }
  return Buffer.from(value, 'base64');
}

/** One payload of the request, from protobuf JSON (bytes fields are base64). */
function payloadFromJson(value: unknown, index: number): Payload {
  const where = `payloads[${index}]`;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new HttpError(400, `${where} is not an object with metadata and data`);
  }
  const { metadata, data } = value as { metadata?: unknown; data?: unknown };
  if (
    metadata !== undefined &&
    metadata !== null &&
    (typeof metadata !== 'object' || Array.isArray(metadata))
  ) {
    throw new HttpError(400, `${where}.metadata is not an object of base64 values`);
  }
  return {
    metadata: Object.fromEntries(
      Object.entries((metadata ?? {}) as Record<string, unknown>).map(([key, item]) => [
        key,
        bytesFromBase64(item, `${where}.metadata.${key}`),
      ]),
    ),
    data: data === undefined || data === null ? new Uint8Array() : bytesFromBase64(data, `${where}.data`),
  };
}

function payloadToJson(payload: Payload): JsonPayload {
  const base64 = (bytes: Uint8Array | null | undefined) =>
    Buffer.from(bytes?.buffer ?? new ArrayBuffer(0), bytes?.byteOffset ?? 0, bytes?.byteLength ?? 0).toString(
      'base64',
    );
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, base64(value)]),
    ),
    data: base64(payload.data),
  };
}

function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > limit) {
    return Promise.reject(
      new HttpError(413, `request body of ${declared} bytes is over the ${limit}-byte limit`),
    );
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      // Stop reading; the answer closes the connection.
      request.pause();
      reject(new HttpError(413, `request body is over the ${limit}-byte limit`));
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parsePayloads(body: string): Payload[] {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new HttpError(400, `request body is not JSON: ${(err as Error).message}`);
  }
  const payloads = (value as { payloads?: unknown } | null)?.payloads;
  if (!Array.isArray(payloads)) {
    throw new HttpError(
      400,
      'request body has no payloads list (expected {"payloads": [{"metadata": {…}, "data": "…"}]})',
    );
  }
  return payloads.map(payloadFromJson);
}

function send(response: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    response.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}

/** The request handler alone, for a server of the caller's own. */
export function codecRequestHandler(
  options: CodecServerOptions,
): (request: IncomingMessage, response: ServerResponse) => void {
  const limit = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const quota = new EncodeQuota(options.encodeQuota ?? DEFAULT_ENCODE_QUOTA);
  const loopbackOnly = isLoopbackHost(options.host ?? LOOPBACK);
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const allowed = options.allowedOrigins ?? [];
    const origin = request.headers.origin;
    const originAllowed = origin === undefined || isAllowedOrigin(origin, allowed);
    if (origin !== undefined && originAllowed) {
      response.setHeader('Access-Control-Allow-Origin', origin);
      // The UI may send cookies (`includeCredentials`), which a wildcard origin would not allow.
      response.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    response.setHeader('Vary', 'Origin');

    const host = request.headers.host ?? '';
    if (loopbackOnly && !isLoopbackHost(host)) {
      throw new HttpError(
        421,
        `this codec endpoint answers requests to a loopback address only (127.0.0.1, [::1], localhost), ` +
          `not to ${JSON.stringify(host)}`,
      );
    }
    const path = new URL(request.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
    const action = path.endsWith('/decode') ? 'decode' : path.endsWith('/encode') ? 'encode' : undefined;
    if (action === undefined) {
      throw new HttpError(404, `no endpoint at ${path || '/'} (POST …/decode or …/encode)`);
    }
    if (!originAllowed) {
      throw new HttpError(
        403,
        `origin ${origin} may not call this codec endpoint (allowed: ${allowed.length ? allowed.join(', ') : 'none'}; ` +
          `add it to payloads.codec_server.allowed_origins)`,
      );
    }
    if (request.method === 'OPTIONS') {
      response.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      response.setHeader(
        'Access-Control-Allow-Headers',
        request.headers['access-control-request-headers'] ?? ALLOWED_HEADERS,
      );
      response.setHeader('Access-Control-Max-Age', '600');
      // Chrome asks before a public page (a hosted Web UI) may call a loopback address.
      if (request.headers['access-control-request-private-network'] === 'true') {
        response.setHeader('Access-Control-Allow-Private-Network', 'true');
      }
      send(response, 204);
      return;
    }
    if (request.method !== 'POST') {
      response.setHeader('Allow', 'POST, OPTIONS');
      throw new HttpError(405, `${request.method} is not allowed here (POST)`);
    }
    if (options.token !== undefined && !hasBearerToken(request.headers.authorization, options.token)) {
      response.setHeader('WWW-Authenticate', 'Bearer');
      throw new HttpError(
        401,
        `this codec endpoint needs Authorization: Bearer <token>, the token being ` +
          `${options.tokenSource ?? 'the one it was started with'}`,
      );
    }
    const client = request.socket.remoteAddress ?? 'unknown';
    if (action === 'encode') {
      if (options.allowEncode !== true) {
        throw new HttpError(
          403,
          '/encode is off on this codec endpoint (payloads.codec_server.allow_encode: true turns it on; ' +
            'the Web UI needs it to start a workflow or send a signal with input)',
        );
      }
      refuseOverQuota(quota.check(client, Number(request.headers['content-length'] ?? 0)));
    }
    const body = await readBody(request, limit);
    if (action === 'encode') refuseOverQuota(quota.charge(client, Buffer.byteLength(body)));
    const payloads = parsePayloads(body);
    const result =
      action === 'decode' ? await options.codec.decode(payloads) : await options.codec.encode(payloads);
    send(response, 200, { payloads: result.map(payloadToJson) });
  };
  return (request, response) => {
    handle(request, response).catch((err: unknown) => {
      const status = errorStatus(err);
      const message = err instanceof Error ? err.message : String(err);
      if (response.headersSent) {
        response.destroy();
        return;
      }
      if (err instanceof HttpError && err.retryAfterSeconds !== undefined) {
        response.setHeader('Retry-After', String(err.retryAfterSeconds));
      }
      // Unread request bytes would otherwise hold the connection; closing it after the answer is simpler.
      if (status === 413 || status === 429) response.setHeader('Connection', 'close');
      send(response, status, {
        error: message,
        ...(err instanceof MissingEncryptionKeyError && { key_id: err.keyId }),
      });
    });
  };
}

/**
 * A fault of the request's payloads is the caller's (4xx), not the endpoint's: a missing blob (400), and an
 * encrypted payload whose key this endpoint lacks or that does not decrypt (422, its message naming the key;
 * the payload stays sealed). Anything else is 500.
 */
function errorStatus(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (err instanceof PayloadBlobError) return 400;
  if (err instanceof MissingEncryptionKeyError || err instanceof PayloadDecryptionError) return 422;
  return 500;
}

/** 413 for a request that can never fit the quota, 429 (with Retry-After) while the window's is spent. */
function refuseOverQuota(refusal: EncodeRefusal | undefined): void {
  if (refusal === undefined) return;
  if (refusal.kind === 'too_large') throw new HttpError(413, refusal.message);
  throw new HttpError(429, refusal.message, refusal.retryAfterSeconds);
}

/** Starts the endpoint on loopback; `url` is what `--ui-codec-endpoint` wants. */
export async function startCodecServer(options: CodecServerOptions): Promise<RunningCodecServer> {
  const host = options.host ?? LOOPBACK;
  const origins = [...(options.allowedOrigins ?? [])];
  const server = createServer(codecRequestHandler({ ...options, host, allowedOrigins: origins }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        new CodecServerError(
          err.code === 'EADDRINUSE'
            ? `codec server: port ${options.port} on ${host} is in use (payloads.codec_server.port, --port)`
            : `codec server: cannot listen on ${host}:${options.port ?? 0}: ${err.message}`,
        ),
      ),
    );
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('codec server: no TCP address');
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    allowOrigins: (more) => {
      for (const origin of more) if (!origins.includes(origin)) origins.push(origin);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A browser keeps idle connections open; they would hold close() forever.
        server.closeAllConnections();
      }),
  };
}

/**
 * The HTTP side of payloads.codec_server: who may call, whether `/encode` is served and how much it may
 * write, and the bearer token from the environment variable token_env names (unset or empty: no token).
 */
export function codecHttpOptions(
  settings: CodecServerSettings,
  env: NodeJS.ProcessEnv = process.env,
): Omit<CodecServerOptions, 'codec' | 'port' | 'host' | 'maxRequestBytes'> {
  const token = env[settings.token_env];
  return {
    allowedOrigins: settings.allowed_origins,
    allowEncode: settings.allow_encode,
    ...(token ? { token, tokenSource: `the value of $${settings.token_env}` } : {}),
    encodeQuota: {
      perClientBytes: settings.max_encode_bytes_per_client,
      totalBytes: settings.max_encode_bytes,
      windowMs: settings.encode_window_seconds * 1000,
    },
  };
}

/**
 * The endpoint that runs beside the embedded dev server (on unless payloads.codec_server.enabled is false),
 * over this process's payload store. The dev server adds its Web UI's origin once it has picked the UI's port
 * (DevServerOptions.uiCodec); `extraOrigins`: any others, e.g. the origin of temporal.ui_url.
 */
export async function startEmbeddedCodecServer(
  settings: PayloadSettings,
  extraOrigins: readonly string[] = [],
): Promise<RunningCodecServer | undefined> {
  if (!settings.codec_server.enabled) return undefined;
  return startCodecServer({
    codec: projectCodec(settings),
    port: settings.codec_server.port ?? 0,
    ...codecHttpOptions(settings.codec_server),
    allowedOrigins: [...settings.codec_server.allowed_origins, ...extraOrigins],
  });
}
