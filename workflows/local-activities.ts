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
 * under the patch (asked when a failure arrives, so a history without one records nothing).
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

/** A local activity's rejection as a regular activity's would be: an `ActivityFailure` around the failure. */
export function asActivityFailure(activityType: string, err: unknown): unknown {
  if (err instanceof ActivityFailure || err instanceof CancelledFailure || !(err instanceof TemporalFailure))
    return err;
  if (!patched(LOCAL_ACTIVITY_FAILURE_PATCH)) return err;
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
        const rethrow = (err: unknown): never => {
          throw asActivityFailure(activityType, err);
        };
        const proxied = (...args: unknown[]) => call(...args).catch(rethrow);
        proxied.executeWithOptions = (override: LocalActivityOptions, args: unknown[]) =>
          call.executeWithOptions(override, args).catch(rethrow);
        return proxied;
      },
    },
  );
  return wrapped as LocalActivityInterfaceFor<A>;
}
