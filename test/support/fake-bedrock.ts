/**
 * A fake Bedrock runtime (fake-model-server.ts): `POST /model/<id>/converse` and `/converse-stream`, the latter
 * in AWS's binary event stream; requests signed with SigV4 (the signature is not checked: the access key id
 * in `Credential=` is the key) or carrying a Bedrock API key as a bearer token; errors as AWS sends them
 * (`x-amzn-ErrorType` and `{"message"}`). It refuses what Converse refuses and a client could get wrong: a
 * conversation whose roles do not alternate; with Claude's thinking on, a tool-using last turn without its
 * reasoning in front.
 */
import { bedrockConverse, bedrockStream } from '../../activities/model/wire-replies';
import {
  FakeModelServer,
  retryAfterHeader,
  textOf,
  type FakeDialect,
  type FakeServerOptions,
} from './fake-model-server';

export interface ConverseBlock {
  text?: string;
  toolUse?: { toolUseId: string; name: string; input: unknown };
  toolResult?: { toolUseId: string; content: Array<{ text?: string; json?: unknown }>; status?: string };
  [key: string]: unknown;
}

export interface ConverseRequest {
  messages: Array<{ role: 'user' | 'assistant'; content: ConverseBlock[] }>;
  system?: ConverseBlock[];
  toolConfig?: { tools: Array<{ toolSpec?: { name: string } }> };
  inferenceConfig?: Record<string, unknown>;
  additionalModelRequestFields?: Record<string, unknown>;
  [key: string]: unknown;
}

const ROUTE = /^\/model\/([^/]+)\/(converse|converse-stream)$/;

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'ValidationException',
  401: 'UnrecognizedClientException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

function invalid(body: ConverseRequest | undefined): string | undefined {
  if (!body || !Array.isArray(body.messages) || body.messages.length === 0)
    return 'messages: must not be empty';
  const alternates = body.messages.every(
    (message, i) => message.role === (i % 2 === 0 ? 'user' : 'assistant'),
  );
  if (!alternates) {
    return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
  }
  // Claude on Bedrock with thinking on: a tool-using last assistant turn starts with its reasoning.
  const thinking =
    (body.additionalModelRequestFields?.thinking as { type?: string } | undefined)?.type === 'enabled';
  const last = [...body.messages].reverse().find((message) => message.role === 'assistant');
  if (thinking && last && last.content.some((block) => block.toolUse) && !last.content[0]?.reasoningContent) {
    return 'The model returned the following errors: messages: Expected `thinking` or `redacted_thinking`, but found `text`.';
  }
  return undefined;
}

const dialect: FakeDialect<ConverseRequest> = {
  name: 'bedrock',
  route(method, path) {
    const match = ROUTE.exec(path);
    if (method !== 'POST' || !match) return undefined;
    return { stream: match[2] === 'converse-stream', model: decodeURIComponent(match[1]) };
  },
  authorized: (request, key) =>
    request.authorization === `Bearer ${key}` ||
    (request.authorization ?? '').startsWith(`AWS4-HMAC-SHA256 Credential=${key}/`),
  invalid,
  view(body, route) {
    const blocks = body.messages.flatMap((message) => (message.role === 'user' ? message.content : []));
    const texts = blocks.filter((block) => typeof block.text === 'string');
    return {
      model: route.model ?? '',
      stream: route.stream,
      system: textOf(body.system ?? []),
      last_user_text: texts[texts.length - 1]?.text ?? '',
      tool_results: blocks.flatMap((block) => (block.toolResult ? [textOf(block.toolResult.content)] : [])),
      tools: (body.toolConfig?.tools ?? []).flatMap((tool) => (tool.toolSpec ? [tool.toolSpec.name] : [])),
      prompt_chars: JSON.stringify([body.system, body.messages]).length,
    };
  },
  defaultStopReason: (hasToolCalls) => (hasToolCalls ? 'tool_use' : 'end_turn'),
  answer: (reply, route) =>
    route.stream
      ? { contentType: 'application/vnd.amazon.eventstream', parts: bedrockStream(reply) }
      : { contentType: 'application/json', parts: [JSON.stringify(bedrockConverse(reply))] },
  error: (error) => {
    const type = error.error_type ?? ERROR_TYPES[error.status] ?? 'InternalServerException';
    return {
      body: { message: error.error_message },
      headers: {
        'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
        'x-amzn-requestid': 'fake-request',
        ...retryAfterHeader(error.retry_after),
      },
    };
  },
};

export class FakeBedrock extends FakeModelServer<ConverseRequest> {
  static start(options: FakeServerOptions<ConverseRequest> = {}): Promise<FakeBedrock> {
    return FakeModelServer.listen<ConverseRequest, FakeBedrock>(
      (server) => new FakeBedrock(server, dialect, options),
      options.port,
    );
  }
}
