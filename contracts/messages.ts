/**
 * The transcript as it crosses the workflow/activity boundary. Plain data (JSON-serialisable), snake_case
 * on the wire like the seeds' contracts.
 */

export interface TokenUsage {
  /** Every input token, those read from or written to the provider's prompt cache included. */
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  /** Of `input_tokens`, those read from the provider's prompt cache; absent when it reported none. */
  cache_read_tokens?: number;
  /** Of `input_tokens`, those written to the provider's prompt cache; absent when it reported none. */
  cache_write_tokens?: number;
}

/** A tool call as the model issued it. `args` is the raw JSON text: a tool validates it, not the loop. */
export interface ToolCall {
  id: string;
  name: string;
  args: string;
}

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  content: string;
  tool_calls?: ToolCall[];
  /** What the provider needs back verbatim on later turns (its thinking, with signatures): ProviderBlocks. */
  provider_blocks?: ProviderBlocks;
}

/**
 * Content blocks of an answer that its provider wants sent back as they were (Anthropic's `thinking` and
 * `redacted_thinking` blocks, with their signatures; Bedrock's `reasoning_content`), in LangChain's shape; for
 * Gemini, one block of the thought signatures on its function calls. Sent back to that provider only: another
 * one would refuse them.
 */
export interface ProviderBlocks {
  provider: string;
  blocks: Array<Record<string, unknown>>;
}

export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  name: string;
  content: string;
  is_error?: boolean;
  /** Structured fields beside the text (a delegation's status, usage…); never sent to the model. */
  metadata?: { [key: string]: unknown };
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** What the model is shown of a tool: its name, description and JSON-schema parameters. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export function addUsage(a: TokenUsage, b: TokenUsage | undefined): TokenUsage {
  if (!b) return a;
  const sum: TokenUsage = {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
  // The cache counts only where a side reported them: a usage without them stays the three counts it was.
  if (a.cache_read_tokens !== undefined || b.cache_read_tokens !== undefined)
    sum.cache_read_tokens = (a.cache_read_tokens ?? 0) + (b.cache_read_tokens ?? 0);
  if (a.cache_write_tokens !== undefined || b.cache_write_tokens !== undefined)
    sum.cache_write_tokens = (a.cache_write_tokens ?? 0) + (b.cache_write_tokens ?? 0);
  return sum;
}

export const ZERO_USAGE: TokenUsage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };

/** The tool message answering `call` (`is_error` only when set: an answer that is not an error omits it). */
export function toolMessageFor(call: ToolCall, content: string, isError = false): ToolMessage {
  return {
    role: 'tool',
    tool_call_id: call.id,
    name: call.name,
    content,
    ...(isError && { is_error: true }),
  };
}
