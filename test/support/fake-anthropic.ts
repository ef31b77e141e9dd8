/**
 * A fake Anthropic Messages API (fake-model-server.ts): `POST /v1/messages`, streamed as SSE events or plain,
 * the key in `x-api-key`, Anthropic's error body (`{"type": "error", "error": {"type", "message"}}`) with
 * `Retry-After`, its 529 `overloaded_error` included. It refuses what the real API refuses and a client could
 * get wrong: no `max_tokens`, an empty text block, a tool result that answers no tool call of the turn before,
 * with thinking on, a last assistant turn that used tools without its thinking block in front.
 */
import { anthropicMessage, anthropicStream } from '../../activities/model/wire-replies';
import {
  FakeModelServer,
  retryAfterHeader,
  textOf,
  type FakeDialect,
  type FakeServerOptions,
} from './fake-model-server';

export interface AnthropicBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  cache_control?: { type: string };
  [key: string]: unknown;
}

export interface AnthropicRequest {
  model: string;
  max_tokens?: number;
  system?: string | AnthropicBlock[];
  messages: Array<{ role: 'user' | 'assistant'; content: string | AnthropicBlock[] }>;
  tools?: Array<{ name: string; description?: string; input_schema?: unknown; cache_control?: unknown }>;
  stream?: boolean;
  thinking?: unknown;
  [key: string]: unknown;
}

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

function blocks(content: string | AnthropicBlock[]): AnthropicBlock[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : content;
}

/** What the real API refuses of a request this project could send wrong. */
function invalid(body: AnthropicRequest | undefined): string | undefined {
  if (!body || !Array.isArray(body.messages) || body.messages.length === 0) return 'messages: Field required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  const thinking = (body.thinking as { type?: string } | undefined)?.type === 'enabled';
  const lastAssistant = body.messages.map((m) => m.role).lastIndexOf('assistant');
  let offered = new Set<string>();
  for (const [i, message] of body.messages.entries()) {
    const first = blocks(message.content)[0];
    const usesTools = blocks(message.content).some((b) => b.type === 'tool_use');
    if (
      thinking &&
      i === lastAssistant &&
      usesTools &&
      !['thinking', 'redacted_thinking'].includes(first.type)
    ) {
      return (
        `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. ` +
        'When `thinking` is enabled, a final `assistant` message must start with a thinking block.'
      );
    }
    for (const block of blocks(message.content)) {
      if (block.type === 'text' && !block.text) return `messages.${i}: text content blocks must be non-empty`;
      if (block.type === 'tool_result' && !offered.has(block.tool_use_id ?? '')) {
        return `messages.${i}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}`;
      }
    }
    if (message.role === 'assistant') {
      offered = new Set(
        blocks(message.content).flatMap((b) => (b.type === 'tool_use' && b.id ? [b.id] : [])),
      );
    }
  }
  return undefined;
}

const dialect: FakeDialect<AnthropicRequest> = {
  name: 'anthropic',
  route: (method, path, _query, body) =>
    method === 'POST' && path === '/v1/messages' ? { stream: body?.stream === true } : undefined,
  authorized: (request, key) => request.headers['x-api-key'] === key,
  invalid,
  view(body, route) {
    const user = body.messages.filter((m) => m.role === 'user');
    const userBlocks = user.flatMap((m) => blocks(m.content));
    const lastText = [...user]
      .reverse()
      .map((m) => blocks(m.content).filter((b) => b.type === 'text'))
      .find((texts) => texts.length > 0);
    return {
      model: body.model,
      stream: route.stream,
      system: textOf(body.system),
      last_user_text: textOf(lastText ?? []),
      tool_results: userBlocks.filter((b) => b.type === 'tool_result').map((b) => textOf(b.content)),
      tools: (body.tools ?? []).map((tool) => tool.name),
      prompt_chars: JSON.stringify([body.system, body.messages]).length,
    };
  },
  defaultStopReason: (hasToolCalls) => (hasToolCalls ? 'tool_use' : 'end_turn'),
  answer(reply, route, _body, index) {
    const id = `msg_fake_${index}`;
    return route.stream
      ? { contentType: 'text/event-stream', parts: anthropicStream(reply, id) }
      : { contentType: 'application/json', parts: [JSON.stringify(anthropicMessage(reply, id))] };
  },
  error: (error) => ({
    body: {
      type: 'error',
      error: {
        type: error.error_type ?? ERROR_TYPES[error.status] ?? 'api_error',
        message: error.error_message,
      },
    },
    headers: { 'request-id': 'req_fake', ...retryAfterHeader(error.retry_after) },
  }),
};

export class FakeAnthropic extends FakeModelServer<AnthropicRequest> {
  static start(options: FakeServerOptions<AnthropicRequest> = {}): Promise<FakeAnthropic> {
    return FakeModelServer.listen<AnthropicRequest, FakeAnthropic>(
      (server) => new FakeAnthropic(server, dialect, options),
      options.port,
    );
  }
}
