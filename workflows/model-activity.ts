/**
 * The model activity as the agent loop calls it: proxied with the model's own retry policy
 * (`models[].retry`, DEFAULT_MODEL_RETRY when absent). Transient provider errors (429, 5xx, network) are
 * thrown by the activity and retried here, with no attempt cap by default: the agent's wall-clock budget
 * (a timer the workflow races against the loop) is what ends a long outage. 400/401/404 come back as a result.
 */
import { RetryState, TimeoutType, type ActivityOptions, type Duration } from '@temporalio/common';
import {
  ActivityFailure,
  ApplicationFailure,
  proxyActivities,
  TimeoutFailure,
  type RetryPolicy,
} from '@temporalio/workflow';
import type { ProjectActivities } from '../activities';
import {
  DEFAULT_MODEL_RETRY,
  type ModelCallInput,
  type ModelCallResult,
  type ModelRetrySettings,
  type ModelSettings,
} from '../contracts/model';

/** One attempt may stream for this long; a stuck one is noticed sooner through its heartbeats. */
const MODEL_START_TO_CLOSE_TIMEOUT = '10 minutes';

/** The failure type when the retry budget ran out while an attempt was still waiting for an answer. */
export const MODEL_RETRY_TIMEOUT_TYPE = 'ModelRetryTimeout';

/** A model call; `summary` names it in the Web UI (the model and the turn). */
export type CallModel = (input: ModelCallInput, summary?: string) => Promise<ModelCallResult>;

/**
 * `callModel`, proxied for `model`'s retry policy. With `max_retry_seconds` the activity gets that
 * schedule-to-close timeout, and giving up surfaces the provider's last message, not a bare timeout.
 */
export function modelActivity(model: ModelSettings, heartbeatTimeout: Duration): CallModel {
  const retry = model.retry ?? DEFAULT_MODEL_RETRY;
  const options: ActivityOptions = {
    startToCloseTimeout: MODEL_START_TO_CLOSE_TIMEOUT,
    heartbeatTimeout,
    ...(retry.max_retry_seconds !== undefined && {
      scheduleToCloseTimeout: secondsToMs(retry.max_retry_seconds),
    }),
    retry: modelRetryPolicy(retry),
  };
  const { callModel } = proxyActivities<ProjectActivities>(options);
  return async (input, summary) => {
    try {
      // The summary is the call's metadata for the Web UI: replay does not compare it.
      return await (summary === undefined
        ? callModel(input)
        : callModel.executeWithOptions({ ...options, summary }, [input]));
    } catch (err) {
      throw withProviderCause(err, model.name, retry);
    }
  };
}

/** Temporal's retry policy for the settings; values a caller could get wrong are made valid, not refused. */
export function modelRetryPolicy(retry: ModelRetrySettings = DEFAULT_MODEL_RETRY): RetryPolicy {
  const initial = positiveMs(retry.initial_interval_seconds, DEFAULT_MODEL_RETRY.initial_interval_seconds);
  return {
    initialInterval: initial,
    backoffCoefficient: Math.max(1, retry.backoff_coefficient),
    // The server refuses a maximum below the initial interval.
    maximumInterval: Math.max(
      initial,
      positiveMs(retry.max_interval_seconds, DEFAULT_MODEL_RETRY.max_interval_seconds),
    ),
    // Unset (0) means no cap.
    ...(retry.max_attempts !== undefined && { maximumAttempts: Math.max(1, Math.floor(retry.max_attempts)) }),
  };
}

/**
 * When the retries ran out of time the server ends the activity in one of two ways: it declines a retry that
 * would pass the deadline (the last attempt's failure, retry state TIMEOUT), or the deadline passes while an
 * attempt runs (a schedule-to-close TimeoutFailure, with the last failed attempt as its cause). Either way the
 * run's error should read as the provider's message, not "activity ScheduleToClose timeout", so the
 * ActivityFailure is rebuilt with that message as its cause. Anything else (cancellation included) passes
 * through untouched.
 */
export function withProviderCause(err: unknown, modelName: string, retry: ModelRetrySettings): unknown {
  if (!(err instanceof ActivityFailure) || retry.max_retry_seconds === undefined) return err;
  const timeout = err.cause instanceof TimeoutFailure ? err.cause : undefined;
  const outOfTime =
    err.retryState === RetryState.TIMEOUT || timeout?.timeoutType === TimeoutType.SCHEDULE_TO_CLOSE;
  if (!outOfTime) return err;
  const last = timeout ? lastAttemptFailure(timeout) : err.cause;
  const budget = `max_retry_seconds: ${retry.max_retry_seconds} s`;
  const cause = last?.message
    ? ApplicationFailure.create({
        message: `${last.message} (gave up retrying, ${budget})`,
        type: last instanceof ApplicationFailure ? (last.type ?? undefined) : undefined,
        nonRetryable: true,
      })
    : ApplicationFailure.nonRetryable(`model ${modelName}: no answer (${budget})`, MODEL_RETRY_TIMEOUT_TYPE);
  return new ActivityFailure(
    err.message,
    err.activityType,
    err.activityId,
    err.retryState,
    err.identity,
    cause,
  );
}

/**
 * The failure a TimeoutFailure carries as its cause. SDK 1.24's failure converter drops a TimeoutFailure's
 * cause, so it is read from the failure as received (plain data: its message and type).
 */
function lastAttemptFailure(timeout: TimeoutFailure): { message: string } | undefined {
  if (timeout.cause) return timeout.cause;
  const received = timeout.failure?.cause;
  if (!received?.message) return undefined;
  return ApplicationFailure.create({
    message: received.message,
    type: received.applicationFailureInfo?.type ?? undefined,
  });
}

function secondsToMs(seconds: number): number {
  return Math.max(1, Math.round(seconds * 1000));
}

function positiveMs(seconds: number, fallback: number): number {
  return secondsToMs(Number.isFinite(seconds) && seconds > 0 ? seconds : fallback);
}
