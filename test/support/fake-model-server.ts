/**
 * A fake model provider over real HTTP (127.0.0.1), for tests of the network model providers and for end-to-end
 * runs that must not reach a real model: planned replies served turn by turn (text, tool calls, usage, the
 * provider's stop reason), errors with a status, a message and headers, raw bodies, delays, and an outage mode
 * that answers every chat request with an error until a given time. What each provider's wire looks like — its
 * routes, its key header, its error body, its streamed and plain answers — is its dialect (fake-openai.ts,
 * fake-anthropic.ts, fake-gemini.ts, fake-bedrock.ts, fake-ollama.ts); the answers themselves are written by
 * activities/model/wire-replies.ts, as the worker's warm-up writes them.
 */
import { performance } from 'node:perf_hooks';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WireReply } from '../../activities/model/wire-replies';

export interface FakeToolCall {
  name: string;
  /** An object is sent as JSON; a string is sent as is (to test invalid JSON, where the wire carries text). */
  args?: string | Record<string, unknown>;
  /** Default `call_fake_<request>_<k>`. */
  id?: string;
}

export interface FakeUsage {
  /** Every prompt token, cached ones included (each dialect splits them as its provider does). */
  input_tokens: number;
  output_tokens: number;
  total_tokens?: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
}

export interface FakeCompletion {
  content?: string;
  tool_calls?: FakeToolCall[];
  /** `null`: report no usage at all. Omitted: a deterministic estimate from the request and reply sizes. */
  usage?: FakeUsage | null;
  /** The provider's own stop reason; default its word for "tool calls" when there are some, else for "done". */
  finish_reason?: string;
  /** The model name the reply reports; default the requested model. */
  model?: string;
  /**
   * Anthropic's and Bedrock's: the model's thinking before the answer (sealed with a signature the fake makes,
   * `sig-fake-<reply index>`); Gemini's fake sends the signature alone, on the first function call.
   */
  thinking?: string;
  /** Wait before sending the response headers (timeout and cancellation tests). */
  delay_ms?: number;
  /** Wait between stream chunks (heartbeat tests). */
  chunk_delay_ms?: number;
}

export interface FakeHttpError {
  status: number;
  error_message: string;
  /** The provider's error type (`rate_limit_exceeded`, `overloaded_error`, `ThrottlingException`…). */
  error_type?: string;
  delay_ms?: number;
  /** Sent as the provider sends a wait: the `Retry-After` header (Gemini: a RetryInfo detail), in seconds. */
  retry_after?: number | string;
}

/** Every chat request before `until` gets this error; later ones are answered as usual (queue, `respond`). */
export interface FakeOutage {
  /** Epoch milliseconds. */
  until: number;
  /** Default 500. */
  status?: number;
  /** Default: OpenAI's own text for a server error. */
  error_message?: string;
  /** Sent as the `Retry-After` header: seconds, or an HTTP date as text. */
  retry_after?: number | string;
}

export const OUTAGE_MESSAGE = 'The server had an error while processing your request. Sorry about that!';

/** A body sent verbatim (malformed-response tests). */
export interface FakeRawReply {
  raw_body: string;
  status?: number;
  content_type?: string;
  delay_ms?: number;
}

export type FakeReply = FakeCompletion | FakeHttpError | FakeRawReply;

export interface RecordedRequest<Body = Record<string, unknown>> {
  method: string;
  path: string;
  /** The query string's parameters. */
  query: Record<string, string>;
  /** When it arrived (epoch ms). */
  at: number;
  authorization?: string;
  /** Every header, lower-cased. */
  headers: Record<string, string>;
  /** The parsed JSON body; undefined for requests without one. */
  body?: Body;
  /** A chat request (served a reply), as opposed to a model list or a refused route. */
  chat?: boolean;
  /** The client closed the connection before the answer ended (a cancelled or timed-out call). */
  aborted?: boolean;
}

/** What every dialect can say of a chat request, for responders that serve several providers alike. */
export interface FakeRequestView {
  model: string;
  stream: boolean;
  /** The system prompt's text. */
  system: string;
  /** The text of the last user message (tool results excluded). */
  last_user_text: string;
  /** The tool results sent back, in order, as text. */
  tool_results: string[];
  /** The names of the tools offered. */
  tools: string[];
  /** The size of the transcript as sent (its JSON), for the default usage estimate. */
  prompt_chars: number;
}

export type FakeResponder<Body = Record<string, unknown>> = (
  request: Body,
  index: number,
  view: FakeRequestView,
) => FakeReply | Promise<FakeReply>;

export interface FakeServerOptions<Body = Record<string, unknown>> {
  /** Default: a free port. */
  port?: number;
  /** Served in order, before `respond` is asked. */
  replies?: FakeReply[];
  /** Answers once the queue is empty; default: a short text echoing the last user message. */
  respond?: FakeResponder<Body>;
  /** `false`: answer every request with a plain answer even when it asks for a stream (an endpoint that cannot stream). */
  streaming?: boolean;
  /** When set, requests without this key (where the provider carries it) get the provider's 401. */
  api_key?: string;
  /** Starts in an outage (see `startOutage`). */
  outage?: FakeOutage;
  /**
   * Told of each part of an answer as soon as it was handed to the network: the chat request's index, the part,
   * and when (epoch ms, `performance.timeOrigin + performance.now()`): latency benchmarks' send stamps.
   */
  sent?: (index: number, part: string | Buffer, at: number) => void;
}

/** A chat request as a dialect reads it from its route. */
export interface ChatRoute {
  stream: boolean;
  /** The model named by the path (Gemini, Bedrock, Azure's deployment), else undefined: the body names it. */
  model?: string;
}

/** A provider's wire, as its fake serves it. */
export interface FakeDialect<Body> {
  /** Its name in messages: `anthropic`, `google`, … */
  name: string;
  /** A chat request's route, else `models` for the model list, else undefined (404). */
  route(
    method: string,
    path: string,
    query: Record<string, string>,
    body: Body | undefined,
  ): ChatRoute | 'models' | undefined;
  /** Whether the request carries `key` where the provider wants it. */
  authorized(request: RecordedRequest<Body>, key: string): boolean;
  /** Why a chat body is refused as the provider would (HTTP 400), or undefined. */
  invalid?(body: Body | undefined): string | undefined;
  view(body: Body, route: ChatRoute): FakeRequestView;
  /** The provider's own stop reason for an answer, with or without tool calls. */
  defaultStopReason(hasToolCalls: boolean): string;
  /** The answer on the wire; `index` counts chat requests (ids, default tool-call ids). */
  answer(
    reply: WireReply,
    route: ChatRoute,
    body: Body,
    index: number,
  ): { contentType: string; parts: Array<string | Buffer> };
  /** The provider's error response. */
  error(error: FakeHttpError): { body: unknown; headers: http.OutgoingHttpHeaders };
  /** The model list (`GET …/models`), for `doctor --check-models`-like requests. */
  models?(): unknown;
}

export class FakeModelServer<Body = Record<string, unknown>> {
  /** Every request received, in order, with its parsed body. */
  readonly requests: RecordedRequest<Body>[] = [];
  private readonly queue: FakeReply[];
  private readonly closing = new AbortController();
  private chatCount = 0;
  private listeningPort = 0;
  private outage: FakeOutage | undefined;

  protected constructor(
    private readonly server: http.Server,
    protected readonly dialect: FakeDialect<Body>,
    protected readonly options: FakeServerOptions<Body>,
  ) {
    this.queue = [...(options.replies ?? [])];
    this.outage = options.outage;
  }

  /** Starts a server on 127.0.0.1 speaking `dialect`, and resolves once it listens. */
  protected static async listen<Body, T extends FakeModelServer<Body>>(
    make: (server: http.Server) => T,
    port: number | undefined,
  ): Promise<T> {
    const server = http.createServer();
    const fake = make(server);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      fake.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent)
          fake.sendError(res, { status: 500, error_message: `fake server failed: ${String(err)}` });
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port ?? 0, '127.0.0.1', () => resolve());
    });
    fake.listeningPort = (server.address() as AddressInfo).port;
    return fake;
  }

  /** The port it listens on (kept after close, so a test can aim at a port where nothing listens). */
  get port(): number {
    return this.listeningPort;
  }

  /** `http://127.0.0.1:<port>`: the server's root. */
  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The bodies of the chat requests received, in order. */
  get chatRequests(): Body[] {
    return this.chatRecords.flatMap((r) => (r.body ? [r.body] : []));
  }

  /** When each chat request arrived (epoch ms), in order: attempts and the waits between them. */
  get chatRequestTimes(): number[] {
    return this.chatRecords.map((r) => r.at);
  }

  /** The chat requests received, in order, with their headers and query. */
  get chatRecords(): RecordedRequest<Body>[] {
    return this.requests.filter((r) => r.chat);
  }

  /** From now on for `seconds`, every chat request gets the outage's error (default HTTP 500). */
  startOutage(seconds: number, outage: Omit<FakeOutage, 'until'> = {}): void {
    this.outage = { ...outage, until: Date.now() + seconds * 1000 };
  }

  enqueue(...replies: FakeReply[]): void {
    this.queue.push(...replies);
  }

  /** The next `count` chat requests get HTTP `status` with `message`, then replies resume. */
  failNext(count: number, status: number, message: string): void {
    const failures = Array.from({ length: count }, () => ({ status, error_message: message }));
    this.queue.unshift(...failures);
  }

  async close(): Promise<void> {
    this.closing.abort();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const text = await readBody(req);
    const recorded: RecordedRequest<Body> = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      at: Date.now(),
      authorization: req.headers.authorization,
      headers: Object.fromEntries(
        Object.entries(req.headers).map(([name, value]) => [
          name,
          Array.isArray(value) ? value.join(', ') : (value ?? ''),
        ]),
      ),
    };
    if (text) {
      try {
        recorded.body = JSON.parse(text) as Body;
      } catch {
        this.requests.push(recorded);
        return this.sendError(res, {
          status: 400,
          error_message: `request body is not JSON: ${text.slice(0, 80)}`,
        });
      }
    }
    if (url.pathname === '/_fake/requests') return sendJson(res, 200, this.requests);
    this.requests.push(recorded);

    if (this.options.api_key !== undefined && !this.dialect.authorized(recorded, this.options.api_key)) {
      return this.sendError(res, { status: 401, error_message: 'Incorrect API key provided.' });
    }
    const route = this.dialect.route(recorded.method, url.pathname, recorded.query, recorded.body);
    if (route === 'models' && this.dialect.models) return sendJson(res, 200, this.dialect.models());
    if (route === undefined || route === 'models') {
      return this.sendError(res, {
        status: 404,
        error_message: `no route for ${req.method} ${url.pathname}`,
      });
    }
    const refusal = this.dialect.invalid?.(recorded.body);
    if (refusal !== undefined || !recorded.body) {
      return this.sendError(res, { status: 400, error_message: refusal ?? 'the request has no body' });
    }
    recorded.chat = true;
    res.once('close', () => {
      if (!res.writableFinished) recorded.aborted = true;
    });
    const body = recorded.body;
    const outage = this.outage;
    if (outage && recorded.at < outage.until) {
      return this.sendError(res, {
        status: outage.status ?? 500,
        error_message: outage.error_message ?? OUTAGE_MESSAGE,
        retry_after: outage.retry_after,
      });
    }
    const index = this.chatCount++;
    const view = this.dialect.view(body, route);
    const reply = await this.nextReply(body, index, view);
    await this.pause(reply.delay_ms);
    if (res.destroyed) return;

    if ('raw_body' in reply) {
      res.writeHead(reply.status ?? 200, { 'content-type': reply.content_type ?? 'application/json' });
      res.end(reply.raw_body);
      return;
    }
    if ('error_message' in reply) return this.sendError(res, reply);
    const streamed = route.stream && this.options.streaming !== false;
    const wire = this.wireReply(reply, route, view, index);
    const { contentType, parts } = this.dialect.answer(wire, { ...route, stream: streamed }, body, index);
    res.writeHead(200, { 'content-type': contentType, ...(streamed && { 'cache-control': 'no-cache' }) });
    for (const part of parts) {
      if (res.destroyed) return;
      // As a provider's network would, the client's reading paces the writing: a 10 MB answer written in one
      // synchronous loop would hold this process (and the worker beside it in a test) for seconds on a busy host.
      const flowing = res.write(part);
      this.options.sent?.(index, part, performance.timeOrigin + performance.now());
      if (!flowing) await drained(res);
      if (streamed) await this.pause(reply.chunk_delay_ms);
    }
    if (!res.destroyed) res.end();
  }

  private wireReply(
    reply: FakeCompletion,
    route: ChatRoute,
    view: FakeRequestView,
    index: number,
  ): WireReply {
    const toolCalls = (reply.tool_calls ?? []).map((call, k) => ({
      id: call.id ?? `call_fake_${index}_${k}`,
      name: call.name,
      args: typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}),
    }));
    const content = reply.content ?? '';
    const usage =
      reply.usage === null
        ? undefined
        : (reply.usage ?? {
            input_tokens: Math.ceil(view.prompt_chars / 4),
            output_tokens: Math.max(
              1,
              Math.ceil((content + JSON.stringify(reply.tool_calls ?? [])).length / 4),
            ),
          });
    return {
      model: reply.model ?? route.model ?? view.model,
      text: content,
      tool_calls: toolCalls,
      stop_reason: reply.finish_reason ?? this.dialect.defaultStopReason(toolCalls.length > 0),
      ...(reply.thinking !== undefined && {
        thinking: { text: reply.thinking, signature: `sig-fake-${index}` },
      }),
      ...(usage && { usage }),
    };
  }

  private async nextReply(body: Body, index: number, view: FakeRequestView): Promise<FakeReply> {
    const queued = this.queue.shift();
    if (queued) return queued;
    if (this.options.respond) return this.options.respond(body, index, view);
    return { content: `Fake answer to: ${view.last_user_text}` };
  }

  private async pause(ms: number | undefined): Promise<void> {
    if (!ms) return;
    try {
      await sleep(ms, undefined, { signal: this.closing.signal });
    } catch {
      // closing: the connection is about to be destroyed anyway
    }
  }

  private sendError(res: http.ServerResponse, error: FakeHttpError): void {
    const { body, headers } = this.dialect.error(error);
    sendJson(res, error.status, body, headers);
  }
}

/** Sent as the `Retry-After` header: seconds, or an HTTP date as text. */
export function retryAfterHeader(value: number | string | undefined): http.OutgoingHttpHeaders {
  return value === undefined ? {} : { 'retry-after': String(value) };
}

export function sendJson(
  res: http.ServerResponse,
  status: number,
  value: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The text of a message content that may be a string or a list of blocks with `text`. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block) =>
        block && typeof block === 'object' && typeof (block as { text?: unknown }).text === 'string'
          ? (block as { text: string }).text
          : '',
      )
      .join('');
  }
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/** Once `res` can take more, or is closed (a client that stopped reading at a cap never drains it). */
function drained(res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
