/**
 * What an activity asks of its context (the SDK's activity Context): heartbeats paced by the heartbeat
 * timeout the workflow declared, cancellation, the attempt number. Outside an activity (code called directly,
 * unit tests) nothing beats and nothing cancels.
 */
import { Context } from '@temporalio/activity';

/**
 * Beats per declared heartbeat timeout. With three, two beats in a row may be lost or late before the server
 * gives the attempt up; the worker sends each one within a second (RECOVERY_TUNING in worker/worker.ts).
 */
const BEATS_PER_TIMEOUT = 3;

/**
 * How often an activity with this heartbeat timeout beats. Derived, so the interval follows whatever timeout
 * a workflow declares; undefined when it declares none (a local activity, code outside an activity).
 */
export function heartbeatIntervalMs(heartbeatTimeoutMs: number | undefined): number | undefined {
  return heartbeatTimeoutMs !== undefined && heartbeatTimeoutMs > 0
    ? heartbeatTimeoutMs / BEATS_PER_TIMEOUT
    : undefined;
}

function currentActivity(): Context | undefined {
  try {
    return Context.current();
  } catch {
    // No activity context: called directly, not by a worker.
    return undefined;
  }
}

/** The 1-based attempt number of the current activity; 1 outside an activity. */
export function currentAttempt(): number {
  return currentActivity()?.info.attempt ?? 1;
}

// Per activity: what its heartbeats carry (a retried attempt reads the last of them).
const heartbeatDetails = new WeakMap<Context, () => unknown>();

/**
 * From now on every heartbeat of the current activity (those of `whileHeartbeating`, nested ones included)
 * carries `details()`, and one is sent now: a plain beat would otherwise replace what a retry resumes from.
 */
export function keepHeartbeatDetails(details: () => unknown): void {
  const activity = currentActivity();
  if (activity === undefined) return;
  heartbeatDetails.set(activity, details);
  activity.heartbeat(details());
}

export interface HeartbeatingOptions {
  /** Ends the wait too, e.g. `AbortSignal.timeout(ms)` for a deadline of the caller's own. */
  signal?: AbortSignal;
}

/**
 * Runs `work` while the activity heartbeats, and hands it a signal that aborts when the activity is cancelled
 * (or times out) or `options.signal` aborts. Settles as soon as that happens, even if `work` ignores the
 * signal, by rethrowing the abort reason: the activity's own CancelledFailure, or `options.signal`'s reason.
 */
export async function whileHeartbeating<T>(
  work: (signal: AbortSignal) => Promise<T>,
  options: HeartbeatingOptions = {},
): Promise<T> {
  // Held, not looked up again in the timer: a timer need not run in the activity's async context.
  const activity = currentActivity();
  const sources = [activity?.cancellationSignal, options.signal].filter((s) => s !== undefined);
  const signal = AbortSignal.any(sources);
  const intervalMs = heartbeatIntervalMs(activity?.info.heartbeatTimeoutMs);
  const beats =
    activity && intervalMs !== undefined
      ? setInterval(() => activity.heartbeat(heartbeatDetails.get(activity)?.()), intervalMs)
      : undefined;

  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  const running = work(signal);
  // Whichever loses the race settles unobserved; its outcome is already accounted for.
  running.catch(() => undefined);
  aborted.catch(() => undefined);
  try {
    return await Promise.race([running, aborted]);
  } catch (err) {
    throw signal.aborted ? signal.reason : err;
  } finally {
    clearInterval(beats);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/** The workflow the current activity runs for, with its attempt; undefined outside an activity. */
export function currentWorkflowCall(): { workflowId: string; attempt: number } | undefined {
  const activity = currentActivity();
  const workflowId = activity?.info.workflowExecution?.workflowId;
  if (activity === undefined || workflowId === undefined) return undefined;
  return { workflowId, attempt: activity.info.attempt };
}
