/**
 * The one call path of every LangChain chat model provider (openai, azure_openai, anthropic, google, bedrock,
 * ollama): what differs per provider is how its chat model is built, how its messages go, where it says why it
 * stopped and how its errors read (a `ChatModelCall`); what is the same is here, once: the stream read with
 * the answer measured as it arrives (`max_answer_bytes`), the heartbeat and cancellation while it waits, the
 * request timeout, the fallback to a plain request for an endpoint that does not stream, the reply read into
 * our contract (tool calls, usage with cache counts, the stop reason), and the errors classified.
 *
 * Offline pitfall: a chat model's streaming `invoke` may count tokens itself (ChatOpenAI downloads tiktoken
 * encodings to do so, and hangs without egress). Only `.stream()` (whose usage is the provider's own report)
 * and the plain `invoke` (the response's usage) are used here; neither counts anything itself.
 */
import type { AIMessage, AIMessageChunk, BaseMessage, UsageMetadata } from '@langchain/core/messages';
import {
  DEFAULT_API_KEY_ENVS,
  type ModelCallInput,
  type ModelCallResult,
  type ModelSettings,
  type NetworkModelProvider,
} from '../../contracts/model';
import { whileHeartbeating } from '../activity-context';
import { answerCap, AnswerTooLargeError, ProviderError } from './errors';
import type { ToolSpec } from '../../contracts/messages';
import { fromLangChainReply, toOpenAITools, type OpenAIFunctionTool } from './langchain-messages';
import type { ModelDeltas } from '../stream/agent-stream';

/**
 * Endpoints (base URL + model) that answered a stream request without a stream: asked without streaming from
 * then on, so each later call costs one request, not two. One per worker (ModelProviders).
 */
export type NonStreamingEndpoints = Set<string>;

/** A chat model with its tools bound, as far as this path uses it. */
export interface ChatRunnable {
  stream(messages: BaseMessage[], options: { signal: AbortSignal }): Promise<AsyncIterable<AIMessageChunk>>;
  invoke(messages: BaseMessage[], options: { signal: AbortSignal }): Promise<AIMessage | AIMessageChunk>;
}

/** One provider's part of a call: everything this path needs to know of it. */
export interface ChatModelCall {
  /** Where the request goes, for messages: `http://127.0.0.1:8000/v1`, `the Anthropic API`. */
  endpoint: string;
  /**
   * The chat model for this call, its tools bound. Given the call's signal, for a client that would leave a
   * request running otherwise (the abort also reaches it through `stream`/`invoke`).
   */
  chatModel(signal: AbortSignal): ChatRunnable;
  /** The transcript in LangChain's messages, as this provider takes them. */
  messages: BaseMessage[];
  /**
   * Ask for a stream (else one plain request). A stream that brings nothing is asked again without streaming
   * (Gemini then says why it did not answer).
   */
  stream: boolean;
  /**
   * An endpoint whose stream brought nothing is asked without streaming from then on: an OpenAI-compatible
   * server that cannot stream answers a stream request with a plain answer, every time.
   */
  rememberNonStreaming?: boolean;
  /**
   * What the provider sent as an answer but its client throws as an error (Gemini's blocked prompt), as the
   * reply it is; undefined for an error.
   */
  replyOf?(err: unknown): AIMessage | undefined;
  /**
   * How a stream's usage adds up, when not as LangChain adds it (each chunk's counts summed, right for OpenAI's
   * one usage chunk and Ollama's last): `largestCounts` for running totals (Anthropic).
   */
  addStreamedUsage?(sum: UsageMetadata | undefined, chunk: UsageMetadata): UsageMetadata;
  /**
   * Whether the provider reported usage at all, for a client that reports zeros when it did not (Ollama's);
   * absent: the reply's usage is the provider's report.
   */
  reportedUsage?(reply: AIMessage | AIMessageChunk): boolean;
  /** The blocks of the answer the provider wants back verbatim on later turns (its thinking), if any. */
  blocksToKeep?(reply: AIMessage | AIMessageChunk): Array<Record<string, unknown>>;
  /** Why the answer ended, in the contract's words (`stop`, `tool_calls`, `length`, `refusal`…). */
  finishReason(reply: AIMessage | AIMessageChunk): string | undefined;
  /** Sorts what the provider's client threw (provider-errors.ts, or the provider's own reading first). */
  classify(err: unknown): unknown;
}

/** One model call of `input` through `call`: the provider's answer, in our contract. */
export async function callChatModel(
  input: ModelCallInput,
  call: ChatModelCall,
  nonStreamingEndpoints: NonStreamingEndpoints,
  deltas?: ModelDeltas,
): Promise<ModelCallResult> {
  const settings = input.model;
  const turnIndex = input.messages.filter((m) => m.role === 'assistant').length;
  const endpointKey = `${settings.provider} ${call.endpoint} ${settings.model}`;
  const timeoutSeconds = settings.request_timeout_seconds;
  const deadline = timeoutSeconds === undefined ? undefined : AbortSignal.timeout(timeoutSeconds * 1000);
  const reply = await whileHeartbeating(
    async (signal) => {
      try {
        const model = call.chatModel(signal);
        if (call.stream && !nonStreamingEndpoints.has(endpointKey)) {
          const streamed = await streamReply(model, call, signal, { settings, deltas });
          if (streamed) return streamed;
          // A stream cut short by the attempt's own end (cancelled, its heartbeat lost) is not an endpoint
          // that does not stream: asking again would send (and pay for) the request a second time.
          if (signal.aborted) throw signal.reason;
          if (call.rememberNonStreaming) nonStreamingEndpoints.add(endpointKey);
        }
        return await model.invoke(call.messages, { signal });
      } catch (err) {
        if (signal.aborted || err instanceof ProviderError) throw err;
        const answered = call.replyOf?.(err);
        if (answered) return answered;
        throw call.classify(err);
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
  if (call.reportedUsage?.(reply) === false) delete parsed.usage;
  const finishReason = call.finishReason(reply);
  const blocks = call.blocksToKeep?.(reply) ?? [];
  return {
    content: parsed.content,
    tool_calls: parsed.tool_calls,
    ...(parsed.usage ? { usage: parsed.usage } : {}),
    model_name: parsed.model_name ?? settings.name,
    ...(finishReason ? { finish_reason: finishReason } : {}),
    ...(blocks.length > 0 && { provider_blocks: { provider: settings.provider, blocks } }),
  };
}

/**
 * The streamed chunks concatenated; undefined when the endpoint sent no stream at all. The answer is measured
 * as it arrives: past `cap` bytes the request is aborted and nothing more is read.
 */
async function streamReply(
  model: ChatRunnable,
  call: ChatModelCall,
  signal: AbortSignal,
  { settings, deltas }: { settings: ModelSettings; deltas: ModelDeltas | undefined },
): Promise<AIMessageChunk | undefined> {
  const modelName = settings.name;
  const cap = answerCap(settings);
  const stop = new AbortController();
  let reply: AIMessageChunk | undefined;
  let usage: UsageMetadata | undefined;
  let bytes = 0;
  for await (const chunk of await model.stream(call.messages, {
    signal: AbortSignal.any([signal, stop.signal]),
  })) {
    bytes += chunkBytes(chunk);
    if (bytes > cap) {
      stop.abort();
      throw new AnswerTooLargeError(modelName, bytes, cap);
    }
    if (call.addStreamedUsage && chunk.usage_metadata)
      usage = call.addStreamedUsage(usage, chunk.usage_metadata);
    if (deltas) publishChunk(chunk, deltas);
    reply = reply ? reply.concat(chunk) : chunk;
  }
  if (reply && usage) reply.usage_metadata = usage;
  return reply;
}

/** A chunk's text, thinking and tool-call starts, to the live stream. */
function publishChunk(chunk: AIMessageChunk, deltas: ModelDeltas): void {
  const { content } = chunk;
  if (typeof content === 'string') deltas.text(content);
  else {
    for (const block of content as Array<{ type?: unknown; text?: unknown; thinking?: unknown } | null>) {
      if (block === null || typeof block !== 'object') continue;
      if (typeof block.thinking === 'string') deltas.thinking(block.thinking);
      else if (typeof block.text === 'string' && block.type !== 'input_json_delta') deltas.text(block.text);
    }
  }
  for (const call of chunk.tool_call_chunks ?? []) {
    if (call.name) deltas.toolCall(call.id ?? '', call.name);
  }
}

/** Each count at the largest any event reported: a stream whose counts are running totals. */
export function largestCounts(a: UsageMetadata | undefined, b: UsageMetadata): UsageMetadata {
  const input = Math.max(a?.input_tokens ?? 0, b.input_tokens ?? 0);
  const output = Math.max(a?.output_tokens ?? 0, b.output_tokens ?? 0);
  const cacheRead = Math.max(a?.input_token_details?.cache_read ?? 0, b.input_token_details?.cache_read ?? 0);
  const cacheWrite = Math.max(
    a?.input_token_details?.cache_creation ?? 0,
    b.input_token_details?.cache_creation ?? 0,
  );
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: input + output,
    input_token_details: { cache_read: cacheRead, cache_creation: cacheWrite },
  };
}

/**
 * The UTF-8 bytes a chunk adds to the answer: its text (and thinking), its tool calls' names and arguments.
 * A provider's tool-call blocks in the content (Anthropic's `input_json_delta`, Gemini's `functionCall`) are
 * the tool-call chunks again, counted once.
 */
function chunkBytes(chunk: AIMessageChunk): number {
  const { content } = chunk;
  let bytes = 0;
  if (typeof content === 'string') bytes += Buffer.byteLength(content);
  else {
    for (const block of content as Array<{ text?: unknown; thinking?: unknown }>) {
      if (typeof block.text === 'string') bytes += Buffer.byteLength(block.text);
      if (typeof block.thinking === 'string') bytes += Buffer.byteLength(block.thinking);
    }
  }
  for (const call of chunk.tool_call_chunks ?? []) {
    bytes += Buffer.byteLength(call.name ?? '') + Buffer.byteLength(call.args ?? '');
  }
  return bytes;
}

/** Where a model's requests go, with what credentials: from its settings and the worker's environment. */
export interface ProviderEndpoint {
  /** Undefined: the provider's public endpoint (or the one its client reads from the environment). */
  baseUrl: string | undefined;
  apiKey: string | undefined;
  /** bedrock: AWS credentials to sign with, when no Bedrock API key is used. */
  aws?: AwsCredentials;
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** One LangChain provider: how it finds its endpoint, and how a call on it goes. */
export interface LangChainProvider {
  /** Where `settings`' requests go; a ProviderError (not retryable) when something it needs is not set. */
  endpoint(settings: ModelSettings, env: NodeJS.ProcessEnv): ProviderEndpoint;
  /** This call's part (`input.system_context` still apart when `placesSystemContext`). */
  chatCall(input: ModelCallInput, endpoint: ProviderEndpoint): ChatModelCall;
  /**
   * The provider puts the call's system context (summary, ledger) itself, where its prompt cache keeps the
   * transcript's prefix (Anthropic); the others get it appended to the first system message.
   */
  placesSystemContext?: boolean;
}

/**
 * The key of `settings`: its `api_key` variable, else the first of the provider's own variables that is set.
 * `variable` names the one read (or, none being set, the one to set).
 */
export function apiKeyOf(
  settings: ModelSettings,
  env: NodeJS.ProcessEnv,
): { key: string | undefined; variable: string | undefined } {
  const provider = settings.provider as NetworkModelProvider;
  const variables = settings.api_key_env ? [settings.api_key_env] : DEFAULT_API_KEY_ENVS[provider];
  const variable = variables.find((name) => env[name]) ?? variables[0];
  return { key: variable === undefined ? undefined : env[variable] || undefined, variable };
}

// A server of one's own (a proxy, a local server) may take no key, but the clients refuse to send none.
const PLACEHOLDER_API_KEY = 'no-key';

/**
 * The endpoint of a provider reached with a key: `baseUrl` (undefined: its public one) and the key. Without a
 * key, only a `base_url` of one's own is reached (a proxy or a local server that takes none), with a
 * placeholder for the client.
 */
export function keyedEndpoint(
  settings: ModelSettings,
  env: NodeJS.ProcessEnv,
  baseUrl: string | undefined,
): ProviderEndpoint {
  const { key, variable } = apiKeyOf(settings, env);
  if (key === undefined && baseUrl === undefined) {
    throw missingSetting(
      settings,
      'no API key',
      `environment variable ${variable} is not set (set it, or set base_url for an endpoint without keys)`,
    );
  }
  return { baseUrl, apiKey: key ?? PLACEHOLDER_API_KEY };
}

/** The chat model with the call's tools bound, in OpenAI's shape: every LangChain chat model converts it. */
export function withTools(
  chat: { bindTools(tools: OpenAIFunctionTool[]): unknown },
  tools: ToolSpec[],
): ChatRunnable {
  return (tools.length > 0 ? chat.bindTools(toOpenAITools(tools)) : chat) as ChatRunnable;
}

/** A setting the provider cannot go without is not set: the run fails saying which and where. */
export function missingSetting(settings: ModelSettings, what: string, fix: string): ProviderError {
  return new ProviderError(`${what} for model ${settings.name}: ${fix}`, undefined, false);
}

/**
 * The contract's finish reason for a provider's own stop reason: the provider's word when the contract
 * already reads it (`stop`, `length`, `max_tokens`, `refusal`, `content_filter`, `safety`), else `table`'s.
 */
export function finishReasonFrom(
  native: unknown,
  table: Readonly<Record<string, string>>,
): string | undefined {
  if (typeof native !== 'string' || native === '') return undefined;
  const reason = native.toLowerCase();
  return table[reason] ?? reason;
}

/**
 * The reply's content blocks of the given types, as they would go back (a stream's merge index dropped): the
 * provider's thinking, to keep.
 */
export function contentBlocksOf(
  reply: AIMessage | AIMessageChunk,
  types: readonly string[],
): Array<Record<string, unknown>> {
  if (typeof reply.content === 'string') return [];
  return (reply.content as Array<Record<string, unknown>>)
    .filter((block) => typeof block.type === 'string' && types.includes(block.type))
    .map(({ index: _index, ...block }) => block);
}
