/** Our transcript ↔ LangChain's message classes, for the LangChain chat model adapters. */
import type * as LangChainMessages from '@langchain/core/messages';
import type {
  AIMessage,
  AIMessageChunk,
  BaseMessage,
  MessageContent,
  OpenAIToolCall,
  UsageMetadata,
} from '@langchain/core/messages';
import type { ChatMessage, TokenUsage, ToolCall, ToolSpec } from '../../contracts/messages';
import { loadOptional } from '../../payloads/optional-packages';

export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** Every LangChain chat model takes tools in OpenAI's shape and converts them to its provider's. */
export function toOpenAITools(tools: ToolSpec[]): OpenAIFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/** LangChain's message classes, loaded with the adapter that needs them (the offline model needs neither). */
export function langChainMessages(): typeof LangChainMessages {
  return loadOptional(
    'a LangChain model provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@langchain/core/messages') as typeof LangChainMessages,
  );
}

/**
 * How an assistant's earlier tool calls go back to the provider: `raw` as OpenAI tool calls (each `arguments`
 * string exactly as the model wrote it: OpenAI-compatible endpoints take text), `parsed` as LangChain's tool
 * calls with an object of arguments (Anthropic, Gemini, Bedrock and Ollama take an object, never text).
 */
export type ToolCallStyle = 'raw' | 'parsed';

/**
 * Our transcript in LangChain's messages, for `provider` (whose own blocks an assistant message kept, its
 * thinking, go back to it in front of the text; any other provider's are left out).
 */
export function toLangChainMessages(
  messages: ChatMessage[],
  style: ToolCallStyle = 'raw',
  provider?: string,
): BaseMessage[] {
  const { HumanMessage, SystemMessage, ToolMessage } = langChainMessages();
  return messages.map((message) => {
    switch (message.role) {
      case 'system':
        return new SystemMessage(message.content);
      case 'user':
        return new HumanMessage(message.content);
      case 'tool':
        return new ToolMessage({
          content: message.content,
          tool_call_id: message.tool_call_id,
          // Gemini answers a call by the tool's name; OpenAI-compatible endpoints may refuse the field.
          ...(style === 'parsed' && { name: message.name }),
          status: message.is_error ? 'error' : 'success',
        });
      case 'assistant': {
        const kept =
          message.provider_blocks?.provider === provider ? message.provider_blocks?.blocks : undefined;
        return assistantMessage(message.content, message.tool_calls ?? [], style, kept);
      }
    }
  });
}

// Raw calls are set after construction because the constructor warns when given raw calls without parsed ones.
function assistantMessage(
  content: string,
  toolCalls: ToolCall[],
  style: ToolCallStyle,
  blocks?: Array<Record<string, unknown>>,
): AIMessage {
  const { AIMessage } = langChainMessages();
  if (style === 'parsed') {
    return new AIMessage({
      content: blocks
        ? ([...blocks, ...(content ? [{ type: 'text', text: content }] : [])] as MessageContent)
        : content,
      tool_calls: toolCalls.map((call) => ({
        type: 'tool_call',
        id: call.id,
        name: call.name,
        args: argumentsObject(call.args),
      })),
    });
  }
  const message = new AIMessage({ content });
  if (toolCalls.length > 0) {
    message.additional_kwargs.tool_calls = toolCalls.map((call): OpenAIToolCall => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.args },
    }));
  }
  return message;
}

/**
 * A call's arguments as the object a provider that takes objects needs. Arguments the model wrote that are not
 * a JSON object (the tool already answered that they were invalid) go back as `{}`: the provider would refuse
 * the whole request over them.
 */
function argumentsObject(args: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(args);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * The transcript with no two user turns in a row, for a provider that refuses them (Bedrock's Converse): a
 * user message right after another user message or after tool results (a guard's note to the model) is
 * joined to it, its text after a blank line.
 */
export function mergeConsecutiveUserTurns(messages: BaseMessage[]): BaseMessage[] {
  const merged: BaseMessage[] = [];
  for (const message of messages) {
    const previous = merged[merged.length - 1];
    const previousType = previous?.getType();
    if (
      message.getType() === 'human' &&
      (previousType === 'human' || previousType === 'tool') &&
      typeof previous.content === 'string' &&
      typeof message.content === 'string'
    ) {
      previous.content = `${previous.content}\n\n${message.content}`;
      continue;
    }
    merged.push(message);
  }
  return merged;
}

export interface ParsedReply {
  content: string;
  tool_calls: ToolCall[];
  usage?: TokenUsage;
  /** The model the provider says answered, when it says. */
  model_name?: string;
}

/**
 * Reads a provider's answer. Tool calls keep the arguments exactly as the model wrote them, whichever way the
 * provider delivered them: OpenAI's raw tool calls (complete and in order, streamed or not), else a stream's
 * tool-call chunks concatenated (Anthropic's, Gemini's, Ollama's, Bedrock's), else the parsed calls of a plain
 * answer. LangChain's own `tool_calls` of a stream parse partial JSON leniently: a model's broken `{"x": `
 * would reach the tool as `{}`. Usage is only ever the provider's own report.
 */
export function fromLangChainReply(reply: AIMessage | AIMessageChunk, turnIndex: number): ParsedReply {
  const parsed: ParsedReply = { content: reply.text, tool_calls: replyToolCalls(reply, turnIndex) };
  const usage = tokenUsage(reply.usage_metadata);
  if (usage) parsed.usage = usage;
  // OpenAI's `model_name`; Anthropic's and Ollama's `model` (a stream's first event carries Anthropic's).
  const modelName =
    reply.response_metadata.model_name ?? reply.response_metadata.model ?? reply.additional_kwargs.model;
  if (typeof modelName === 'string' && modelName !== '') parsed.model_name = modelName;
  return parsed;
}

function replyToolCalls(reply: AIMessage | AIMessageChunk, turnIndex: number): ToolCall[] {
  const id = (given: string | undefined, k: number) => given || `call_${turnIndex}_${k}`;
  const raw = (reply.additional_kwargs.tool_calls ?? []) as Array<Partial<OpenAIToolCall>>;
  if (raw.length > 0) {
    return raw.map((call, k) => ({
      id: id(call.id, k),
      name: call.function?.name ?? '',
      args: call.function?.arguments ?? '',
    }));
  }
  const chunks = 'tool_call_chunks' in reply ? (reply.tool_call_chunks ?? []) : [];
  if (chunks.length > 0) {
    // A provider that takes objects streams a call without arguments as nothing at all: that is `{}`.
    return chunks.map((call, k) => ({ id: id(call.id, k), name: call.name ?? '', args: call.args || '{}' }));
  }
  return (reply.tool_calls ?? []).map((call, k) => ({
    id: id(call.id, k),
    name: call.name,
    args: JSON.stringify(call.args ?? {}),
  }));
}

/**
 * The provider's usage report in our shape. LangChain drops a zero count from a plain answer's usage, so one
 * missing side of a reported usage is 0; with neither side the provider reported nothing, and usage stays
 * absent. Input counts every prompt token, cached ones included (LangChain adds Anthropic's and Bedrock's
 * cache counts to them); the cache counts are kept when the provider reported some.
 */
export function tokenUsage(usage: UsageMetadata | undefined): TokenUsage | undefined {
  if (!usage || !(Number.isFinite(usage.input_tokens) || Number.isFinite(usage.output_tokens))) {
    return undefined;
  }
  const input = usage.input_tokens || 0;
  const output = usage.output_tokens || 0;
  const result: TokenUsage = {
    input_tokens: input,
    output_tokens: output,
    total_tokens: usage.total_tokens || input + output,
  };
  const cacheRead = usage.input_token_details?.cache_read;
  const cacheWrite = usage.input_token_details?.cache_creation;
  if (cacheRead) result.cache_read_tokens = cacheRead;
  if (cacheWrite) result.cache_write_tokens = cacheWrite;
  return result;
}
