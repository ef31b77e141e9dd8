/**
 * Local activities whose failures look like regular activities' failures. The SDK rejects a regular activity's
 * failed call with an `ActivityFailure` whose cause is what the activity threw; a local activity's it rejects with
 * the bare cause (an `ApplicationFailure`, a `TimeoutFailure`). Workflow code that handles "an activity failed" as
 * `err instanceof ActivityFailure` then lets a local activity's failure through, and the workflow fails on an error
 * it meant to handle: a subagent's `ls` refused by a host that does not hold the run's workspace (WorkspaceMoved)
 * ended the subagent instead of being sent to the workspace's home. Every local activity in workflows/ is made
 * here (lint holds it), and its failure wrapped as an `ActivityFailure` around the bare cause.
 *
 * No patch guards the wrap. Asking one when a failure arrives is unsound: a replay may hand workflow code a local
 * activity's result in another activation than the recording did (the many-hosts test saw it), and `patched()`
 * or `deprecatePatch()` asked there then records or expects its marker and search-attribute update elsewhere (a
 * nondeterminism error); asking one as every local activity is scheduled costs every execution a marker and an
 * update. What goes without a patch: a workflow that failed on such a failure before the wrap replays otherwise
 * (a query on it in retention fails), and one that recorded the short-lived `local-activity-failure` marker
 * (docs/patches.md).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  CancelledFailure,
  proxyLocalActivities,
  TemporalFailure,
  TimeoutFailure,
  type LocalActivityInterfaceFor,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import { RetryState } from '@temporalio/common';

/** A local activity's rejection as a regular activity's would be: an `ActivityFailure` around the failure. */
export function asActivityFailure(activityType: string, err: unknown): unknown {
  if (err instanceof ActivityFailure || err instanceof CancelledFailure || !(err instanceof TemporalFailure))
    return err;
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
