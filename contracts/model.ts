import type { McpCallInfo, McpToolFilter } from './mcp';
import type { ChatMessage, ProviderBlocks, TokenUsage, ToolCall, ToolSpec } from './messages';
import { groupThousands } from './text';
import type { TranscriptRef } from './transcript';
import type { ModelRetrySettings, ModelSettings } from './input-schemas';

export const MODEL_PROVIDERS = [
  'scripted',
  'openai',
  'anthropic',
  'google',
  'bedrock',
  'azure_openai',
  'ollama',
] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** The providers reached over the network, each through its LangChain.js chat model. */
export type NetworkModelProvider = Exclude<ModelProvider, 'scripted'>;

/**
 * DeerFlow names a model by its LangChain class (`use: langchain_anthropic:ChatAnthropic`): the class, after
 * the `:`, says the provider. Any other class whose name ends in `ChatOpenAI` (DeerFlow's PatchedChatOpenAI)
 * speaks `openai`.
 */
export const MODEL_CLASS_PROVIDERS: Readonly<Record<string, NetworkModelProvider>> = {
  ChatOpenAI: 'openai',
  AzureChatOpenAI: 'azure_openai',
  ChatAnthropic: 'anthropic',
  ChatGoogleGenerativeAI: 'google',
  ChatBedrockConverse: 'bedrock',
  ChatOllama: 'ollama',
};

/** The provider a DeerFlow `use:` class path names, if it names one this project runs. */
export function providerOfClass(use: string): NetworkModelProvider | undefined {
  const className = use.slice(use.lastIndexOf(':') + 1).trim();
  if (Object.hasOwn(MODEL_CLASS_PROVIDERS, className)) return MODEL_CLASS_PROVIDERS[className];
  return className.endsWith('ChatOpenAI') && className !== 'AzureChatOpenAI' ? 'openai' : undefined;
}

/**
 * Where a provider's key is read when the model names none (`api_key: $NAME` overrides): the first variable
 * set wins. Ollama needs none; Bedrock signs with the AWS credentials of the environment, or uses a Bedrock
 * API key when one is set.
 */
export const DEFAULT_API_KEY_ENVS: Readonly<Record<NetworkModelProvider, readonly string[]>> = {
  openai: ['OPENAI_API_KEY'],
  anthropic: ['ANTHROPIC_API_KEY'],
  google: ['GOOGLE_API_KEY', 'GEMINI_API_KEY'],
  azure_openai: ['AZURE_OPENAI_API_KEY'],
  bedrock: ['AWS_BEARER_TOKEN_BEDROCK'],
  ollama: [],
};

/** `models[].reasoning_effort`: how hard a reasoning model thinks (OpenAI's and Azure's `reasoning_effort`). */
export const REASONING_EFFORTS = ['minimal', 'low', 'medium', 'high'] as const;

/** `models[].thinking.type`, as Anthropic writes it (DeerFlow's `when_thinking_enabled.thinking`). */
export const THINKING_TYPES = ['enabled', 'disabled', 'adaptive'] as const;

/**
 * The keys of a `models[]` entry that only some providers read: anywhere else they are refused, so a key that
 * would do nothing is never silently accepted.
 */
export const PROVIDER_ONLY_KEYS: Readonly<Record<string, readonly ModelProvider[]>> = {
  region: ['bedrock'],
  aws_profile: ['bedrock'],
  azure_deployment: ['azure_openai'],
  api_version: ['azure_openai'],
  thinking: ['anthropic', 'google', 'bedrock', 'ollama'],
  reasoning_effort: ['openai', 'azure_openai'],
};

export type { ModelRetrySettings, ModelSettings } from './input-schemas';

/**
 * 8 MiB: sixteen times the largest answer a model with a 128k-token output limit can give (about 0.5 MB), room
 * for the 5 MB answers a run is tested to carry (test/temporal/hardening-inputs), and small enough that a worker
 * reads and assembles it well within one heartbeat timeout.
 */
export const DEFAULT_MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** Why a model call failed when its answer passed the cap: the size read and the cap, with where to set it. */
export function answerTooLargeText(modelName: string, bytes: number, cap: number): string {
  return (
    `model ${modelName}: the answer passed ${groupThousands(bytes)} bytes, over the ` +
    `${groupThousands(cap)}-byte cap (models[].max_answer_bytes); not requested again`
  );
}

/** Keep retrying, waits growing to 30 s: an outage of minutes is ridden out within the agent's own budget. */
export const DEFAULT_MODEL_RETRY: ModelRetrySettings = {
  initial_interval_seconds: 1,
  backoff_coefficient: 2,
  max_interval_seconds: 30,
};

export interface ModelCallInput {
  model: ModelSettings;
  /** Which agent is calling (`lead`, `general-purpose`, a custom name): the scripted provider keys on it. */
  agent_name: string;
  /** The messages after `transcript_ref` (the whole transcript when there is none). */
  messages: ChatMessage[];
  /**
   * Built-in tools the model is shown, by name: the activity builds their specs (calls scheduled before this
   * existed carry every spec in `tools`).
   */
  builtin_tools?: string[];
  /** Specs shown after the built-in ones (the task tool), or every spec of an older call. */
  tools: ToolSpec[];
  /**
   * MCP tools the model is shown, as a filter: the activity builds their specs from its worker's catalog of
   * connected servers (activities/mcp/), shown after `tools`. Absent: none.
   */
  mcp_tools?: McpToolFilter;
  /**
   * With a deferred filter (`tool_search`): the MCP tools promoted so far in this run, whose specs are sent;
   * the others go by name in the system message's `<available-deferred-tools>`, beside `tool_search`.
   */
  mcp_promoted?: string[];
  /** The stored prefix of the transcript (see contracts/transcript.ts); resolved by the activity. */
  transcript_ref?: TranscriptRef;
  /** A fork child's first call: the lead's stored prefix, whose completed turns follow the system message. */
  fork_from?: TranscriptRef;
  /**
   * Appended to the first system message, fixed for the run: the date, the skills block. (Calls scheduled
   * before it existed carry these in `system_context`.)
   */
  system_prefix?: string;
  /**
   * What changes between calls: the compaction summary, the ledger block. Appended to the first system message
   * after `system_prefix`, or, by a provider with a prompt cache (Anthropic), put after the transcript.
   */
  system_context?: string;
  /** Model calls this agent made before this one (the scripted provider's turn, compaction or not). */
  turn_index?: number;
  /**
   * sha256 of the JSON of the tool specs. Sent with `tools` on an execution's first call, which stores them;
   * later calls send the key alone (`tools` empty) and the activity reads them back: the same ~3 KB of
   * specs is not written into history at every turn.
   */
  tools_key?: string;
}

/** Finish reasons of an answer cut off at the output limit (OpenAI-compatible `length`, Anthropic `max_tokens`). */
const CUT_OFF_FINISH_REASONS: readonly string[] = ['length', 'max_tokens'];
/** Finish reasons of an answer the provider refused or filtered (OpenAI `content_filter`, `refusal`, `safety`). */
const REFUSED_FINISH_REASONS: readonly string[] = ['content_filter', 'refusal', 'safety'];

/** A final answer the provider did not finish: cut off at the output limit, or refused. */
export interface UnfinishedAnswer {
  cause: 'cut_off' | 'refused';
  /** For the result's `error`: names the cause and the provider's own finish reason. */
  error: string;
}

/**
 * Whether a final answer is unfinished, from the provider's finish reason. The seed (`dsh-tool-subagent`): a
 * stop other than completion (max-tokens, refusal) is an error result, never partial output taken for success.
 */
export function unfinishedAnswer(finishReason: string | undefined): UnfinishedAnswer | undefined {
  const reason = finishReason?.toLowerCase();
  if (reason === undefined) return undefined;
  if (CUT_OFF_FINISH_REASONS.includes(reason)) {
    return {
      cause: 'cut_off',
      error: `The model's answer was cut off at its output limit (finish_reason: ${finishReason}); it is incomplete.`,
    };
  }
  if (REFUSED_FINISH_REASONS.includes(reason)) {
    return {
      cause: 'refused',
      error: `The model provider refused or filtered the answer (finish_reason: ${finishReason}).`,
    };
  }
  return undefined;
}

/**
 * The run's error when the provider said the transcript is longer than the model's context window and
 * summarization could not shorten it (off, or the transcript still too long after a summary).
 */
export function contextOverflowText(providerMessage: string, summarizing: boolean): string {
  return summarizing
    ? `${providerMessage} (the transcript is longer than the model's context window even after summarizing it)`
    : `${providerMessage} (the transcript is longer than the model's context window; turn summarization on ` +
        'to compact long runs)';
}

/** A provider error that retrying cannot fix (400, 401, 404…): the run ends `failed`, never `completed`. */
export interface ModelErrorFallback {
  message: string;
  status?: number;
  /** The request was longer than the model's context window (the provider said so). */
  context_overflow?: true;
}

export interface ModelCallResult {
  content: string;
  tool_calls: ToolCall[];
  /** Absent when the provider reported none: absent usage stays absent rather than estimated as zero. */
  usage?: TokenUsage;
  model_name: string;
  /** `stop`, `tool_calls`, `length`, … as the provider said it. */
  finish_reason?: string;
  /** Set instead of throwing for non-retryable provider errors (the seeds' `deerflow_error_fallback`). */
  error_fallback?: ModelErrorFallback;
  /** Blocks of the answer its provider wants back on later turns (its thinking): kept on the assistant message. */
  provider_blocks?: ProviderBlocks;
  /** The transcript this call was sent, stored: the next call sends this reference and only what is new. */
  transcript_ref?: TranscriptRef;
  /** The `tools_key` whose specs are now stored: later calls may send the key alone. */
  tools_stored?: string;
  /**
   * For each MCP tool the response calls that the model was shown: how to schedule its call (read-only or not,
   * its timeout), so the workflow decides from history, never from a worker's catalog.
   */
  mcp_calls?: Record<string, McpCallInfo>;
  /**
   * Deferred MCP tools promoted before this call by their routing keywords (`tool_search.auto_promote_top_k`):
   * their specs were sent; the workflow records them as a search's promotions.
   */
  auto_promoted?: string[];
}
