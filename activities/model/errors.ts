import { ApplicationFailure } from '@temporalio/common';
import { answerTooLargeText, DEFAULT_MAX_ANSWER_BYTES, type ModelSettings } from '../../contracts/model';

/** The failure type of a provider error worth retrying; workflows see it on the ActivityFailure's cause. */
export const MODEL_RETRYABLE_ERROR_TYPE = 'ModelProviderRetryable';

/** Rate limits, request timeouts, conflicts and server faults pass with time; other statuses do not. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * A provider error, already classified. Providers throw it; `callModel` turns a retryable one into a thrown
 * retryable ApplicationFailure (Temporal retries with backoff) and any other into an `error_fallback` result.
 */
export class ProviderError extends Error {
  override readonly name: string = 'ProviderError';

  constructor(
    /** The provider's own message, as the run's error will show it. */
    message: string,
    readonly status: number | undefined,
    readonly retryable: boolean,
    /** How long the provider asked us to wait before the next attempt (its `Retry-After`). */
    readonly retryAfterMs?: number,
    /** The request was longer than the model's context window: a shorter transcript may pass. */
    readonly contextOverflow = false,
  ) {
    super(message);
  }

  /** An HTTP error; without a status it stands for a network failure, which is retryable. */
  static fromStatus(
    status: number | undefined,
    message: string,
    retryAfterMs?: number,
    contextOverflow = false,
  ): ProviderError {
    return new ProviderError(
      message,
      status,
      // A context overflow is the same request refused again, whatever status the provider gave it.
      !contextOverflow && (status === undefined || isRetryableStatus(status)),
      retryAfterMs,
      contextOverflow,
    );
  }
}

/**
 * An answer over the model's `max_answer_bytes`: never retried (the same request would be answered, and paid
 * for, again), so the run ends `failed` with the size and the cap.
 */
export class AnswerTooLargeError extends ProviderError {
  constructor(modelName: string, bytes: number, cap: number) {
    super(answerTooLargeText(modelName, bytes, cap), undefined, false);
  }
}

/** The cap of one answer of this model. */
export function answerCap(settings: ModelSettings): number {
  return settings.max_answer_bytes ?? DEFAULT_MAX_ANSWER_BYTES;
}

/**
 * The failure Temporal retries. A provider's `Retry-After` becomes the next retry's delay, capped at
 * `maxDelayMs` (the retry policy's max interval) so a provider cannot park a run for an hour.
 */
export function retryableModelFailure(
  modelName: string,
  error: ProviderError,
  maxDelayMs?: number,
): ApplicationFailure {
  const status = error.status === undefined ? '' : ` (HTTP ${error.status})`;
  const delayMs =
    error.retryAfterMs === undefined
      ? undefined
      : Math.min(error.retryAfterMs, maxDelayMs ?? Number.POSITIVE_INFINITY);
  return ApplicationFailure.create({
    message: `model ${modelName}${status}: ${error.message}`,
    type: MODEL_RETRYABLE_ERROR_TYPE,
    nonRetryable: false,
    details: [
      {
        status: error.status ?? null,
        ...(error.retryAfterMs !== undefined && { retry_after_ms: error.retryAfterMs }),
      },
    ],
    ...(delayMs !== undefined && { nextRetryDelay: delayMs }),
  });
}

/**
 * Statuses whose `Retry-After` is honoured (RFC 9110 §10.2.3: rate limited, unavailable; and Anthropic's 529,
 * overloaded).
 */
const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503, 529]);

const NUMBER = /^\d+(\.\d+)?$/;

/** Response headers as the provider clients give them: a fetch `Headers`, or a plain record (AWS). */
export type HeadersLike = { get(name: string): string | null } | Record<string, unknown>;

/**
 * The wait a 429/503/529 response asks for, in ms: `retry-after-ms` (OpenAI's own), else `Retry-After` as seconds
 * or an HTTP date. Undefined for other statuses, no header, or a value that is neither.
 */
export function retryAfterMs(
  status: number | undefined,
  headers: HeadersLike | undefined,
  now: number = Date.now(),
): number | undefined {
  if (status === undefined || !RETRY_AFTER_STATUSES.has(status) || !headers) return undefined;
  const millis = header(headers, 'retry-after-ms')?.trim();
  if (millis && NUMBER.test(millis)) return Number(millis);
  const value = header(headers, 'retry-after')?.trim();
  if (!value) return undefined;
  if (NUMBER.test(value)) return Number(value) * 1000;
  // An HTTP date names its weekday and month; Date.parse would read a bare "-1" as a year.
  if (!/[A-Za-z]/.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof headers.get === 'function') {
    const value: unknown = (headers as { get(name: string): unknown }).get(name);
    return typeof value === 'string' ? value : undefined;
  }
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : (headers as Record<string, unknown>)[key];
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}
