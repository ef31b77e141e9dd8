/** Our transcript ↔ LangChain's message classes, for the LangChain chat model adapters. */
import type * as LangChainMessages from '@langchain/core/messages';
import type { AIMessage, AIMessageChunk, BaseMessage, OpenAIToolCall } from '@langchain/core/messages';
import type { ChatMessage, TokenUsage, ToolCall, ToolSpec } from '../../contracts/messages';
import { loadOptional } from '../../payloads/optional-packages';

export interface OpenAIFunctionTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export function toOpenAITools(tools: ToolSpec[]): OpenAIFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/** LangChain's message classes, loaded with the adapter that needs them (the offline model needs neither). */
function langChainMessages(): typeof LangChainMessages {
  return loadOptional(
    'the openai model provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@langchain/core/messages') as typeof LangChainMessages,
  );
}

export function toLangChainMessages(messages: ChatMessage[]): BaseMessage[] {
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
          status: message.is_error ? 'error' : 'success',
        });
      case 'assistant':
        return assistantMessage(message.content, message.tool_calls ?? []);
    }
  });
}

// The tool calls go back to the provider as raw OpenAI tool calls, so each `arguments` string is exactly what
// the model wrote, invalid JSON included: LangChain's parsed `tool_calls` would re-serialise or drop them.
// They are set after construction because the constructor warns when given raw calls without parsed ones.
function assistantMessage(content: string, toolCalls: ToolCall[]): AIMessage {
  const message = new (langChainMessages().AIMessage)({ content });
  if (toolCalls.length > 0) {
    message.additional_kwargs.tool_calls = toolCalls.map((call): OpenAIToolCall => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.args },
    }));
  }
  return message;
}

export interface ParsedReply {
  content: string;
  tool_calls: ToolCall[];
  usage?: TokenUsage;
  finish_reason?: string;
  /** The model the provider says answered, when it says. */
  model_name?: string;
}

/**
 * Reads a provider's answer. Tool calls come from the raw OpenAI tool calls (complete and in order on both a
 * streamed and a plain answer) because LangChain's streamed `tool_calls` parse partial JSON leniently: a model's
 * broken `{"x": ` would reach the tool as `{}`. Usage is only ever the provider's own report.
 */
export function fromLangChainReply(reply: AIMessage | AIMessageChunk, turnIndex: number): ParsedReply {
  const raw = (reply.additional_kwargs.tool_calls ?? []) as Array<Partial<OpenAIToolCall>>;
  const parsed: ParsedReply = {
    content: reply.text,
    tool_calls: raw.map((call, k) => ({
      id: call.id || `call_${turnIndex}_${k}`,
      name: call.function?.name ?? '',
      args: call.function?.arguments ?? '',
    })),
  };
  const usage = reply.usage_metadata;
  // LangChain drops a zero count from a plain answer's usage, so one missing side of a reported usage is 0;
  // with neither side the provider reported nothing, and usage stays absent.
  if (usage && (Number.isFinite(usage.input_tokens) || Number.isFinite(usage.output_tokens))) {
    const input = usage.input_tokens || 0;
    const output = usage.output_tokens || 0;
    parsed.usage = {
      input_tokens: input,
      output_tokens: output,
      total_tokens: usage.total_tokens || input + output,
    };
  }
  const { finish_reason: finishReason, model_name: modelName } = reply.response_metadata;
  if (typeof finishReason === 'string') parsed.finish_reason = finishReason;
  if (typeof modelName === 'string' && modelName !== '') parsed.model_name = modelName;
  return parsed;
}
