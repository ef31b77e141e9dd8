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

/** What the model activity needs of its worker: its transcripts, its providers, and its MCP servers (if any). */
export interface ModelActivityDeps {
  transcripts: Transcripts;
  providers: ModelProviders;
  mcpCatalog?: McpCatalog;
}

/** The model activity of a worker. */
export function createModelActivities(deps: ModelActivityDeps) {
  return { callModel: (input: ModelCallInput) => callModel(deps, input) };
}

async function callModel(deps: ModelActivityDeps, input: ModelCallInput): Promise<ModelCallResult> {
  const { transcripts, providers, mcpCatalog } = deps;
  // Reading a long chain from an object store takes time: heartbeat through it (a 3 s heartbeat timeout).
  const [transcript, sentTools] = await whileHeartbeating(() =>
    Promise.all([transcripts.full(input), transcripts.toolSpecsOf(input)]),
  );
  const mcp = mcpToolsForModel(mcpCatalog, input.mcp_tools, input.mcp_promoted);
  const tools = [...builtinToolSpecs(input.builtin_tools ?? []), ...sentTools, ...mcp.specs];
  // What stays the same every turn joins the system prompt (the deferred tools' section first); what changes
  // (the summary, the ledger) goes apart, for the provider to place (ModelProviders.call).
  const prefix = [mcp.section, input.system_prefix].filter(Boolean).join('\n\n');
  const result = await providers.call({
    model: input.model,
    agent_name: input.agent_name,
    messages: withSystemContext(transcript, prefix || undefined),
    ...(input.system_context && { system_context: input.system_context }),
    tools,
    turn_index: input.turn_index ?? transcript.filter((m) => m.role === 'assistant').length,
  });
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

  /**
   * One call of the configured provider on a whole transcript (no references): model calls and summaries.
   * Each is measured (activities/model/metrics.ts): its latency, outcome and tokens.
   */
  call(input: ModelCallInput): Promise<ModelCallResult> {
    return callProvider(input, (call) => {
      const { provider } = call.model;
      if (provider === 'scripted') return callScriptedModel(this.#scripts, withContextInSystem(call));
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
      return callChatModel(placed, chat.chatCall(placed, endpoint), this.#nonStreamingEndpoints);
    });
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
