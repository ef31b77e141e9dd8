/**
 * Killed workers told from slow ones in seconds, and what they were running failed at once: recovery in
 * seconds without false interruptions.
 *
 * An activity's own heartbeat comes from the worker's event loop, which a saturated host holds up for seconds:
 * an at-most-once call (bash, an append) therefore waits 10 s of silence before its attempt counts as lost, and a
 * kill cost a run that long. The worker's heartbeat (ListWorkers, worker/runtime.ts) comes from the SDK's core,
 * a thread of its own that a busy event loop does not hold up. Every project worker watches its task queue's:
 * a worker whose latest heartbeat has not changed for `silenceMs` of this worker's time (no clock compared
 * between machines) is taken for dead, and each activity attempt the server says it holds is failed by id,
 * with `WorkerLost`: the workflow learns of it as of any failed attempt (a retryable call is retried, an
 * at-most-once call reported interrupted, a home's workspace asked about) seconds sooner than the timeout.
 *
 * Only a worker beating lately counts (one long dead when the watch began is left to the timeouts); one that said it stopped is left alone (its shutdown settles its calls); each silence once.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { LOST_WORKER_SILENCE_MS, SilenceTracker, taskQueueHeartbeats } from '../contracts/worker-heartbeats';
import { WORKER_LOST_FAILURE } from '../contracts/workspace';

/** How often the heartbeats are read. */
const POLL_MS = 500;

const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

export interface LostWorkerWatchOptions {
  client: Client;
  namespace: string;
  taskQueue: string;
  /** This worker's identity: never taken for dead by itself. */
  identity: string;
  silenceMs?: number;
  say?: (line: string) => void;
}

/** The running executions of `taskQueue` (workflows on it; their activities may run on a home's queue). */
async function* runningExecutions(
  client: Client,
  taskQueue: string,
): AsyncGenerator<{ workflowId: string; runId: string }> {
  if (!/^[^'"\\]*$/.test(taskQueue)) return;
  const query = `TaskQueue = '${taskQueue}' AND ExecutionStatus = 'Running'`;
  for await (const execution of client.workflow.list({ query })) {
    yield { workflowId: execution.workflowId, runId: execution.runId };
  }
}

/** Executions described at once while looking for a lost worker's attempts. */
const DESCRIBE_AT_ONCE = 8;

/** Fails every started attempt the server says `lost` holds; returns how many. */
export async function failAttemptsOf(
  client: Client,
  namespace: string,
  taskQueue: string,
  lost: string,
): Promise<number> {
  const failure = ApplicationFailure.create({
    type: WORKER_LOST_FAILURE,
    message: `its worker ${lost} was lost (no heartbeat for ${LOST_WORKER_SILENCE_MS / 1000} s)`,
  });
  const failHeldBy = async (execution: { workflowId: string; runId: string }): Promise<number> => {
    const described = await client.workflowService
      .describeWorkflowExecution({ namespace, execution })
      .catch(() => undefined);
    let failed = 0;
    for (const pending of described?.pendingActivities ?? []) {
      if (pending.state !== STARTED || pending.lastWorkerIdentity !== lost || !pending.activityId) continue;
      const done = await client.activity
        .fail({ ...execution, activityId: pending.activityId }, failure)
        .then(() => true)
        // Finished meanwhile, or failed by another watcher: nothing to do.
        .catch(() => false);
      if (done) failed += 1;
    }
    return failed;
  };
  let failed = 0;
  let batch: Promise<number>[] = [];
  for await (const execution of runningExecutions(client, taskQueue)) {
    batch.push(failHeldBy(execution));
    if (batch.length < DESCRIBE_AT_ONCE) continue;
    failed += (await Promise.all(batch)).reduce((a, b) => a + b, 0);
    batch = [];
  }
  return failed + (await Promise.all(batch)).reduce((a, b) => a + b, 0);
}

/** Watches the task queue's workers until `stop`. */
export function watchLostWorkers(options: LostWorkerWatchOptions): { stop(): Promise<void> } {
  const { client, namespace, taskQueue } = options;
  const tracker = new SilenceTracker(options.identity, options.silenceMs ?? LOST_WORKER_SILENCE_MS);
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      const beats = await taskQueueHeartbeats(client, namespace, taskQueue).catch(() => undefined);
      for (const lost of tracker.observe(beats ?? [], performance.now())) {
        const failed = await failAttemptsOf(client, namespace, taskQueue, lost).catch(() => 0);
        if (failed > 0)
          options.say?.(`worker ${lost} was lost: ${failed} activity attempt(s) it held failed at once`);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, POLL_MS).unref();
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
