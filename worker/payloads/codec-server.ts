/**
 * A codec endpoint for the Temporal Web UI and CLI (Temporal's remote codec protocol): `POST …/decode` and
 * `POST …/encode` take `{"payloads": [{"metadata": {key: base64}, "data": base64}]}` (a Payloads message in
 * protobuf JSON) and answer the same shape, run through the claim-check codec. Only the path's last segment
 * counts, so `/<namespace>/decode` works too. The Web UI calls it from the browser, hence CORS: loopback
 * origins (the embedded UI) and configured ones may call it; it listens on loopback only.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { PayloadSettings } from '../../contracts/config/payloads';
import { PayloadBlobError } from './claim-check-codec';
import { projectCodec } from './data-converter';

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
  /** Browser origins allowed besides loopback ones; `*` allows any. */
  allowedOrigins?: readonly string[];
  maxRequestBytes?: number;
}

export interface RunningCodecServer {
  /** The endpoint to give the Web UI (`--ui-codec-endpoint`) or the CLI (`--codec-endpoint`). */
  url: string;
  port: number;
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
  ) {
    super(message);
  }
}

interface JsonPayload {
  metadata: Record<string, string>;
  data: string;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** May a page served from `origin` call the endpoint? Loopback pages always may; others when listed. */
export function isAllowedOrigin(origin: string, allowed: readonly string[] = []): boolean {
  if (allowed.includes('*')) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  if (LOOPBACK_HOSTS.has(url.hostname) || url.hostname.startsWith('127.')) return true;
  return allowed.some((entry) => entry.replace(/\/$/, '').toLowerCase() === url.origin.toLowerCase());
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
  const allowed = options.allowedOrigins ?? [];
  const limit = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const origin = request.headers.origin;
    const originAllowed = origin === undefined || isAllowedOrigin(origin, allowed);
    if (origin !== undefined && originAllowed) {
      response.setHeader('Access-Control-Allow-Origin', origin);
      // The UI may send cookies (`includeCredentials`), which a wildcard origin would not allow.
      response.setHeader('Access-Control-Allow-Credentials', 'true');
    }
    response.setHeader('Vary', 'Origin');

    const path = new URL(request.url ?? '/', 'http://codec').pathname.replace(/\/+$/, '');
    const action = path.endsWith('/decode') ? 'decode' : path.endsWith('/encode') ? 'encode' : undefined;
    if (action === undefined) {
      throw new HttpError(404, `no endpoint at ${path || '/'} (POST …/decode or …/encode)`);
    }
    if (!originAllowed) {
      throw new HttpError(
        403,
        `origin ${origin} may not call this codec endpoint (allowed: loopback pages` +
          `${allowed.length ? `, ${allowed.join(', ')}` : ''}; add it to payloads.codec_server.allowed_origins)`,
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
    const payloads = parsePayloads(await readBody(request, limit));
    const result =
      action === 'decode' ? await options.codec.decode(payloads) : await options.codec.encode(payloads);
    send(response, 200, { payloads: result.map(payloadToJson) });
  };
  return (request, response) => {
    handle(request, response).catch((err: unknown) => {
      const status = err instanceof HttpError ? err.status : err instanceof PayloadBlobError ? 400 : 500;
      const message = err instanceof Error ? err.message : String(err);
      if (response.headersSent) {
        response.destroy();
        return;
      }
      // Unread request bytes would otherwise hold the connection; closing it after the answer is simpler.
      if (status === 413) response.setHeader('Connection', 'close');
      send(response, status, { error: message });
    });
  };
}

/** Starts the endpoint on loopback; `url` is what `--ui-codec-endpoint` wants. */
export async function startCodecServer(options: CodecServerOptions): Promise<RunningCodecServer> {
  const host = options.host ?? LOOPBACK;
  const server = createServer(codecRequestHandler(options));
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
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A browser keeps idle connections open; they would hold close() forever.
        server.closeAllConnections();
      }),
  };
}

/**
 * The endpoint that runs beside the embedded dev server (on unless payloads.codec_server.enabled is false),
 * over this process's payload store. `extraOrigins`: e.g. the origin of temporal.ui_url.
 */
export async function startEmbeddedCodecServer(
  settings: PayloadSettings,
  extraOrigins: readonly string[] = [],
): Promise<RunningCodecServer | undefined> {
  if (!settings.codec_server.enabled) return undefined;
  return startCodecServer({
    codec: projectCodec(settings),
    port: settings.codec_server.port ?? 0,
    allowedOrigins: [...settings.codec_server.allowed_origins, ...extraOrigins],
  });
}
