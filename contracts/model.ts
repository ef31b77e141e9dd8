import type { ChatMessage, TokenUsage, ToolCall, ToolSpec } from './messages';

export const MODEL_PROVIDERS = ['scripted', 'openai'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];

/** A model as the activity needs it: resolved from the config's `models:` list (or a CLI flag). */
export interface ModelSettings {
  /** The name the config gives it (`models[].name`); reported as `model_name` when the provider names none. */
  name: string;
  provider: ModelProvider;
  /** The provider's model id (`gpt-4o-mini`, `deepseek-chat`, …). */
  model: string;
  /** OpenAI-compatible endpoint; falls back to OPENAI_BASE_URL. */
  base_url?: string;
  /** Name of the environment variable that holds the key (default OPENAI_API_KEY): keys never travel in history. */
  api_key_env?: string;
  temperature?: number;
  max_tokens?: number;
  request_timeout_seconds?: number;
  /** scripted: path of a YAML/JSON script file (see activities/model/scripted.ts). */
  script_file?: string;
}

export interface ModelCallInput {
  model: ModelSettings;
  /** Which agent is calling (`lead`, `general-purpose`, a custom name): the scripted provider keys on it. */
  agent_name: string;
  messages: ChatMessage[];
  tools: ToolSpec[];
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
}
