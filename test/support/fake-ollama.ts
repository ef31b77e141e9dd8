/**
 * A fake Ollama server (fake-model-server.ts): `POST /api/chat`, streamed as JSON lines unless `stream: false`,
 * `GET /api/tags` for the model list, Ollama's error body (`{"error": "…"}`). No key unless one is set (a
 * bearer token, for a server behind a proxy).
 */
import { ollamaResponse, ollamaStream } from '../../activities/model/wire-replies';
import {
  FakeModelServer,
  retryAfterHeader,
  textOf,
  type FakeDialect,
  type FakeServerOptions,
} from './fake-model-server';

export interface OllamaRequest {
  model: string;
  messages: Array<{
    role: string;
    content?: string;
    tool_calls?: Array<{ function: { name: string; arguments: unknown } }>;
    tool_name?: string;
  }>;
  tools?: Array<{ type: string; function: { name: string } }>;
  stream?: boolean;
  think?: boolean;
  options?: Record<string, unknown>;
  [key: string]: unknown;
}

const dialect: FakeDialect<OllamaRequest> = {
  name: 'ollama',
  route(method, path, _query, body) {
    if (method === 'GET' && path === '/api/tags') return 'models';
    return method === 'POST' && path === '/api/chat' ? { stream: body?.stream !== false } : undefined;
  },
  authorized: (request, key) => request.authorization === `Bearer ${key}`,
  invalid: (body) =>
    !body?.model ? 'model is required' : Array.isArray(body.messages) ? undefined : 'messages is required',
  view: (body, route) => ({
    model: body.model,
    stream: route.stream,
    system: textOf(body.messages.find((m) => m.role === 'system')?.content),
    last_user_text: textOf([...body.messages].reverse().find((m) => m.role === 'user')?.content),
    tool_results: body.messages.filter((m) => m.role === 'tool').map((m) => textOf(m.content)),
    tools: (body.tools ?? []).map((tool) => tool.function.name),
    prompt_chars: JSON.stringify(body.messages).length,
  }),
  defaultStopReason: () => 'stop',
  answer: (reply, route) =>
    route.stream
      ? { contentType: 'application/x-ndjson', parts: ollamaStream(reply) }
      : { contentType: 'application/json', parts: [JSON.stringify(ollamaResponse(reply))] },
  error: (error) => ({ body: { error: error.error_message }, headers: retryAfterHeader(error.retry_after) }),
  models: () => ({ models: [{ name: 'fake-model:latest', model: 'fake-model:latest' }] }),
};

export class FakeOllama extends FakeModelServer<OllamaRequest> {
  static start(options: FakeServerOptions<OllamaRequest> = {}): Promise<FakeOllama> {
    return FakeModelServer.listen<OllamaRequest, FakeOllama>(
      (server) => new FakeOllama(server, dialect, options),
      options.port,
    );
  }
}
