/**
 * The `ollama` model provider: Ollama's own chat API (`/api/chat`, a stream of JSON lines) through LangChain's
 * ChatOllama (DeerFlow's `langchain_ollama:ChatOllama`): what Ollama reports of the answer (`done_reason`,
 * `prompt_eval_count`, `eval_count`) and its thinking come through, where its OpenAI-compatible endpoint drops
 * them. No key (an `api_key`, when given, goes as a bearer token, for a server behind a proxy); never pulls a
 * model.
 */
import type * as LangChainOllama from '@langchain/ollama';
import { loadOptional } from '../../payloads/optional-packages';
import { apiKeyOf, finishReasonFrom, withTools, type LangChainProvider } from './chat-call';
import { toLangChainMessages } from './langchain-messages';
import { classifyProviderError } from './provider-errors';

/** ChatOllama's own default. */
const DEFAULT_BASE_URL = 'http://127.0.0.1:11434';

/** Ollama's `done_reason` in the contract's words (`stop` and `length` it reads as they are). */
const DONE_REASONS: Readonly<Record<string, string>> = { load: 'stop', unload: 'stop' };

function langChainOllama(): typeof LangChainOllama {
  return loadOptional(
    'the ollama model provider',
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    () => require('@langchain/ollama') as typeof LangChainOllama,
  );
}

export const ollamaProvider: LangChainProvider = {
  endpoint(settings, env) {
    return {
      baseUrl: settings.base_url || env.OLLAMA_BASE_URL || DEFAULT_BASE_URL,
      apiKey: apiKeyOf(settings, env).key,
    };
  },
  chatCall(input, { baseUrl, apiKey }) {
    const settings = input.model;
    const endpoint = baseUrl ?? DEFAULT_BASE_URL;
    return {
      endpoint,
      chatModel: (signal) => {
        const { ChatOllama } = langChainOllama();
        const chat = new ChatOllama({
          model: settings.model,
          baseUrl: endpoint,
          ...(apiKey && { headers: { authorization: `Bearer ${apiKey}` } }),
          temperature: settings.temperature,
          numPredict: settings.max_tokens,
          ...(settings.thinking && { think: settings.thinking.type !== 'disabled' }),
          // The Ollama client aborts all of its requests at once, and only between two lines of a stream: this
          // call's own signal ends its request, a stream not started yet included.
          fetch: (url, init) =>
            fetch(url, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }),
          maxRetries: 0,
        });
        return withTools(chat, input.tools);
      },
      messages: toLangChainMessages(input.messages, 'parsed'),
      stream: true,
      // ChatOllama counts zeros where Ollama's last line has no counts.
      reportedUsage: ({ response_metadata: metadata }) =>
        metadata.prompt_eval_count !== undefined || metadata.eval_count !== undefined,
      finishReason: (reply) => finishReasonFrom(reply.response_metadata.done_reason, DONE_REASONS),
      classify: (err) => classifyProviderError(err, endpoint),
    };
  },
};
