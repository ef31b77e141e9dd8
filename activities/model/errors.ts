import { ApplicationFailure } from '@temporalio/common';

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
  override readonly name = 'ProviderError';

  constructor(
    /** The provider's own message, as the run's error will show it. */
    message: string,
    readonly status: number | undefined,
    readonly retryable: boolean,
  ) {
    super(message);
  }

  /** An HTTP error; without a status it stands for a network failure, which is retryable. */
  static fromStatus(status: number | undefined, message: string): ProviderError {
    return new ProviderError(message, status, status === undefined || isRetryableStatus(status));
  }
}

export function retryableModelFailure(modelName: string, error: ProviderError): ApplicationFailure {
  const status = error.status === undefined ? '' : ` (HTTP ${error.status})`;
  return ApplicationFailure.retryable(
    `model ${modelName}${status}: ${error.message}`,
    MODEL_RETRYABLE_ERROR_TYPE,
    { status: error.status ?? null },
  );
}
