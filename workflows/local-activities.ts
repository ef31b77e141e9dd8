/**
 * Local activities whose failures look like regular activities' failures. The SDK rejects a regular activity's
 * failed call with an `ActivityFailure` whose cause is what the activity threw; a local activity's it rejects with
 * the bare cause (an `ApplicationFailure`, a `TimeoutFailure`). Workflow code that handles "an activity failed" as
 * `err instanceof ActivityFailure` then lets a local activity's failure through, and the workflow fails on an error
 * it meant to handle: a subagent's `ls` refused by a host that does not hold the run's workspace (WorkspaceMoved)
 * ended the subagent instead of being sent to the workspace's home. Every local activity in workflows/ is made
 * here (lint holds it), and its failure wrapped as an `ActivityFailure` around the bare cause.
 *
 * Histories recorded before this may hold such a failure, which then failed the workflow: the wrap is taken only
 * under a patch. It is asked when the local activity is scheduled (`local-activity-wrap`, once an execution),
 * not when its failure arrives: a replay may hand workflow code a local activity's result in another activation
 * than the recording did (the many-hosts test saw it), and a patch asked there then answers otherwise than it was
 * recorded (a nondeterminism error). `local-activity-failure`, asked when a failure arrived, is what histories
 * recorded between the two hold.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  patched,
  proxyLocalActivities,
  TemporalFailure,
  TimeoutFailure,
  type LocalActivityInterfaceFor,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import { RetryState } from '@temporalio/common';

export const LOCAL_ACTIVITY_FAILURE_PATCH = 'local-activity-failure';
export const LOCAL_ACTIVITY_WRAP_PATCH = 'local-activity-wrap';

/**
 * A local activity's rejection as a regular activity's would be: an `ActivityFailure` around the failure.
 * `wrap`: what `local-activity-wrap` said when the activity was scheduled (else the older patch is asked now).
 */
export function asActivityFailure(activityType: string, err: unknown, wrap = false): unknown {
  if (err instanceof ActivityFailure || err instanceof CancelledFailure || !(err instanceof TemporalFailure))
    return err;
  if (!wrap && !patched(LOCAL_ACTIVITY_FAILURE_PATCH)) return err;
  return new ActivityFailure(
    // The cause's own words: a workflow that ends on the failure says what went wrong, as it did before.
    err.message,
    activityType,
    undefined,
    err instanceof TimeoutFailure
      ? RetryState.TIMEOUT
      : err instanceof ApplicationFailure && err.nonRetryable
        ? RetryState.NON_RETRYABLE_FAILURE
        : RetryState.MAXIMUM_ATTEMPTS_REACHED,
    undefined,
    err,
  );
}

type Untyped = Record<string, (...args: unknown[]) => Promise<unknown>>;

/** `proxyLocalActivities`, its calls' failures made `ActivityFailure`s (see the file's comment). */
export function localActivities<A extends object>(
  options: LocalActivityOptions,
): LocalActivityInterfaceFor<A> {
  const inner = proxyLocalActivities<Untyped>(options);
  const wrapped = new Proxy(
    {},
    {
      get(_, activityType) {
        if (typeof activityType !== 'string') return undefined;
        const call = inner[activityType];
        // Asked as the call is made, in the workflow's own order: see the file's comment.
        const rethrowing = () => {
          const wrap = patched(LOCAL_ACTIVITY_WRAP_PATCH);
          return (err: unknown): never => {
            throw asActivityFailure(activityType, err, wrap);
          };
        };
        const proxied = (...args: unknown[]) => {
          const rethrow = rethrowing();
          return call(...args).catch(rethrow);
        };
        proxied.executeWithOptions = (override: LocalActivityOptions, args: unknown[]) => {
          const rethrow = rethrowing();
          return call.executeWithOptions(override, args).catch(rethrow);
        };
        return proxied;
      },
    },
  );
  return wrapped as LocalActivityInterfaceFor<A>;
}
