import { Context } from '@temporalio/activity';
import { ProviderError } from './errors';

export const HEARTBEAT_INTERVAL_MS = 1000;

/** The current activity's context, or undefined when the code runs outside an activity (plain unit tests). */
export function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    return undefined;
  }
}

/** The 1-based attempt number of the current activity; 1 outside an activity. */
export function currentAttempt(): number {
  return currentActivity()?.info.attempt ?? 1;
}

/**
 * Runs `work` while heartbeating every second, and hands it a signal that aborts when the activity is cancelled
 * (or times out) or `timeoutMs` passes. Settles as soon as that happens, even if `work` ignores the signal: a
 * cancellation rethrows the activity's own CancelledFailure, the timeout a retryable ProviderError.
 */
export async function whileHeartbeating<T>(
  work: (signal: AbortSignal) => Promise<T>,
  timeoutMs?: number,
): Promise<T> {
  const activity = currentActivity();
  const controller = new AbortController();
  const onCancel = (): void => controller.abort(activity?.cancellationSignal.reason);
  if (activity?.cancellationSignal.aborted) onCancel();
  activity?.cancellationSignal.addEventListener('abort', onCancel, { once: true });
  const timer =
    timeoutMs === undefined ? undefined : setTimeout(() => controller.abort(timedOut(timeoutMs)), timeoutMs);
  const beat = activity ? setInterval(() => activity.heartbeat(), HEARTBEAT_INTERVAL_MS) : undefined;

  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(controller.signal.reason);
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  const running = work(controller.signal);
  // Whichever loses the race settles unobserved; its outcome is already accounted for.
  running.catch(() => undefined);
  aborted.catch(() => undefined);
  try {
    return await Promise.race([running, aborted]);
  } catch (err) {
    throw controller.signal.aborted ? controller.signal.reason : err;
  } finally {
    clearInterval(beat);
    clearTimeout(timer);
    activity?.cancellationSignal.removeEventListener('abort', onCancel);
    if (onAbort) controller.signal.removeEventListener('abort', onAbort);
  }
}

function timedOut(timeoutMs: number): ProviderError {
  return new ProviderError(
    `no complete answer within ${timeoutMs / 1000} s (request_timeout_seconds)`,
    undefined,
    true,
  );
}
