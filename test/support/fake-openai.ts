/**
 * A fake OpenAI-compatible Chat Completions server (fake-model-server.ts), for tests of the `openai` model
 * provider and for end-to-end runs that must not reach a real model: JSON replies, SSE streams with a final
 * usage chunk when `stream_options.include_usage` is set, error bodies shaped `{"error": {"message", "type"}}`
 * with `Retry-After`. And its Azure variant: a deployment's route (`/openai/deployments/<d>/chat/completions`),
 * the key in an `api-key` header, the `api-version` query required.
 */
import { openaiCompletion, openaiStream } from '../../activities/model/wire-replies';
import {
  FakeModelServer,
  retryAfterHeader,
  textOf,
  type ChatRoute,
  type FakeDialect,
  type FakeResponder as AnyFakeResponder,
  type FakeServerOptions,
  type RecordedRequest as AnyRecordedRequest,
} from './fake-model-server';

export {
  OUTAGE_MESSAGE,
  type FakeCompletion,
  type FakeHttpError,
  type FakeOutage,
  type FakeRawReply,
  type FakeReply,
  type FakeToolCall,
  type FakeUsage,
} from './fake-model-server';

export interface FakeChatMessage {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  [key: string]: unknown;
}

export interface FakeChatRequest {
  model: string;
  messages: FakeChatMessage[];
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

export type RecordedRequest = AnyRecordedRequest<FakeChatRequest>;
export type FakeOpenAIOptions = FakeServerOptions<FakeChatRequest>;
export type FakeResponder = AnyFakeResponder<FakeChatRequest>;

const CHAT_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const MODEL_PATHS = new Set(['/v1/models', '/models']);
const AZURE_CHAT = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/;

function errorTypeFor(status: number): string {
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** Chat Completions' wire, on OpenAI's routes (`azure`: on a deployment's, with Azure's key header). */
function chatCompletionsDialect(azure: boolean): FakeDialect<FakeChatRequest> {
  return {
    name: azure ? 'azure_openai' : 'openai',
    route(method, path, query, body) {
      if (azure) {
        const deployment = AZURE_CHAT.exec(path)?.[1];
        if (method !== 'POST' || deployment === undefined || !query['api-version']) return undefined;
        return { stream: body?.stream === true, model: deployment };
      }
      if (method === 'GET' && MODEL_PATHS.has(path)) return 'models';
      if (method !== 'POST' || !CHAT_PATHS.has(path)) return undefined;
      return { stream: body?.stream === true };
    },
    authorized: (request, key) =>
      azure ? request.headers['api-key'] === key : request.authorization === `Bearer ${key}`,
    invalid: (body) => (Array.isArray(body?.messages) ? undefined : "'messages' is a required property"),
    view: (body, route) => ({
      model: body.model ?? route.model ?? '',
      stream: route.stream,
      system: textOf(body.messages.find((m) => m.role === 'system')?.content),
      last_user_text: textOf([...body.messages].reverse().find((m) => m.role === 'user')?.content),
      tool_results: body.messages.filter((m) => m.role === 'tool').map((m) => textOf(m.content)),
      tools: (body.tools ?? []).map((tool) => tool.function.name),
      prompt_chars: JSON.stringify(body.messages).length,
    }),
    defaultStopReason: (hasToolCalls) => (hasToolCalls ? 'tool_calls' : 'stop'),
    answer(reply, route: ChatRoute, body, index) {
      const id = `chatcmpl-fake-${index}`;
      if (!route.stream)
        return { contentType: 'application/json', parts: [JSON.stringify(openaiCompletion(reply, id))] };
      // The usage chunk only when the request asked for it, as OpenAI does.
      const usage = body.stream_options?.include_usage ? reply.usage : undefined;
      return { contentType: 'text/event-stream', parts: openaiStream({ ...reply, usage }, id) };
    },
    error: (error) => ({
      body: {
        error: {
          message: error.error_message,
          type: error.error_type ?? errorTypeFor(error.status),
          param: null,
          code: null,
        },
      },
      headers: retryAfterHeader(error.retry_after),
    }),
    models: () => ({ object: 'list', data: [{ id: 'fake-model', object: 'model', owned_by: 'fake' }] }),
  };
}

export class FakeOpenAI extends FakeModelServer<FakeChatRequest> {
  /** Starts a server on 127.0.0.1 and resolves once it listens. */
  static start(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
    return FakeModelServer.listen<FakeChatRequest, FakeOpenAI>(
      (server) => new FakeOpenAI(server, chatCompletionsDialect(false), options),
      options.port,
    );
  }

  /** The base URL a client is configured with (`…/v1`). */
  get url(): string {
    return `${this.origin}/v1`;
  }

  /** A config's `models` with one model, `fake`, served by this server (no key: it asks for none). */
  modelsConfig(): { models: Array<Record<string, string>> } {
    return { models: [{ name: 'fake', provider: 'openai', model: 'fake-model', base_url: this.url }] };
  }
}

/** Same as `FakeOpenAI.start`. */
export function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  return FakeOpenAI.start(options);
}

/** Azure OpenAI's deployments: the resource's URL is `origin`. */
export class FakeAzureOpenAI extends FakeModelServer<FakeChatRequest> {
  static start(options: FakeOpenAIOptions = {}): Promise<FakeAzureOpenAI> {
    return FakeModelServer.listen<FakeChatRequest, FakeAzureOpenAI>(
      (server) => new FakeAzureOpenAI(server, chatCompletionsDialect(true), options),
      options.port,
    );
  }
}
