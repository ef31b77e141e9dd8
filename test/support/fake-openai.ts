/**
 * A fake OpenAI-compatible Chat Completions server over real HTTP (127.0.0.1), for tests of the `openai` model
 * provider and for end-to-end runs that must not reach a real model. It speaks the wire format the OpenAI SDK
 * expects: JSON replies, SSE streams with a final usage chunk when `stream_options.include_usage` is set,
 * and error bodies shaped `{"error": {"message", "type"}}`. An outage mode answers every chat request with an
 * error (500, or 429/503 with `Retry-After`) until a given time, for retry tests.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface FakeToolCall {
  name: string;
  /** An object is sent as JSON; a string is sent as is (to test invalid JSON). */
  args?: string | Record<string, unknown>;
  /** Default `call_fake_<request>_<k>`. */
  id?: string;
}

export interface FakeUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens?: number;
}

export interface FakeCompletion {
  content?: string;
  tool_calls?: FakeToolCall[];
  /** `null`: report no usage at all. Omitted: a deterministic estimate from the request and reply sizes. */
  usage?: FakeUsage | null;
  /** Default `tool_calls` when there are tool calls, else `stop`. */
  finish_reason?: string;
  /** The model name the reply reports; default the requested model. */
  model?: string;
  /** Wait before sending the response headers (timeout and cancellation tests). */
  delay_ms?: number;
  /** Wait between stream chunks (heartbeat tests). */
  chunk_delay_ms?: number;
}

export interface FakeHttpError {
  status: number;
  error_message: string;
  error_type?: string;
  delay_ms?: number;
  /** Sent as the `Retry-After` header: seconds, or an HTTP date as text. */
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

export interface FakeChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  [key: string]: unknown;
}

export interface FakeChatRequest {
  model: string;
  messages: FakeChatMessage[];
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export interface RecordedRequest {
  method: string;
  path: string;
  /** When it arrived (epoch ms). */
  at: number;
  authorization?: string;
  /** The parsed JSON body; undefined for requests without one. */
  body?: FakeChatRequest;
}

export type FakeResponder = (request: FakeChatRequest, index: number) => FakeReply | Promise<FakeReply>;

export interface FakeOpenAIOptions {
  /** Default: a free port. */
  port?: number;
  /** Served in order, before `respond` is asked. */
  replies?: FakeReply[];
  /** Answers once the queue is empty; default: a short text echoing the last user message. */
  respond?: FakeResponder;
  /** `false`: answer every request with plain JSON even when it asks for a stream (an endpoint that cannot stream). */
  streaming?: boolean;
  /** When set, requests without `Authorization: Bearer <api_key>` get a 401. */
  api_key?: string;
  /** Starts in an outage (see `startOutage`). */
  outage?: FakeOutage;
}

const CHAT_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const MODEL_PATHS = new Set(['/v1/models', '/models']);

export class FakeOpenAI {
  /** Every request received, in order, with its parsed body. */
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeReply[];
  private readonly closing = new AbortController();
  private chatCount = 0;
  private listeningPort = 0;
  private outage: FakeOutage | undefined;

  private constructor(
    private readonly server: http.Server,
    private readonly options: FakeOpenAIOptions,
  ) {
    this.queue = [...(options.replies ?? [])];
    this.outage = options.outage;
  }

  /** Starts a server on 127.0.0.1 and resolves once it listens. */
  static async start(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
    const server = http.createServer();
    const fake = new FakeOpenAI(server, options);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      fake.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) sendError(res, 500, `fake server failed: ${String(err)}`, 'server_error');
        else res.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
    });
    fake.listeningPort = (server.address() as AddressInfo).port;
    return fake;
  }

  /** The port it listens on (kept after close, so a test can aim at a port where nothing listens). */
  get port(): number {
    return this.listeningPort;
  }

  /** The base URL a client is configured with (`…/v1`). */
  get url(): string {
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** A config's `models` with one model, `fake`, served by this server (no key: it asks for none). */
  modelsConfig(): { models: Array<Record<string, string>> } {
    return { models: [{ name: 'fake', provider: 'openai', model: 'fake-model', base_url: this.url }] };
  }

  /** The bodies of the chat completion requests received, in order. */
  get chatRequests(): FakeChatRequest[] {
    return this.chatRecords.flatMap((r) => (r.body ? [r.body] : []));
  }

  /** When each chat completion request arrived (epoch ms), in order: attempts and the waits between them. */
  get chatRequestTimes(): number[] {
    return this.chatRecords.map((r) => r.at);
  }

  private get chatRecords(): RecordedRequest[] {
    return this.requests.filter((r) => r.body && CHAT_PATHS.has(r.path));
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
    const path = (req.url ?? '/').split('?')[0];
    const text = await readBody(req);
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      at: Date.now(),
      authorization: req.headers.authorization,
    };
    if (text) {
      try {
        recorded.body = JSON.parse(text) as FakeChatRequest;
      } catch {
        this.requests.push(recorded);
        return sendError(res, 400, `request body is not JSON: ${text.slice(0, 80)}`, 'invalid_request_error');
      }
    }
    if (path === '/_fake/requests') return sendJson(res, 200, this.requests);
    this.requests.push(recorded);

    if (
      this.options.api_key !== undefined &&
      req.headers.authorization !== `Bearer ${this.options.api_key}`
    ) {
      return sendError(res, 401, 'Incorrect API key provided.', 'invalid_request_error');
    }
    if (req.method === 'GET' && MODEL_PATHS.has(path)) {
      return sendJson(res, 200, {
        object: 'list',
        data: [{ id: 'fake-model', object: 'model', owned_by: 'fake' }],
      });
    }
    if (req.method !== 'POST' || !CHAT_PATHS.has(path)) {
      return sendError(res, 404, `no route for ${req.method} ${path}`, 'invalid_request_error');
    }
    const body = recorded.body;
    if (!body || !Array.isArray(body.messages)) {
      return sendError(res, 400, "'messages' is a required property", 'invalid_request_error');
    }
    const outage = this.outage;
    if (outage && recorded.at < outage.until) {
      const status = outage.status ?? 500;
      const message = outage.error_message ?? OUTAGE_MESSAGE;
      return sendError(res, status, message, errorTypeFor(status), retryAfterHeader(outage.retry_after));
    }
    const index = this.chatCount++;
    const reply = await this.nextReply(body, index);
    await this.pause(reply.delay_ms);
    if (res.destroyed) return;

    if ('raw_body' in reply) {
      res.writeHead(reply.status ?? 200, { 'content-type': reply.content_type ?? 'application/json' });
      res.end(reply.raw_body);
    } else if ('error_message' in reply) {
      sendError(
        res,
        reply.status,
        reply.error_message,
        reply.error_type ?? errorTypeFor(reply.status),
        retryAfterHeader(reply.retry_after),
      );
    } else if (body.stream === true && this.options.streaming !== false) {
      await this.stream(res, body, reply, index);
    } else {
      sendJson(res, 200, completionBody(body, reply, index));
    }
  }

  private async nextReply(body: FakeChatRequest, index: number): Promise<FakeReply> {
    const queued = this.queue.shift();
    if (queued) return queued;
    if (this.options.respond) return this.options.respond(body, index);
    return { content: `Fake answer to: ${lastUserText(body)}` };
  }

  private async pause(ms: number | undefined): Promise<void> {
    if (!ms) return;
    try {
      await sleep(ms, undefined, { signal: this.closing.signal });
    } catch {
      // closing: the connection is about to be destroyed anyway
    }
  }

  private async stream(
    res: http.ServerResponse,
    request: FakeChatRequest,
    reply: FakeCompletion,
    index: number,
  ): Promise<void> {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = {
      id: `chatcmpl-fake-${index}`,
      object: 'chat.completion.chunk',
      created: 0,
      model: reply.model ?? request.model,
    };
    const choice = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
    const events: unknown[] = [choice({ role: 'assistant', content: '' })];
    for (const piece of splitText(reply.content ?? '')) events.push(choice({ content: piece }));
    toolCallsOf(reply, index).forEach((call, k) => {
      events.push(
        choice({
          tool_calls: [
            {
              index: k,
              id: call.id,
              type: 'function',
              function: { name: call.function.name, arguments: '' },
            },
          ],
        }),
      );
      for (const piece of splitInHalves(call.function.arguments)) {
        events.push(choice({ tool_calls: [{ index: k, function: { arguments: piece } }] }));
      }
    });
    events.push(choice({}, finishReasonOf(reply)));
    const usage = usageOf(request, reply);
    if (request.stream_options?.include_usage && usage) events.push({ ...base, choices: [], usage });

    for (const event of events) {
      if (res.destroyed) return;
      res.write(`data: ${JSON.stringify(event)}\n\n`);
      await this.pause(reply.chunk_delay_ms);
    }
    if (!res.destroyed) res.end('data: [DONE]\n\n');
  }
}

/** Same as `FakeOpenAI.start`. */
export function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  return FakeOpenAI.start(options);
}

function completionBody(
  request: FakeChatRequest,
  reply: FakeCompletion,
  index: number,
): Record<string, unknown> {
  const toolCalls = toolCallsOf(reply, index);
  const usage = usageOf(request, reply);
  return {
    id: `chatcmpl-fake-${index}`,
    object: 'chat.completion',
    created: 0,
    model: reply.model ?? request.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.content ?? null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finishReasonOf(reply),
      },
    ],
    ...(usage ? { usage } : {}),
  };
}

function toolCallsOf(reply: FakeCompletion, index: number) {
  return (reply.tool_calls ?? []).map((call, k) => ({
    id: call.id ?? `call_fake_${index}_${k}`,
    type: 'function',
    function: {
      name: call.name,
      arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args ?? {}),
    },
  }));
}

function finishReasonOf(reply: FakeCompletion): string {
  return reply.finish_reason ?? ((reply.tool_calls ?? []).length > 0 ? 'tool_calls' : 'stop');
}

function usageOf(request: FakeChatRequest, reply: FakeCompletion) {
  if (reply.usage === null) return undefined;
  const usage = reply.usage ?? {
    input_tokens: Math.ceil(JSON.stringify(request.messages).length / 4),
    output_tokens: Math.max(
      1,
      Math.ceil(((reply.content ?? '') + JSON.stringify(reply.tool_calls ?? [])).length / 4),
    ),
  };
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens ?? usage.input_tokens + usage.output_tokens,
  };
}

function lastUserText(request: FakeChatRequest): string {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

// Word-sized pieces, so a client has to concatenate several deltas to get the text back.
function splitText(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function splitInHalves(text: string): string[] {
  if (text.length < 2) return [text];
  const middle = Math.floor(text.length / 2);
  return [text.slice(0, middle), text.slice(middle)];
}

function errorTypeFor(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

function retryAfterHeader(value: number | string | undefined): http.OutgoingHttpHeaders {
  return value === undefined ? {} : { 'retry-after': String(value) };
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  value: unknown,
  headers: http.OutgoingHttpHeaders = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

function sendError(
  res: http.ServerResponse,
  status: number,
  message: string,
  type: string,
  headers: http.OutgoingHttpHeaders = {},
): void {
  sendJson(res, status, { error: { message, type, param: null, code: null } }, headers);
}

async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
