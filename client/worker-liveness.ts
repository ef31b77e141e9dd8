/**
 * Is a worker polling a task queue, now? DescribeTaskQueue lists a poller for minutes after its worker
 * stopped, so on its own it cannot tell a worker that stopped ten seconds ago from an idle one. Workers also
 * send heartbeats (every 5 s from this project's: worker/runtime.ts), each with the worker's status: a worker
 * that shut down says so in its last one, and one that was killed stops sending. The two together answer at
 * once for a stopped worker and within a few heartbeats for a killed one; a server that keeps no heartbeats
 * (older, or ListWorkers disabled) leaves the poller list to answer, as before.
 */
import { isGrpcDeadlineError, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { millis, taskQueueHeartbeats, type HeartbeatSeen } from '../contracts/worker-heartbeats';

export { taskQueueHeartbeats, type HeartbeatSeen };

/** A poller the server lists for the task queue. */
export interface PollerSeen {
  identity: string;
  /** When it last asked for a task (epoch ms), if the server says. */
  lastAccessMs?: number;
}

/** Heartbeats missed before a running worker counts as gone (a killed process sends no last one). */
const MISSED_HEARTBEATS = 3;
/** Never sooner than this: clocks differ between machines, and a busy host sends late. */
const MIN_SILENCE_MS = 15_000;
/**
 * A poller that has sent no heartbeat yet (killed in its first seconds, or an SDK that sends none) is gone
 * when it has not asked for a task for this long: an idle worker asks again as each long poll (about a
 * minute) ends.
 */
const POLL_SILENCE_MS = 90_000;

export interface Liveness {
  /** Identities of the pollers that are a live worker (or that nothing says are gone). */
  live: string[];
  /** Identities the server still lists as pollers whose worker has stopped or fell silent. */
  gone: string[];
}

/**
 * Which listed pollers are live workers. With heartbeats under its identity, a poller is live when one of
 * them is running and recent. Without, it is live unless the server keeps heartbeats (`heartbeats` is not
 * undefined) and the poller has not asked for a task for 90 s; a server that keeps none leaves the poller
 * list to answer, since a worker whose slots are all busy asks for nothing for as long as its tasks take.
 */
export function pollerLiveness(
  pollers: PollerSeen[],
  heartbeats: HeartbeatSeen[] | undefined,
  nowMs: number,
): Liveness {
  const live: string[] = [];
  const gone: string[] = [];
  const identities = [...new Set(pollers.map((poller) => poller.identity))];
  for (const identity of identities) {
    const own = (heartbeats ?? []).filter((heartbeat) => heartbeat.identity === identity);
    let alive: boolean;
    if (own.length > 0) alive = own.some((heartbeat) => heartbeatAlive(heartbeat, nowMs));
    else if (heartbeats === undefined) alive = true;
    else {
      const lastAccess = Math.max(
        ...pollers
          .filter((poller) => poller.identity === identity)
          .map((poller) => poller.lastAccessMs ?? nowMs),
      );
      alive = nowMs - lastAccess <= POLL_SILENCE_MS;
    }
    (alive ? live : gone).push(identity);
  }
  return { live, gone };
}

function heartbeatAlive(heartbeat: HeartbeatSeen, nowMs: number): boolean {
  if (heartbeat.status === 'stopping' || heartbeat.status === 'stopped') return false;
  if (heartbeat.atMs === undefined) return true;
  const silence = Math.max(MIN_SILENCE_MS, MISSED_HEARTBEATS * (heartbeat.intervalMs ?? 0));
  return nowMs - heartbeat.atMs <= silence;
}

// ---------------------------------------------------------------------------------------------------------
// What the server says

/** The pollers the server lists on `taskQueue`'s workflow task queue. */
export async function taskQueuePollers(
  client: Pick<Client, 'workflowService'>,
  namespace: string,
  taskQueue: string,
): Promise<PollerSeen[]> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (pollers ?? []).map((poller) => {
    const lastAccessMs = millis(poller.lastAccessTime);
    return { identity: poller.identity ?? '', ...(lastAccessMs !== undefined && { lastAccessMs }) };
  });
}

/**
 * The live and the gone workers of `taskQueue`. Throws when the server refuses DescribeTaskQueue; a refused
 * heartbeat list only makes the answer the poller list's.
 */
export async function taskQueueLiveness(
  client: Pick<Client, 'workflowService'>,
  namespace: string,
  taskQueue: string,
  now: () => number = Date.now,
): Promise<Liveness> {
  const pollers = await taskQueuePollers(client, namespace, taskQueue);
  if (pollers.length === 0) return { live: [], gone: [] };
  const heartbeats = await taskQueueHeartbeats(client, namespace, taskQueue);
  return pollerLiveness(pollers, heartbeats, now());
}

/** A live worker of a task queue, and what its heartbeats say of its config. */
export interface LiveWorker {
  identity: string;
  /** Whether the server has a heartbeat of it (a worker's first comes a heartbeat interval after it starts). */
  heartbeats: boolean;
  /** The digest of its config (worker/config-digest.ts), when its latest heartbeat publishes one. */
  configDigest?: string;
}

/** The `live` identities with what their latest heartbeats say of their config. */
export function liveWorkers(live: readonly string[], heartbeats: HeartbeatSeen[] | undefined): LiveWorker[] {
  return live.map((identity) => {
    const own = (heartbeats ?? []).filter((heartbeat) => heartbeat.identity === identity);
    const latest = own.reduce<HeartbeatSeen | undefined>(
      (newest, heartbeat) => ((heartbeat.atMs ?? 0) >= (newest?.atMs ?? -1) ? heartbeat : newest),
      undefined,
    );
    return {
      identity,
      heartbeats: own.length > 0,
      ...(latest?.configDigest !== undefined && { configDigest: latest.configDigest }),
    };
  });
}

/**
 * The live workers of `taskQueue` with their config digests; the server keeps no heartbeats when `heartbeats`
 * is false (then none publishes a digest). Throws when the server refuses DescribeTaskQueue.
 */
export async function taskQueueLiveWorkers(
  client: Pick<Client, 'workflowService'>,
  namespace: string,
  taskQueue: string,
  now: () => number = Date.now,
): Promise<{ workers: LiveWorker[]; heartbeats: boolean }> {
  const pollers = await taskQueuePollers(client, namespace, taskQueue);
  if (pollers.length === 0) return { workers: [], heartbeats: true };
  const heartbeats = await taskQueueHeartbeats(client, namespace, taskQueue);
  const { live } = pollerLiveness(pollers, heartbeats, now());
  return { workers: liveWorkers(live, heartbeats), heartbeats: heartbeats !== undefined };
}

/**
 * Whether a live worker polls the workflow task queue: one the server lists as a poller whose heartbeats
 * say it runs. A worker that stopped counts no more at once, one that was killed after a few missed heartbeats.
 */
export async function taskQueueHasWorker(
  client: Pick<Client, 'workflowService'>,
  namespace: string,
  taskQueue: string,
): Promise<boolean> {
  return (await taskQueueLiveness(client, namespace, taskQueue)).live.length > 0;
}

/** How long a running workflow's queries may take: a live worker answers in well under a second. */
export const QUERY_DEADLINE_MS = 10_000;

/** The server's deadline passed (the SDK wraps it in a query error, or not). */
export function isDeadlineExceeded(err: unknown): boolean {
  return isGrpcDeadlineError(err) || isGrpcDeadlineError((err as { cause?: unknown } | undefined)?.cause);
}

/** A running workflow's answer, or why there was none: no live worker polls its queue, or none answered in time. */
export type Asked<T> = { answered: true; value: T } | { answered: false; why: 'no_worker' | 'no_answer' };

/**
 * `read` (queries of a workflow on `taskQueue`) asked only when a live worker polls that queue, and within
 * `ms`: a query waits for a worker, so without both a run whose worker is gone would answer only when the
 * server gives up, a minute later. A server that refuses the liveness question leaves the deadline to tell;
 * `seenLive` skips the question (a caller polling a run it has just found a worker for). Errors other than the
 * deadline's are thrown.
 */
export async function askWorker<T>(
  client: Pick<Client, 'workflowService' | 'withDeadline'>,
  namespace: string,
  taskQueue: string,
  read: () => Promise<T>,
  { ms = QUERY_DEADLINE_MS, seenLive = false }: { ms?: number; seenLive?: boolean } = {},
): Promise<Asked<T>> {
  if (!seenLive && !(await taskQueueHasWorker(client, namespace, taskQueue).catch(() => true))) {
    return { answered: false, why: 'no_worker' };
  }
  try {
    return { answered: true, value: await client.withDeadline(Date.now() + ms, read) };
  } catch (err) {
    if (!isDeadlineExceeded(err)) throw err;
    return { answered: false, why: 'no_answer' };
  }
}
