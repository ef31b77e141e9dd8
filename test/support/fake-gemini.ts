/**
 * A fake Gemini API (fake-model-server.ts): `POST /v1beta/models/<model>:generateContent` and
 * `:streamGenerateContent?alt=sse`, the key in `x-goog-api-key`, Google's error body (`{"error": {"code",
 * "message", "status", "details"}}`) with the wait as a `google.rpc.RetryInfo` detail. It refuses what the
 * real API refuses and a client could get wrong: function responses that do not answer the function calls of
 * the turn before, one for one.
 */
import { geminiResponse, geminiStream } from '../../activities/model/wire-replies';
import { FakeModelServer, textOf, type FakeDialect, type FakeServerOptions } from './fake-model-server';

export interface GeminiPart {
  text?: string;
  functionCall?: { name: string; args?: unknown };
  functionResponse?: { name: string; response?: unknown };
  [key: string]: unknown;
}

export interface GeminiRequest {
  contents: Array<{ role: string; parts: GeminiPart[] }>;
  systemInstruction?: { parts: GeminiPart[] };
  tools?: Array<{ functionDeclarations?: Array<{ name: string }> }>;
  generationConfig?: Record<string, unknown>;
  [key: string]: unknown;
}

const ROUTE = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

const STATUSES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function invalid(body: GeminiRequest | undefined): string | undefined {
  if (!body || !Array.isArray(body.contents) || body.contents.length === 0)
    return '* contents: must not be empty';
  let calls = 0;
  for (const content of body.contents) {
    const responses = content.parts.filter((part) => part.functionResponse).length;
    if (responses > 0 && responses !== calls) {
      return (
        'Please ensure that the number of function response parts is equal to the number of function call ' +
        'parts of the function call turn.'
      );
    }
    calls = content.parts.filter((part) => part.functionCall).length;
  }
  return undefined;
}

const dialect: FakeDialect<GeminiRequest> = {
  name: 'google',
  route(method, path, query) {
    const match = ROUTE.exec(path);
    if (method !== 'POST' || !match) return undefined;
    return { stream: match[2] === 'streamGenerateContent' && query.alt === 'sse', model: match[1] };
  },
  authorized: (request, key) => request.headers['x-goog-api-key'] === key || request.query.key === key,
  invalid,
  view(body, route) {
    const parts = body.contents.flatMap((content) => content.parts);
    const userTexts = body.contents
      .filter((content) => content.role === 'user')
      .flatMap((content) => content.parts.filter((part) => typeof part.text === 'string'));
    return {
      model: route.model ?? '',
      stream: route.stream,
      system: textOf(body.systemInstruction?.parts ?? []),
      last_user_text: userTexts[userTexts.length - 1]?.text ?? '',
      tool_results: parts.flatMap((part) =>
        part.functionResponse ? [JSON.stringify(part.functionResponse.response)] : [],
      ),
      tools: (body.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((f) => f.name)),
      prompt_chars: JSON.stringify([body.systemInstruction, body.contents]).length,
    };
  },
  defaultStopReason: () => 'STOP',
  answer: (reply, route) =>
    route.stream
      ? { contentType: 'text/event-stream', parts: geminiStream(reply) }
      : { contentType: 'application/json', parts: [JSON.stringify(geminiResponse(reply))] },
  error: (error) => ({
    body: {
      error: {
        code: error.status,
        message: error.error_message,
        status: error.error_type ?? STATUSES[error.status] ?? 'UNKNOWN',
        ...(error.retry_after !== undefined && {
          details: [
            { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${error.retry_after}s` },
          ],
        }),
      },
    },
    headers: {},
  }),
};

export class FakeGemini extends FakeModelServer<GeminiRequest> {
  static start(options: FakeServerOptions<GeminiRequest> = {}): Promise<FakeGemini> {
    return FakeModelServer.listen<GeminiRequest, FakeGemini>(
      (server) => new FakeGemini(server, dialect, options),
      options.port,
    );
  }
}
