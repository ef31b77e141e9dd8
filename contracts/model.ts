import type { McpCallInfo, McpToolFilter } from './mcp';
import type { ChatMessage, TokenUsage, ToolCall, ToolSpec } from './messages';
import { groupThousands } from './text';
import type { TranscriptRef } from './transcript';
import type { ModelRetrySettings, ModelSettings } from './input-schemas';

export const MODEL_PROVIDERS = ['scripted', 'openai'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

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
  /** Appended to the first system message for this call only: the compaction summary, the ledger block. */
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

/** A provider error that retrying cannot fix (400, 401, 404…): the run ends `failed`, never `completed`. */
export interface ModelErrorFallback {
  message: string;
  status?: number;
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
  /** The transcript this call was sent, stored: the next call sends this reference and only what is new. */
  transcript_ref?: TranscriptRef;
  /** The `tools_key` whose specs are now stored: later calls may send the key alone. */
  tools_stored?: string;
  /**
   * For each MCP tool the response calls that the model was shown: how to schedule its call (read-only or not,
   * its timeout), so the workflow decides from history, never from a worker's catalog.
   */
  mcp_calls?: Record<string, McpCallInfo>;
}
