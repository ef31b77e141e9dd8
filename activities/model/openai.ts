/**
 * The `openai` model provider: any OpenAI-compatible Chat Completions endpoint with tool calling (OpenAI,
 * DeepSeek, vLLM, Ollama, LM Studio) through LangChain's ChatOpenAI adapter.
 *
 * Offline pitfall: ChatOpenAI's streaming `invoke` estimates token counts with tiktoken encodings it downloads,
 * and hangs where there is no egress. This provider only uses `.stream()` (which asks the provider for its own
 * usage chunk) and the non-streaming `invoke` (which reads the response's `usage`); neither counts tokens itself.
 */
import type { AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import type * as LangChainOpenAI from '@langchain/openai';
import type { ChatOpenAI } from '@langchain/openai';
import type { ModelCallInput, ModelCallResult } from '../../contracts/model';
import { whileHeartbeating } from '../activity-context';
import { answerCap, AnswerTooLargeError, ProviderError, retryAfterMs, type HeadersLike } from './errors';
import { fromLangChainReply, toLangChainMessages, toOpenAITools } from './langchain-messages';
import { loadOptional } from '../../payloads/optional-packages';

export const DEFAULT_API_KEY_ENV = 'OPENAI_API_KEY';

// Local servers (Ollama, vLLM, LM Studio) accept any key, but the OpenAI client refuses to send none.
const PLACEHOLDER_API_KEY = 'no-key';

/**
 * Endpoints (base URL + model) that answered a stream request without a stream: asked without streaming from
 * then on, so each later call costs one request, not two. One per worker (ModelProviders).
 */
export type NonStreamingEndpoints = Set<string>;

type ChatRunnable = Pick<ChatOpenAI, 'stream' | 'invoke'>;

/**
 * LangChain's OpenAI adapter (with LangChain, the OpenAI client and langsmith: ~550 modules, ~30 MiB), loaded
 * on the first `openai` call or warm-up: a worker on the offline model never needs it (BENCHMARKS.md, "Where
 * the memory goes").
 */
function langChainOpenAI(): typeof LangChainOpenAI {
  return loadOptional(
    'the openai model provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@langchain/openai') as typeof LangChainOpenAI,
  );
}

/** Where a model's requests go, with what key. */
export interface OpenAIEndpoint {
  /** Undefined: the OpenAI API itself. */
  baseURL: string | undefined;
  apiKey: string;
}

export async function callOpenAIModel(
  nonStreamingEndpoints: NonStreamingEndpoints,
  input: ModelCallInput,
): Promise<ModelCallResult> {
  const settings = input.model;
  const baseURL = settings.base_url || process.env.OPENAI_BASE_URL || undefined;
  const keyEnv = settings.api_key_env ?? DEFAULT_API_KEY_ENV;
  const apiKey = process.env[keyEnv] || (baseURL ? PLACEHOLDER_API_KEY : undefined);
  if (apiKey === undefined) {
    throw new ProviderError(
      `no API key for model ${settings.name}: environment variable ${keyEnv} is not set (set it, or set base_url for an endpoint without keys)`,
      undefined,
      false,
    );
  }
  return completeChat({ baseURL, apiKey }, input, nonStreamingEndpoints);
}

/** One Chat Completions request for `input` (its endpoint given apart), streamed where the endpoint can. */
export async function completeChat(
  { baseURL, apiKey }: OpenAIEndpoint,
  input: ModelCallInput,
  nonStreamingEndpoints: NonStreamingEndpoints,
): Promise<ModelCallResult> {
  const settings = input.model;
  const endpoint = baseURL ?? 'the OpenAI API';
  const { ChatOpenAI } = langChainOpenAI();
  const chat = new ChatOpenAI({
    model: settings.model,
    apiKey,
    configuration: baseURL ? { baseURL } : undefined,
    temperature: settings.temperature,
    maxTokens: settings.max_tokens,
    // Retries belong to Temporal (with backoff, visible in history), never to the SDK inside one attempt.
    maxRetries: 0,
    streamUsage: true,
  });
  const model: ChatRunnable = input.tools.length > 0 ? chat.bindTools(toOpenAITools(input.tools)) : chat;
  const messages = toLangChainMessages(input.messages);
  const turnIndex = input.messages.filter((m) => m.role === 'assistant').length;
  const endpointKey = `${endpoint} ${settings.model}`;
  const timeoutSeconds = settings.request_timeout_seconds;
  const deadline = timeoutSeconds === undefined ? undefined : AbortSignal.timeout(timeoutSeconds * 1000);
  const reply = await whileHeartbeating(
    async (signal) => {
      try {
        if (!nonStreamingEndpoints.has(endpointKey)) {
          const streamed = await streamReply(model, messages, signal, settings.name, answerCap(settings));
          if (streamed) return streamed;
          nonStreamingEndpoints.add(endpointKey);
        }
        return await model.invoke(messages, { signal });
      } catch (err) {
        if (signal.aborted || err instanceof ProviderError) throw err;
        throw classifyOpenAIError(err, endpoint);
      }
    },
    { signal: deadline },
  ).catch((err: unknown) => {
    if (!deadline?.aborted || err !== deadline.reason) throw err;
    throw new ProviderError(
      `no complete answer within ${timeoutSeconds} s (request_timeout_seconds)`,
      undefined,
      true,
    );
  });
  const parsed = fromLangChainReply(reply, turnIndex);
  return {
    content: parsed.content,
    tool_calls: parsed.tool_calls,
    ...(parsed.usage ? { usage: parsed.usage } : {}),
    model_name: parsed.model_name ?? settings.name,
    ...(parsed.finish_reason ? { finish_reason: parsed.finish_reason } : {}),
  };
}

/**
 * The streamed chunks concatenated; undefined when the endpoint sent no stream at all. The answer is measured
 * as it arrives: past `cap` bytes the request is aborted and nothing more is read.
 */
async function streamReply(
  model: ChatRunnable,
  messages: BaseMessage[],
  signal: AbortSignal,
  modelName: string,
  cap: number,
): Promise<AIMessageChunk | undefined> {
  const stop = new AbortController();
  let reply: AIMessageChunk | undefined;
  let bytes = 0;
  for await (const chunk of await model.stream(messages, {
    signal: AbortSignal.any([signal, stop.signal]),
  })) {
    bytes += chunkBytes(chunk);
    if (bytes > cap) {
      stop.abort();
      throw new AnswerTooLargeError(modelName, bytes, cap);
    }
    reply = reply ? reply.concat(chunk) : chunk;
  }
  return reply;
}

/** The UTF-8 bytes a chunk adds to the answer: its text, its tool calls' names and arguments. */
function chunkBytes(chunk: AIMessageChunk): number {
  const { content } = chunk;
  let bytes = Buffer.byteLength(typeof content === 'string' ? content : JSON.stringify(content));
  for (const call of chunk.tool_call_chunks ?? []) {
    bytes += Buffer.byteLength(call.name ?? '') + Buffer.byteLength(call.args ?? '');
  }
  return bytes;
}

const NETWORK_ERROR_NAMES: ReadonlySet<string> = new Set([
  'APIConnectionError',
  'APIConnectionTimeoutError',
  'TimeoutError',
  'ConnectTimeoutError',
  'HeadersTimeoutError',
  'BodyTimeoutError',
  'SocketError',
]);
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  status?: unknown;
  error?: unknown;
  cause?: unknown;
  /** openai-node's APIError carries the response headers (a fetch `Headers`). */
  headers?: unknown;
}

/** Sorts what the OpenAI client and LangChain throw into HTTP status, network, malformed response, or a bug. */
export function classifyOpenAIError(err: unknown, endpoint: string): unknown {
  const chain = causeChain(err);
  const withStatus = chain.find((e) => typeof e.status === 'number');
  if (withStatus) {
    const status = withStatus.status as number;
    const headers = withStatus.headers;
    return ProviderError.fromStatus(
      status,
      providerMessage(withStatus, status),
      headers !== null && typeof headers === 'object'
        ? retryAfterMs(status, headers as HeadersLike)
        : undefined,
    );
  }
  const network = chain.find(isNetworkError);
  if (network) {
    const code = chain.map((e) => e.code).find((c) => typeof c === 'string');
    return new ProviderError(
      `cannot reach ${endpoint}: ${String(network.message)}${code ? ` (${code})` : ''}`,
      undefined,
      true,
    );
  }
  const inStream = chain.find((e) => e.error !== null && typeof e.error === 'object');
  if (inStream) {
    // An error event inside a stream that already started: the provider failed mid-answer, so try again.
    const body = inStream.error as ErrorLike;
    const code = typeof body.code === 'number' ? body.code : undefined;
    return ProviderError.fromStatus(
      code,
      typeof body.message === 'string' ? body.message : String(inStream.message),
    );
  }
  if (err instanceof SyntaxError || err instanceof TypeError) {
    return new ProviderError(`malformed response from ${endpoint}: ${err.message}`, undefined, false);
  }
  return err;
}

function causeChain(err: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = err;
  while (current !== null && typeof current === 'object' && chain.length < 6) {
    chain.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  return chain;
}

function isNetworkError(e: ErrorLike): boolean {
  const name = typeof e.name === 'string' ? e.name : '';
  const constructorName = (e as { constructor?: { name?: string } }).constructor?.name ?? '';
  return (
    NETWORK_ERROR_NAMES.has(name) ||
    NETWORK_ERROR_NAMES.has(constructorName) ||
    (typeof e.code === 'string' && (NETWORK_ERROR_CODES.has(e.code) || e.code.startsWith('UND_ERR_'))) ||
    (name === 'TypeError' && (e.message === 'fetch failed' || e.message === 'terminated'))
  );
}

/** The provider's own message: the `error.message` of its error body, else the client's text without the status. */
function providerMessage(e: ErrorLike, status: number): string {
  const body = e.error as ErrorLike | undefined;
  if (body && typeof body.message === 'string' && body.message !== '') return body.message;
  const message = String(e.message ?? '');
  return message.startsWith(`${status} `) ? message.slice(`${status} `.length) : message || `HTTP ${status}`;
}
