/**
 * What the provider clients behind LangChain throw, sorted into ProviderError (errors.ts): an HTTP status
 * (retryable or not, with the wait the provider asked for), a network failure (retryable), a malformed
 * response (not), or a bug of ours (rethrown as is). One reader for every provider: the clients differ only in
 * where they keep the status, the headers and the provider's own message, and this walks them all.
 *
 *   status:  `status` (OpenAI, Anthropic, Google), `status_code` (Ollama), `$metadata.httpStatusCode` (AWS)
 *   headers: `headers` (a fetch Headers: OpenAI, Anthropic), `$response.headers` (AWS)
 *   message: the body's `error.message` (OpenAI, Azure), `error.error.message` (Anthropic), `error` as text
 *            (Ollama), the exception's own message (AWS, Google: its prefix taken off)
 *   wait:    `Retry-After` / `retry-after-ms`, or Google's RetryInfo `retryDelay` in the error's details
 */
import { ProviderError, retryAfterMs, type HeadersLike } from './errors';

const NETWORK_ERROR_NAMES: ReadonlySet<string> = new Set([
  'APIConnectionError',
  'APIConnectionTimeoutError',
  'TimeoutError',
  'ConnectTimeoutError',
  'HeadersTimeoutError',
  'BodyTimeoutError',
  'SocketError',
]);
const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * Anthropic's error types, for an error event inside a stream that already started (it has no HTTP status of
 * its own): the status the same error has as a response.
 */
const ERROR_TYPE_STATUSES: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

/**
 * How providers say a request is longer than the model's context window: the run may then summarize and try
 * again (or fail saying so), where another 400 only fails.
 */
const CONTEXT_OVERFLOW_PATTERNS: readonly RegExp[] = [
  /context[_ ]length[_ ]exceeded/i, // OpenAI's code
  /maximum context length/i, // OpenAI, vLLM
  /prompt is too long/i, // Anthropic
  /input is too long/i, // Bedrock
  /too many (input )?tokens/i, // Bedrock
  /exceeds the (maximum|max) (number of )?(input )?tokens/i, // Gemini
  /context window/i,
];

interface ErrorLike {
  name?: unknown;
  message?: unknown;
  type?: unknown;
  code?: unknown;
  status?: unknown;
  status_code?: unknown;
  statusText?: unknown;
  error?: unknown;
  errorDetails?: unknown;
  cause?: unknown;
  headers?: unknown;
  $metadata?: { httpStatusCode?: unknown };
  $response?: { headers?: unknown };
}

/** Sorts what a provider client and LangChain threw; `endpoint` names where the request went. */
export function classifyProviderError(err: unknown, endpoint: string): unknown {
  const chain = causeChain(err);
  const overflow = chain.some(isContextOverflow);
  const withStatus = chain.find((e) => statusOf(e) !== undefined);
  if (withStatus) {
    const status = statusOf(withStatus) as number;
    return ProviderError.fromStatus(
      status,
      providerMessage(withStatus, status),
      retryAfterMs(status, headersOf(withStatus)) ?? retryInfoMs(status, withStatus),
      overflow,
    );
  }
  const network = chain.find(isNetworkError);
  if (network) {
    const code = chain.map((e) => e.code).find((c) => typeof c === 'string');
    return new ProviderError(
      `cannot reach ${endpoint}: ${String(network.message)}${code ? ` (${code})` : ''}`,
      undefined,
      true,
    );
  }
  const inStream = chain.find((e) => e.error !== null && typeof e.error === 'object');
  if (inStream) {
    // An error event inside a stream that already started: the provider failed mid-answer.
    const body = inStream.error as ErrorLike;
    const inner = (body.error !== null && typeof body.error === 'object' ? body.error : body) as ErrorLike;
    const status =
      typeof body.code === 'number'
        ? body.code
        : typeof inner.type === 'string'
          ? ERROR_TYPE_STATUSES[inner.type]
          : undefined;
    return ProviderError.fromStatus(
      status,
      typeof inner.message === 'string' ? inner.message : String(inStream.message),
      undefined,
      overflow,
    );
  }
  if (err instanceof SyntaxError || err instanceof TypeError) {
    return new ProviderError(`malformed response from ${endpoint}: ${err.message}`, undefined, false);
  }
  return err;
}

function causeChain(err: unknown): ErrorLike[] {
  const chain: ErrorLike[] = [];
  let current: unknown = err;
  while (current !== null && typeof current === 'object' && chain.length < 6) {
    chain.push(current as ErrorLike);
    current = (current as ErrorLike).cause;
  }
  return chain;
}

function statusOf(e: ErrorLike): number | undefined {
  const status = e.status ?? e.status_code ?? e.$metadata?.httpStatusCode;
  return typeof status === 'number' && status >= 400 && status <= 599 ? status : undefined;
}

function headersOf(e: ErrorLike): HeadersLike | undefined {
  const headers = e.headers ?? e.$response?.headers;
  return headers !== null && typeof headers === 'object' ? (headers as HeadersLike) : undefined;
}

function isNetworkError(e: ErrorLike): boolean {
  const name = typeof e.name === 'string' ? e.name : '';
  const constructorName = (e as { constructor?: { name?: string } }).constructor?.name ?? '';
  return (
    NETWORK_ERROR_NAMES.has(name) ||
    NETWORK_ERROR_NAMES.has(constructorName) ||
    (typeof e.code === 'string' && (NETWORK_ERROR_CODES.has(e.code) || e.code.startsWith('UND_ERR_'))) ||
    (name === 'TypeError' && (e.message === 'fetch failed' || e.message === 'terminated'))
  );
}

function isContextOverflow(e: ErrorLike): boolean {
  if (e.name === 'ContextOverflowError') return true;
  const body = e.error as ErrorLike | undefined;
  if (body && typeof body === 'object' && body.code === 'context_length_exceeded') return true;
  const message = typeof e.message === 'string' ? e.message : '';
  return CONTEXT_OVERFLOW_PATTERNS.some((pattern) => pattern.test(message));
}

/** The provider's own message, without the client's decorations (status prefix, SDK name, help links). */
function providerMessage(e: ErrorLike, status: number): string {
  const body = e.error;
  if (typeof body === 'string' && body !== '') return body;
  if (body !== null && typeof body === 'object') {
    const { message, error: inner } = body as ErrorLike;
    if (typeof message === 'string' && message !== '') return message;
    const innerMessage = (inner as ErrorLike | undefined)?.message;
    if (typeof innerMessage === 'string' && innerMessage !== '') return innerMessage;
  }
  let message = String(e.message ?? '');
  // Google's client: `[GoogleGenerativeAI Error]: Error fetching from <url>: [429 Too Many Requests] text`.
  const google = /^\[GoogleGenerativeAI Error\]: .*?\[\d{3}[^\]]*\] ?([\s\S]*)$/.exec(message);
  if (google) {
    message = google[1].trim();
    // …and the error's details after it, as JSON.
    const details = Array.isArray(e.errorDetails) ? JSON.stringify(e.errorDetails) : undefined;
    if (details && message.endsWith(details)) message = message.slice(0, -details.length).trim();
  }
  // LangChain appends a help link to some errors it passes on.
  message = message.replace(/\s*Troubleshooting URL: \S+\s*$/, '');
  return message.startsWith(`${status} `) ? message.slice(`${status} `.length) : message || `HTTP ${status}`;
}

/** Google's wait: a `google.rpc.RetryInfo` detail with `retryDelay: "30s"` (a 429 or 503). */
function retryInfoMs(status: number, e: ErrorLike): number | undefined {
  if (!Array.isArray(e.errorDetails)) return undefined;
  for (const detail of e.errorDetails as Array<Record<string, unknown>>) {
    const delay = detail?.retryDelay;
    if (typeof delay !== 'string') continue;
    const seconds = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim());
    if (seconds) return retryAfterMs(status, { 'retry-after': seconds[1] });
  }
  return undefined;
}
