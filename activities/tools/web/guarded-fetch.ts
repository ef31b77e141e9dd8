/**
 * A direct GET of a model's URL that never reaches a private network unless allowed: the host is resolved and
 * judged before each hop (addresses.ts), the connection is made to the very address judged (Node's `lookup`
 * option answers with it, so no second DNS answer can move it: no rebinding window), redirects are followed by
 * hand (each target judged again, at most `maxRedirects`), and the body is read up to a bound.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkedAddress, type AddressPolicy, type HostLookup, type ResolvedAddress } from './addresses';
import { TransientWebError, WebRefusal } from './errors';

export interface GuardedGetOptions {
  lookup: HostLookup;
  /** Which addresses are refused; `() => false` when the config allows private addresses. */
  refused: AddressPolicy;
  timeoutMs: number;
  /** The most body bytes kept; the rest is not read. */
  maxBytes: number;
  maxRedirects: number;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

export interface FetchedPage {
  /** The URL of the last hop. */
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
  /** The body went on past maxBytes. */
  truncated: boolean;
}

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const TRANSIENT_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

/** A `lookup` that answers every question with the address already judged. */
function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
}

interface Hop {
  status: number;
  location?: string;
  contentType: string;
  body: Buffer;
  truncated: boolean;
}

function requestOnce(url: URL, pinned: ResolvedAddress, options: GuardedGetOptions): Promise<Hop> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Hop>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: 'GET',
        lookup: pinnedLookup(pinned),
        headers: { 'user-agent': 'durable-subagents web_fetch', accept: '*/*', ...options.headers },
        timeout: options.timeoutMs,
        ...(options.signal && { signal: options.signal }),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        const location = response.headers.location;
        const contentType = String(response.headers['content-type'] ?? '');
        if (REDIRECTS.has(status)) {
          response.resume();
          resolve({
            status,
            ...(location && { location }),
            contentType,
            body: Buffer.alloc(0),
            truncated: false,
          });
          return;
        }
        const chunks: Buffer[] = [];
        let kept = 0;
        let truncated = false;
        response.on('data', (chunk: Buffer) => {
          const room = options.maxBytes - kept;
          if (room > 0) chunks.push(chunk.subarray(0, room));
          kept += Math.min(room, chunk.length);
          if (chunk.length > room) {
            truncated = true;
            response.destroy();
            resolve({ status, contentType, body: Buffer.concat(chunks), truncated });
          }
        });
        response.on('end', () => resolve({ status, contentType, body: Buffer.concat(chunks), truncated }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () =>
      request.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
    );
    request.on('error', reject);
    request.end();
  });
}

function networkError(url: URL, err: unknown): Error {
  const code = (err as { code?: unknown }).code;
  const reason = err instanceof Error ? err.message : String(err);
  if (typeof code === 'string' && TRANSIENT_CODES.has(code))
    return new TransientWebError(`fetching ${url.href} failed: ${reason}`);
  return new WebRefusal(`fetching ${url.href} failed: ${reason}`);
}

/** GETs `start`, each hop's host judged and pinned; a refused hop throws a WebRefusal naming it. */
export async function guardedGet(start: string, options: GuardedGetOptions): Promise<FetchedPage> {
  let url: URL;
  try {
    url = new URL(start);
  } catch {
    throw new WebRefusal(
      `${JSON.stringify(start)} is not a URL (write it with its scheme, e.g. https://example.com)`,
    );
  }
  for (let hops = 0; ; hops += 1) {
    const pinned = await checkedAddress(url, options.lookup, options.refused);
    let hop: Hop;
    try {
      hop = await requestOnce(url, pinned, options);
    } catch (err) {
      if (options.signal?.aborted) throw err;
      throw networkError(url, err);
    }
    if (!REDIRECTS.has(hop.status)) {
      return {
        url: url.href,
        status: hop.status,
        contentType: hop.contentType,
        body: hop.body,
        truncated: hop.truncated,
      };
    }
    if (hop.location === undefined)
      throw new WebRefusal(`${url.href} redirected (${hop.status}) without a Location`);
    if (hops === options.maxRedirects)
      throw new WebRefusal(`${start} redirected more than ${options.maxRedirects} times`);
    url = new URL(hop.location, url);
  }
}
