/**
 * The `anthropic` model provider: Anthropic's Messages API (streamed, SSE) through LangChain's ChatAnthropic
 * (DeerFlow's `langchain_anthropic:ChatAnthropic`).
 *
 * Prompt caching: the request marks two cache breakpoints (`cache_control: ephemeral`): the end of the agent's
 * own system prompt (with the tools before it, fixed for the run), and the end of the transcript. Each turn
 * then reads the previous turn's prefix from the cache and writes the longer one. What changes between turns
 * without being part of the transcript — the call's system context: the summary, the delegation ledger, the
 * date and skills blocks — would break that prefix inside the system prompt, so it goes after the transcript,
 * in a user block of its own that is never cached. The cache counts come back in the usage
 * (`cache_read_tokens`, `cache_write_tokens`; input tokens count them too).
 */
import type * as LangChainAnthropic from '@langchain/anthropic';
import type { BaseMessage, MessageContent } from '@langchain/core/messages';
import type { ModelCallInput } from '../../contracts/model';
import { loadOptional } from '../../payloads/optional-packages';
import {
  contentBlocksOf,
  finishReasonFrom,
  keyedEndpoint,
  largestCounts,
  withTools,
  type LangChainProvider,
} from './chat-call';
import { langChainMessages, toLangChainMessages } from './langchain-messages';
import { classifyProviderError } from './provider-errors';

/** Anthropic's stop reasons in the contract's words (`max_tokens` and `refusal` it reads as they are). */
const STOP_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  tool_use: 'tool_calls',
  model_context_window_exceeded: 'length',
};

const CACHE_POINT = { type: 'ephemeral' } as const;

function langChainAnthropic(): typeof LangChainAnthropic {
  return loadOptional(
    'the anthropic model provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@langchain/anthropic') as typeof LangChainAnthropic,
  );
}

export const anthropicProvider: LangChainProvider = {
  placesSystemContext: true,
  endpoint(settings, env) {
    return keyedEndpoint(settings, env, settings.base_url || undefined);
  },
  chatCall(input, { baseUrl, apiKey }) {
    const settings = input.model;
    const endpoint = baseUrl ?? 'the Anthropic API';
    return {
      endpoint,
      chatModel: () => {
        const { ChatAnthropic } = langChainAnthropic();
        const chat = new ChatAnthropic({
          model: settings.model,
          apiKey,
          ...(baseUrl && { anthropicApiUrl: baseUrl }),
          temperature: settings.temperature,
          ...(settings.max_tokens !== undefined && { maxTokens: settings.max_tokens }),
          ...(settings.thinking && {
            thinking: settings.thinking as LangChainAnthropic.AnthropicInput['thinking'],
          }),
          maxRetries: 0,
          streamUsage: true,
        });
        return withTools(chat, input.tools);
      },
      messages: cachedMessages(input),
      stream: true,
      // The first event's counts, then the answer's running total: not parts to add up.
      addStreamedUsage: largestCounts,
      // Its thinking goes back with the turn it belongs to: with tools, Anthropic refuses a turn without it.
      blocksToKeep: (reply) => contentBlocksOf(reply, ['thinking', 'redacted_thinking']),
      finishReason: (reply) =>
        finishReasonFrom(
          reply.additional_kwargs.stop_reason ?? reply.response_metadata.stop_reason,
          STOP_REASONS,
        ),
      classify: (err) => classifyProviderError(err, endpoint),
    };
  },
};

/**
 * The transcript with its two cache breakpoints (the system prompt's end, the transcript's end) and the call's
 * system context after it, uncached.
 */
export function cachedMessages(input: ModelCallInput): BaseMessage[] {
  const { HumanMessage } = langChainMessages();
  const messages = toLangChainMessages(input.messages, 'parsed', 'anthropic');
  const system = messages.findIndex((message) => message.getType() === 'system');
  if (system >= 0) markCachePoint(messages[system]);
  const last = messages.length - 1;
  if (last >= 0 && last !== system) markCachePoint(messages[last]);
  if (input.system_context) messages.push(new HumanMessage(input.system_context));
  return messages;
}

/** Marks the message's last block as a cache breakpoint: the prefix up to it is cached. */
function markCachePoint(message: BaseMessage): void {
  const content: MessageContent = message.content;
  if (typeof content === 'string') {
    // An assistant's turn with tool calls and no text has nothing to mark; its tool_use blocks come after.
    if (content === '') return;
    message.content = [{ type: 'text', text: content, cache_control: CACHE_POINT }];
    return;
  }
  const lastBlock = content[content.length - 1];
  if (lastBlock !== undefined) Object.assign(lastBlock, { cache_control: CACHE_POINT });
}
