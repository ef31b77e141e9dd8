/**
 * The model activity: one model call of an agent turn. Providers are chosen by `model.provider`.
 *
 * Error policy: a provider error that time can fix (HTTP 408/409/429/5xx, network, timeout) is thrown as a
 * retryable ApplicationFailure of type `ModelProviderRetryable`, so Temporal retries the activity with backoff.
 * One that it cannot (400, 401, 403, 404, 422, a malformed response, a broken script) is returned as
 * `error_fallback` with the provider's own message, so the run ends `failed` with it, never `completed`.
 * A 429/503's `Retry-After` sets the next retry's delay, capped at the retry policy's max interval.
 *
 * The activity is built with its worker's transcripts and MCP catalog (createModelActivities); the script
 * format, its loader and the failure type live in model-script.ts, scripted.ts and errors.ts.
 */
import {
  DEFAULT_MODEL_RETRY,
  MODEL_PROVIDERS,
  type ModelCallInput,
  type ModelCallResult,
  type ModelSettings,
  type NetworkModelProvider,
} from '../../contracts/model';
import { answerCap, AnswerTooLargeError, ProviderError, retryableModelFailure } from './errors';
import { withSystemContext, type Transcripts } from '../transcripts';
import type { McpCatalog } from '../mcp/catalog';
import { whileHeartbeating } from '../activity-context';
import { builtinToolSpecs } from '../../contracts/tool-specs';
import { mcpCallInfo, mcpToolsForModel } from '../mcp/model-tools';
import { ModelScripts } from './model-script';
import { callChatModel, type NonStreamingEndpoints } from './chat-call';
import { LANGCHAIN_PROVIDERS } from './providers';
import { warmUpProvider } from './warm-up';
import { recordModelCall } from './metrics';
import { callScriptedModel, scriptedModelName } from './scripted';
import { CircuitBreakers, circuitOpenError, type CircuitBreakerSettings } from './circuit-breaker';
import type { AgentStream, ModelDeltas, StreamPublishing } from '../stream/agent-stream';

/** What the model activity needs of its worker: its transcripts, its providers, and its MCP servers (if any). */
export interface ModelActivityDeps {
  transcripts: Transcripts;
  providers: ModelProviders;
  mcpCatalog?: McpCatalog;
  /** Where each call's deltas go (the tree's live stream, docs/live.md); absent: nowhere. */
  stream?: StreamPublishing;
}

/** The model activity of a worker. */
export function createModelActivities(deps: ModelActivityDeps) {
  return { callModel: (input: ModelCallInput) => callModel(deps, input) };
}

async function callModel(deps: ModelActivityDeps, input: ModelCallInput): Promise<ModelCallResult> {
  const turn = input.turn_index;
  const stream = deps.stream?.forActivity(input.agent_name, turn);
  if (stream === undefined) return callModelOnce(deps, input);
  if (turn === 0 && stream.attempt === 1) stream.emit('agent_started');
  stream.emit(stream.attempt > 1 ? 'interrupted' : 'turn_started');
  try {
    const result = await callModelOnce(deps, input, stream);
    publishTurnEnd(stream, result);
    return result;
  } catch (err) {
    stream.emit('turn_failed', { error: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    await stream.flush();
  }
}

/** The turn's end on the stream: its usage, its whole text and tool calls (what history will hold). */
function publishTurnEnd(stream: AgentStream, result: ModelCallResult): void {
  if (result.error_fallback) {
    stream.emit('turn_failed', { error: result.error_fallback.message });
    return;
  }
  if (result.usage) stream.emit('usage', { usage: result.usage });
  stream.emit('turn_ended', {
    text: result.content,
    tool_calls: result.tool_calls.map((call) => ({ id: call.id, name: call.name, args: call.args })),
    ...(result.finish_reason !== undefined && { finish_reason: result.finish_reason }),
  });
}

async function callModelOnce(
  deps: ModelActivityDeps,
  input: ModelCallInput,
  deltas?: ModelDeltas,
): Promise<ModelCallResult> {
  const { transcripts, providers, mcpCatalog } = deps;
  // Reading a long chain from an object store takes time: heartbeat through it (a 3 s heartbeat timeout).
  const [transcript, sentTools] = await whileHeartbeating(() =>
    Promise.all([transcripts.full(input), transcripts.toolSpecsOf(input)]),
  );
  const mcp = mcpToolsForModel(mcpCatalog, input.mcp_tools, input.mcp_promoted, transcript);
  const tools = [...builtinToolSpecs(input.builtin_tools ?? []), ...sentTools, ...mcp.specs];
  // What stays the same every turn joins the system prompt (the deferred tools' section first); what changes
  // (the summary, the ledger) goes apart, for the provider to place (ModelProviders.call).
  const prefix = [mcp.section, input.system_prefix].filter(Boolean).join('\n\n');
  const result = await providers.call(
    {
      model: input.model,
      agent_name: input.agent_name,
      messages: withSystemContext(transcript, prefix || undefined),
      ...(input.system_context && { system_context: input.system_context }),
      tools,
      turn_index: input.turn_index ?? transcript.filter((m) => m.role === 'assistant').length,
    },
    deltas,
  );
  if (result.error_fallback) return result;
  const [transcriptRef, toolsStored] = await whileHeartbeating(() =>
    Promise.all([transcripts.storeSent(input, transcript), transcripts.storeToolSpecs(input)]),
  );
  const mcpCalls = mcpCallInfo(mcpCatalog, input.mcp_tools, result.tool_calls);
  return {
    ...result,
    transcript_ref: transcriptRef,
    ...(toolsStored && { tools_stored: toolsStored }),
    ...(mcpCalls && { mcp_calls: mcpCalls }),
    ...(mcp.autoPromoted && { auto_promoted: mcp.autoPromoted }),
  };
}

/**
 * The model providers of one worker, with what they keep between calls: the script files parsed, the
 * endpoints found not to stream, the network providers' warm-ups. Made once per worker (createProjectActivities)
 * and shared by every activity that calls a model; a worker that restarts keeps them.
 */
export class ModelProviders {
  readonly #scripts = new ModelScripts();
  readonly #nonStreamingEndpoints: NonStreamingEndpoints = new Set();
  readonly #warmedUp = new Map<string, Promise<void>>();
  /** The `circuit_breaker:` of the worker's config, one breaker per provider endpoint; absent: none. */
  readonly #breakers: CircuitBreakers | undefined;

  constructor(options: { circuitBreaker?: CircuitBreakerSettings; say?: (line: string) => void } = {}) {
    const say = options.say ?? ((line: string) => process.stderr.write(`${line}\n`));
    this.#breakers = options.circuitBreaker && new CircuitBreakers(options.circuitBreaker, say);
  }

  /**
   * One call of the configured provider on a whole transcript (no references): model calls and summaries.
   * Each is measured (activities/model/metrics.ts): its latency, outcome and tokens. `deltas` takes the answer's
   * pieces as they arrive (the live stream).
   */
  call(input: ModelCallInput, deltas?: ModelDeltas): Promise<ModelCallResult> {
    return callProvider(input, (call) => {
      const { provider } = call.model;
      if (provider === 'scripted') return callScriptedModel(this.#scripts, withContextInSystem(call), deltas);
      if (!Object.hasOwn(LANGCHAIN_PROVIDERS, provider)) {
        throw new ProviderError(
          `model ${call.model.name}: provider "${String(provider)}" is unknown (accepted: ${MODEL_PROVIDERS.join(', ')})`,
          undefined,
          false,
        );
      }
      const chat = LANGCHAIN_PROVIDERS[provider];
      const placed = chat.placesSystemContext ? call : withContextInSystem(call);
      const endpoint = chat.endpoint(call.model, process.env);
      return this.#guarded(call, () =>
        callChatModel(placed, chat.chatCall(placed, endpoint), this.#nonStreamingEndpoints, deltas),
      );
    });
  }

  /** The call through its endpoint's circuit breaker, when the worker has breakers: refused at once while open. */
  async #guarded(call: ModelCallInput, send: () => Promise<ModelCallResult>): Promise<ModelCallResult> {
    const breaker = this.#breakers?.of(call.model);
    if (!breaker) return send();
    const waitMs = breaker.refusal();
    if (waitMs !== undefined) throw circuitOpenError(breaker, waitMs);
    try {
      const result = await send();
      breaker.succeeded();
      return result;
    } catch (err) {
      if (err instanceof ProviderError && err.retryable) breaker.failed();
      else if (err instanceof ProviderError) breaker.succeeded();
      else breaker.released();
      throw err;
    }
  }

  /**
   * Pays, while a worker starts, the one-time cost a provider's first call in a process would add to a run
   * (warm-up.ts), once a process for each provider among `models` (the worker's config's); a worker on the
   * offline model loads no LangChain for it. Never fails.
   */
  warmUp(models: readonly Pick<ModelSettings, 'provider'>[]): Promise<void> {
    const fresh = [...new Set(models.map((model) => model.provider))].filter(
      (provider): provider is NetworkModelProvider =>
        provider !== 'scripted' && !this.#warmedUp.has(provider),
    );
    for (const provider of fresh) this.#warmedUp.set(provider, warmUpProvider(provider));
    return Promise.all(models.map((model) => this.#warmedUp.get(model.provider))).then(() => undefined);
  }
}

/** The call's system context appended to its first system message, for a provider that does not place it. */
function withContextInSystem(input: ModelCallInput): ModelCallInput {
  if (input.system_context === undefined) return input;
  const { system_context: context, ...rest } = input;
  return { ...rest, messages: withSystemContext(input.messages, context) };
}

async function callProvider(
  input: ModelCallInput,
  callConfiguredProvider: (input: ModelCallInput) => Promise<ModelCallResult>,
): Promise<ModelCallResult> {
  const startedMs = performance.now();
  const seconds = () => (performance.now() - startedMs) / 1000;
  try {
    const result = measured(input, await callConfiguredProvider(input));
    recordModelCall(input, seconds(), result.error_fallback ? 'error' : 'ok', result);
    return result;
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    recordModelCall(input, seconds(), err.retryable ? 'retryable_error' : 'error');
    if (err.retryable) {
      const maxInterval = (input.model.retry ?? DEFAULT_MODEL_RETRY).max_interval_seconds;
      throw retryableModelFailure(input.model.name, err, maxInterval * 1000);
    }
    return {
      content: '',
      tool_calls: [],
      model_name: input.model.provider === 'scripted' ? scriptedModelName(input) : input.model.name,
      error_fallback: {
        message: err.message,
        ...(err.status === undefined ? {} : { status: err.status }),
        ...(err.contextOverflow && { context_overflow: true }),
      },
    };
  }
}

/**
 * The answer, measured whatever the provider (a stream is also measured as it arrives: chat-call.ts): over the
 * model's `max_answer_bytes` it is a non-retryable error.
 */
function measured(input: ModelCallInput, result: ModelCallResult): ModelCallResult {
  const cap = answerCap(input.model);
  let bytes = Buffer.byteLength(result.content);
  for (const call of result.tool_calls) bytes += Buffer.byteLength(call.name) + Buffer.byteLength(call.args);
  if (bytes > cap) throw new AnswerTooLargeError(input.model.name, bytes, cap);
  return result;
}
