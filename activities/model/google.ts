/**
 * The `google` model provider: the Gemini API (`streamGenerateContent?alt=sse`) through LangChain's
 * ChatGoogleGenerativeAI (DeerFlow's `langchain_google_genai:ChatGoogleGenerativeAI`), with a Gemini API key
 * (GOOGLE_API_KEY or GEMINI_API_KEY).
 */
import type * as LangChainGoogle from '@langchain/google-genai';
import type { BaseMessage, UsageMetadata } from '@langchain/core/messages';
import type { ChatMessage } from '../../contracts/messages';
import type { ModelSettings } from '../../contracts/model';
import { loadOptional } from '../../payloads/optional-packages';
import { finishReasonFrom, keyedEndpoint, withTools, type LangChainProvider } from './chat-call';
import { langChainMessages, toLangChainMessages } from './langchain-messages';
import { classifyProviderError } from './provider-errors';

/**
 * Gemini's finish reasons in the contract's words: it stops with `STOP` after function calls too; every
 * block for the content's sake is a filtered answer (`MAX_TOKENS` and `SAFETY` the contract reads as they
 * are).
 */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  recitation: 'content_filter',
  blocklist: 'content_filter',
  prohibited_content: 'content_filter',
  spii: 'content_filter',
  image_safety: 'content_filter',
  language: 'content_filter',
};

function langChainGoogle(): typeof LangChainGoogle {
  return loadOptional(
    'the google model provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@langchain/google-genai') as typeof LangChainGoogle,
  );
}

/** `thinking` as Gemini's thinking config: a budget (or dynamic), or none. */
function thinkingConfig(
  settings: ModelSettings,
): LangChainGoogle.GoogleGenerativeAIChatInput['thinkingConfig'] {
  const { thinking } = settings;
  if (thinking === undefined) return undefined;
  if (thinking.type === 'disabled') return { thinkingBudget: 0 };
  return { thinkingBudget: thinking.budget_tokens ?? -1 };
}

export const googleProvider: LangChainProvider = {
  endpoint(settings, env) {
    return keyedEndpoint(settings, env, settings.base_url || undefined);
  },
  chatCall(input, { baseUrl, apiKey }) {
    const settings = input.model;
    const endpoint = baseUrl ?? 'the Gemini API';
    return {
      endpoint,
      chatModel: () => {
        const { ChatGoogleGenerativeAI } = langChainGoogle();
        const chat = new ChatGoogleGenerativeAI({
          model: settings.model,
          apiKey,
          ...(baseUrl && { baseUrl }),
          temperature: settings.temperature,
          maxOutputTokens: settings.max_tokens,
          thinkingConfig: thinkingConfig(settings),
          maxRetries: 0,
          streamUsage: true,
        });
        withTurnsJoined(chat);
        withStreamEndsHandled(chat);
        return withTools(chat, input.tools);
      },
      messages: withCallSignatures(input.messages),
      // Gemini 3's signatures on its function calls go back with the turn they belong to.
      blocksToKeep: callSignaturesBlock,
      stream: true,
      addStreamedUsage: deltasWithCacheTotal,
      // A stream's is in its chunks' metadata, a plain answer's in the message's.
      finishReason: (reply) =>
        finishReasonFrom(
          reply.response_metadata.finishReason ?? reply.additional_kwargs.finishReason,
          FINISH_REASONS,
        ),
      replyOf: blockedReply,
      classify: (err) => classifyProviderError(err, endpoint),
    };
  },
};

/**
 * Where LangChain keeps the thought signatures Gemini 3 puts on an answer's function calls (in the answer's
 * `additional_kwargs`, by call id), and where it looks for them when the turn is sent back. Without them it
 * sends a placeholder Gemini accepts, but the model loses the reasoning that led to its calls.
 */
const CALL_SIGNATURES_KEY = '__gemini_function_call_thought_signatures__';

/** The provider block (contracts/messages.ts ProviderBlocks) that keeps an answer's call signatures. */
const CALL_SIGNATURES_BLOCK = 'function_call_thought_signatures';

function callSignaturesBlock(reply: { additional_kwargs: Record<string, unknown> }) {
  const kept = reply.additional_kwargs[CALL_SIGNATURES_KEY];
  const signatures = Object.fromEntries(
    Object.entries(kept !== null && typeof kept === 'object' ? kept : {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '',
    ),
  );
  return Object.keys(signatures).length > 0 ? [{ type: CALL_SIGNATURES_BLOCK, signatures }] : [];
}

/** The transcript in LangChain's messages, each Gemini answer's call signatures where LangChain looks for them. */
function withCallSignatures(messages: ChatMessage[]): BaseMessage[] {
  const converted = toLangChainMessages(messages, 'parsed');
  messages.forEach((message, k) => {
    if (message.role !== 'assistant' || message.provider_blocks?.provider !== 'google') return;
    const block = message.provider_blocks.blocks.find((b) => b.type === CALL_SIGNATURES_BLOCK);
    if (block?.signatures) converted[k].additional_kwargs[CALL_SIGNATURES_KEY] = block.signatures;
  });
  return converted;
}

/**
 * Gemini reports the whole usage in every chunk; LangChain turns the token counts into each chunk's part, to
 * be added up, but leaves the cached count whole in each: that one is read at its largest.
 */
function deltasWithCacheTotal(sum: UsageMetadata | undefined, chunk: UsageMetadata): UsageMetadata {
  const cacheRead = Math.max(
    sum?.input_token_details?.cache_read ?? 0,
    chunk.input_token_details?.cache_read ?? 0,
  );
  return {
    input_tokens: (sum?.input_tokens ?? 0) + chunk.input_tokens,
    output_tokens: (sum?.output_tokens ?? 0) + chunk.output_tokens,
    total_tokens: (sum?.total_tokens ?? 0) + chunk.total_tokens,
    ...(cacheRead > 0 && { input_token_details: { cache_read: cacheRead } }),
  };
}

/**
 * Gemini's answer without content (a prompt blocked, an answer stopped for safety) as the answer it is: no
 * text, and why (the block reason, else the finish reason), which the contract reads as a refusal.
 */
function blockedReply(err: unknown) {
  const { name, finishReason, blockReason } = (err ?? {}) as {
    name?: unknown;
    finishReason?: unknown;
    blockReason?: unknown;
  };
  if (name !== 'EmptyContentError') return undefined;
  const reason = typeof blockReason === 'string' && blockReason !== '' ? 'content_filter' : finishReason;
  const { AIMessage } = langChainMessages();
  return new AIMessage({ content: '', response_metadata: { finishReason: reason ?? 'content_filter' } });
}

interface GeminiContent {
  role: string;
  parts: unknown[];
}

type RequestBuilder = (messages: unknown, options: unknown) => { contents?: GeminiContent[] };

/**
 * Gemini wants a turn's function responses together, in one content, as many as the turn's function calls
 * ("the number of function response parts is equal to the number of function call parts"), and no two user
 * turns in a row; LangChain sends each tool result as a content of its own, and a note after them as another.
 * Consecutive contents of one role are joined here, in the request LangChain builds (its
 * `_buildGenerateContentRequest`, the one place every request passes).
 */
function withTurnsJoined(chat: object): void {
  const target = chat as { _buildGenerateContentRequest?: RequestBuilder };
  const build = target._buildGenerateContentRequest?.bind(chat);
  if (build === undefined) return;
  target._buildGenerateContentRequest = (messages, options) => {
    const request = build(messages, options);
    return request.contents ? { ...request, contents: joinedTurns(request.contents) } : request;
  };
}

function joinedTurns(contents: GeminiContent[]): GeminiContent[] {
  const joined: GeminiContent[] = [];
  for (const content of contents) {
    const previous = joined[joined.length - 1];
    if (previous?.role === content.role) previous.parts = [...previous.parts, ...content.parts];
    else joined.push({ ...content });
  }
  return joined;
}

interface StreamResult {
  response?: Promise<unknown>;
}

type StreamStarter = (...args: unknown[]) => Promise<StreamResult>;

/**
 * Google's client answers a stream request with the stream and, beside it, a promise of the whole answer read
 * from a copy of the stream; LangChain reads the stream and never looks at that promise. A stream ended early
 * (the answer cap, a cancel, a timeout, a dropped connection) rejects the promise, unhandled, and an unhandled
 * rejection ends a Node process: the worker. Its end is handled here (the stream's own error reaches the call).
 */
function withStreamEndsHandled(chat: object): void {
  const client = (chat as { client?: { generateContentStream?: StreamStarter } }).client;
  const start = client?.generateContentStream?.bind(client);
  if (client === undefined || start === undefined) return;
  client.generateContentStream = async (...args) => {
    const result = await start(...args);
    result.response?.catch(() => undefined);
    return result;
  };
}
