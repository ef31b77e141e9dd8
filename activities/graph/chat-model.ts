/**
 * The LangChain chat model a graph agent's factory is handed: the agent's configured model (`scripted` or
 * `openai`) through the project's own provider call (`callProvider`), so a graph gets the same offline-safe
 * requests, error classification, retries and metrics as the agent loop, and its author hard-codes no provider.
 * `bindTools` is supported (tool calls come back as LangChain tool calls); usage is the provider's own report.
 */
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import {
  AIMessage,
  type BaseMessage,
  type InvalidToolCall,
  type ToolCall as LangChainToolCall,
} from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import type { ChatMessage, ToolSpec } from '../../contracts/messages';
import type { ModelErrorFallback, ModelSettings } from '../../contracts/model';
import type { ModelProviders } from '../model';
import { withSystemContext } from '../transcripts';

/** A provider error retrying cannot fix (400, 401, a broken script): the subagent ends `failed` with it. */
export class GraphModelFallback extends Error {
  override readonly name = 'GraphModelFallback';

  constructor(readonly fallback: ModelErrorFallback) {
    super(fallback.message);
  }
}

export interface ProjectChatModelSettings {
  model: ModelSettings;
  /** The agent's name: the scripted provider's scripts key on it. */
  agentName: string;
  /** The worker's model providers: every call goes through them. */
  providers: ModelProviders;
  /** A one-time note for the next call's system message (the token budget's warning), taken when read. */
  takeNote?: () => string | undefined;
}

export class ProjectChatModel extends BaseChatModel {
  constructor(
    readonly settings: ProjectChatModelSettings,
    private readonly tools: ToolSpec[] = [],
  ) {
    super({});
  }

  // Called by the base class's constructor, before this class's fields are set.
  _llmType(): string {
    return 'durable-subagents';
  }

  override bindTools(tools: BindToolsInput[]): ProjectChatModel {
    const specs = tools.map((tool): ToolSpec => {
      const { function: fn } = convertToOpenAITool(tool);
      return {
        name: fn.name,
        description: fn.description ?? '',
        parameters: fn.parameters as ToolSpec['parameters'],
      };
    });
    return new ProjectChatModel(this.settings, specs);
  }

  async _generate(
    messages: BaseMessage[],
    _options: this['ParsedCallOptions'],
    _runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const transcript = messages.map(toChatMessage);
    const request = {
      model: this.settings.model,
      agent_name: this.settings.agentName,
      messages: withSystemContext(transcript, this.settings.takeNote?.()),
      tools: this.tools,
    };
    // Outside the graph's callback context: the `openai` provider's own LangChain model would otherwise report
    // the same call to the graph's callbacks again (its usage counted twice).
    const result = await AsyncLocalStorageProviderSingleton.getInstance().run(undefined, () =>
      this.settings.providers.call(request),
    );
    if (result.error_fallback) throw new GraphModelFallback(result.error_fallback);
    const toolCalls: LangChainToolCall[] = [];
    const invalid: InvalidToolCall[] = [];
    for (const call of result.tool_calls) {
      const args = parseArgs(call.args);
      if (args === undefined)
        invalid.push({
          type: 'invalid_tool_call',
          id: call.id,
          name: call.name,
          args: call.args,
          error: 'arguments are not a JSON object',
        });
      else toolCalls.push({ type: 'tool_call', id: call.id, name: call.name, args });
    }
    const message = new AIMessage({
      content: result.content,
      tool_calls: toolCalls,
      invalid_tool_calls: invalid,
      response_metadata: {
        model_name: result.model_name,
        ...(result.finish_reason !== undefined && { finish_reason: result.finish_reason }),
      },
      ...(result.usage && { usage_metadata: { ...result.usage } }),
    });
    return { generations: [{ text: result.content, message }] };
  }
}

function parseArgs(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A LangChain message as the project's transcript holds it (what the providers take). */
export function toChatMessage(message: BaseMessage): ChatMessage {
  const content = message.text;
  switch (message.getType()) {
    case 'system':
    case 'developer':
      return { role: 'system', content };
    case 'ai': {
      const calls = (message as AIMessage).tool_calls ?? [];
      return {
        role: 'assistant',
        content,
        ...(calls.length > 0 && {
          tool_calls: calls.map((call, k) => ({
            id: call.id ?? `call_${k}`,
            name: call.name,
            args: JSON.stringify(call.args),
          })),
        }),
      };
    }
    case 'tool': {
      const tool = message as BaseMessage & { tool_call_id: string; name?: string; status?: string };
      return {
        role: 'tool',
        tool_call_id: tool.tool_call_id,
        name: tool.name ?? '',
        content,
        ...(tool.status === 'error' && { is_error: true }),
      };
    }
    default:
      return { role: 'user', content };
  }
}
