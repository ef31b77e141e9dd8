/**
 * `subagents serve`'s HTTP server (docs/live.md): a run's live stream as Server-Sent Events
 * (`GET /runs/<lead run id>/stream`: the backlog, then live; `data:` lines of JSON), the page that shows it
 * (`GET /`, `GET /runs/<id>`), and the page's inbox: what the run waits on (`GET /runs/<id>/inbox`) and the
 * decisions (`POST /runs/<id>/approve|deny|answer`), sent as the same Updates the CLI sends.
 *
 * Access: loopback only by default, answering only requests addressed to a loopback host (no DNS rebinding).
 * Bearer tokens, each with the name of its person, let a person in: with tokens set, nothing is served without
 * one. Behind a proxy that signs people in, a trusted header names the person. Deciding always needs a person:
 * unauthenticated, the page can watch (on loopback, without tokens) but not decide.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isLoopbackHost } from '../payloads/codec-server';
import type { StreamBridge } from '../payloads/stream/bridge';
import type { StreamEntry } from '../contracts/stream';
import { ApprovalRefusedError, AnswerRefusedError, type SubagentsClient } from './api';
import { LIVE_PAGE_HTML } from './live-page';

export interface LiveServerOptions {
  client: SubagentsClient;
  /** Default 127.0.0.1. Another address needs tokens or a user header. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Bearer tokens and the person each names. */
  tokens?: ReadonlyMap<string, string>;
  /** A header a signing-in proxy sets to the person's name (e.g. `x-forwarded-user`); trusted as said. */
  userHeader?: string;
  /** Default: this process's bridge. */
  bridge?: StreamBridge;
  /** How often a stream reads the run's state (default 1000 ms). */
  pollMs?: number;
  /** Where a decision is logged (who decided what). */
  log?: (line: string) => void;
}

export interface LiveServer {
  url: string;
  close(): Promise<void>;
}

const LOOPBACK = '127.0.0.1';
const MAX_BODY_BYTES = 64 * 1024;
const KEEP_ALIVE_MS = 15_000;

/** `name:token,name:token` (a token alone names `token`), as SUBAGENTS_SERVE_TOKENS holds them. */
export function parseServeTokens(text: string | undefined): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const item of (text ?? '').split(',').map((part) => part.trim())) {
    if (item === '') continue;
    const at = item.indexOf(':');
    if (at < 0) tokens.set(item, 'token');
    else tokens.set(item.slice(at + 1), item.slice(0, at));
  }
  return tokens;
}

export async function startLiveServer(options: LiveServerOptions): Promise<LiveServer> {
  const host = options.host ?? LOOPBACK;
  const loopback = isLoopbackHost(host);
  if (!loopback && (options.tokens?.size ?? 0) === 0 && options.userHeader === undefined) {
    throw new Error(
      `serve: --host ${host} is not a loopback address: set tokens (SUBAGENTS_SERVE_TOKENS) or --user-header ` +
        'so that nobody unauthenticated reaches the runs',
    );
  }
  const server = createServer((request, response) => {
    handle(options, loopback, request, response).catch((err: unknown) => {
      if (!response.headersSent)
        reply(response, 500, { error: err instanceof Error ? err.message : String(err) });
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return { url: `http://${shownHost}:${port}`, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Who the request is from: a token's person, the proxy's header, or nobody; refused: a wrong token. */
function personOf(options: LiveServerOptions, request: IncomingMessage): string | undefined | false {
  const authorization = request.headers.authorization;
  if (authorization !== undefined && options.tokens && options.tokens.size > 0) {
    const given = /^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim();
    if (given === undefined) return false;
    for (const [token, name] of options.tokens) if (sameSecret(given, token)) return name;
    return false;
  }
  if (options.userHeader !== undefined) {
    const value = request.headers[options.userHeader.toLowerCase()];
    const name = Array.isArray(value) ? value[0] : value;
    if (name !== undefined && name.trim() !== '') return name.trim();
  }
  return undefined;
}

function sameSecret(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

const RUN_ROUTE = /^\/runs\/([^/]+)(?:\/(stream|inbox|approve|deny|answer))?$/;

async function handle(
  options: LiveServerOptions,
  loopback: boolean,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const host = request.headers.host ?? '';
  if (loopback && !isLoopbackHost(host)) {
    reply(response, 403, {
      error: `this server answers requests to a loopback address only, not to ${host}`,
    });
    return;
  }
  const url = new URL(request.url ?? '/', 'http://server');
  const person = personOf(options, request);
  const tokensSet = (options.tokens?.size ?? 0) > 0;
  if (person === false || (tokensSet && person === undefined && url.pathname !== '/' && !isPage(url))) {
    reply(response, 401, {
      error: 'this server needs Authorization: Bearer <token> (one of SUBAGENTS_SERVE_TOKENS)',
    });
    return;
  }
  if (request.method === 'GET' && (url.pathname === '/' || isPage(url))) {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(LIVE_PAGE_HTML);
    return;
  }
  if (request.method === 'GET' && url.pathname === '/whoami') {
    reply(response, 200, { person: person ?? null, can_decide: person !== undefined });
    return;
  }
  const route = RUN_ROUTE.exec(url.pathname);
  if (route === null || route[2] === undefined) {
    reply(response, 404, { error: `no such path: ${url.pathname}` });
    return;
  }
  const runId = decodeURIComponent(route[1]);
  const action = route[2];
  if (action === 'stream' && request.method === 'GET') return serveStream(options, runId, request, response);
  if (action === 'inbox' && request.method === 'GET') {
    const [approvals, questions] = await Promise.all([
      options.client.approvals(runId),
      options.client.questions(runId),
    ]);
    reply(response, 200, { approvals, questions });
    return;
  }
  if (request.method !== 'POST') {
    reply(response, 405, { error: `${request.method ?? ''} ${url.pathname} is not served` });
    return;
  }
  if (person === undefined) {
    reply(response, 401, {
      error:
        'deciding needs a signed-in person: a bearer token (SUBAGENTS_SERVE_TOKENS) or the proxy user header',
    });
    return;
  }
  await decide(options, runId, action, person, request, response);
}

/** The page is served at `/` and at `/runs/<id>` (the run it opens). */
function isPage(url: URL): boolean {
  return /^\/runs\/[^/]+\/?$/.test(url.pathname);
}

async function decide(
  options: LiveServerOptions,
  runId: string,
  action: string,
  person: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (!(request.headers['content-type'] ?? '').startsWith('application/json')) {
    reply(response, 415, { error: 'send the decision as application/json' });
    return;
  }
  const body = (await readJson(request)) as Record<string, unknown>;
  const text = (key: string) => (typeof body[key] === 'string' ? body[key] : undefined);
  const run = options.client.getRun(runId);
  try {
    let recorded: unknown;
    if (action === 'approve') recorded = await run.approve(text('ref'), text('note'), { by: person });
    else if (action === 'deny') {
      const reason = text('reason');
      if (reason === undefined || reason.trim() === '') {
        reply(response, 400, { error: 'a denial needs a reason (the agent reads it)' });
        return;
      }
      recorded = await run.deny(text('ref'), reason, { by: person });
    } else {
      recorded = await run.answer(text('answer') ?? '', {
        ...(text('question') !== undefined && { question: text('question') }),
        by: person,
      });
    }
    options.log?.(`${person} ${action}: run ${runId} ${text('ref') ?? text('question') ?? ''}`.trim());
    reply(response, 200, { recorded, by: person });
  } catch (err) {
    if (err instanceof ApprovalRefusedError || err instanceof AnswerRefusedError) {
      reply(response, 409, { error: err.message });
      return;
    }
    throw err;
  }
}

async function serveStream(
  options: LiveServerOptions,
  runId: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const stop = new AbortController();
  request.on('close', () => stop.abort());
  const last = request.headers['last-event-id'];
  const after = typeof last === 'string' && last !== '' ? last : undefined;
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no',
    connection: 'keep-alive',
  });
  response.flushHeaders();
  const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
  try {
    const stream = options.client.getRun(runId).stream({
      signal: stop.signal,
      ...(after !== undefined && { after }),
      ...(options.bridge && { bridge: options.bridge }),
      ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
    });
    for await (const entry of stream) response.write(sseFrame(entry));
    response.write('event: end\ndata: {}\n\n');
  } catch (err) {
    if (!stop.signal.aborted)
      response.write(`event: error\ndata: ${JSON.stringify({ error: String(err) })}\n\n`);
  } finally {
    clearInterval(keepAlive);
    response.end();
  }
}

/** One entry as an SSE frame: its bridge id (to resume from), its event as one `data:` line of JSON. */
export function sseFrame(entry: StreamEntry): string {
  return `${entry.id === '' ? '' : `id: ${entry.id}\n`}data: ${JSON.stringify(entry.event)}\n\n`;
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error(`a request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
  } catch {
    return {};
  }
}
