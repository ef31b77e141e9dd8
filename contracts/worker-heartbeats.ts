/**
 * What the server keeps of the workers polling a task queue: their heartbeats (ListWorkers), read by the
 * client's liveness checks (client/worker-liveness.ts), by the workspace's home check
 * (activities/workspace/home-liveness.ts), and by `run` for the config each worker runs with.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/**
 * A project worker names a plugin `<this prefix><digest>`, and the heartbeat lists the plugins of its worker:
 * how a worker publishes the digest of the config it runs runs with (worker/config-digest.ts).
 */
export const CONFIG_DIGEST_PLUGIN_PREFIX = 'durable-subagents.config/';

/** A worker's latest heartbeat. */
export interface HeartbeatSeen {
  identity: string;
  status: 'running' | 'stopping' | 'stopped' | 'unknown';
  /** When the worker sent it (epoch ms, the worker's clock). */
  atMs?: number;
  /** How long after its previous one: the worker's heartbeat interval. */
  intervalMs?: number;
  /** The digest of the worker's config, when it publishes one (a project worker of this version does). */
  configDigest?: string;
}

/** The config digest a heartbeat's plugin names carry, if one does. */
export function configDigestOf(pluginNames: readonly string[]): string | undefined {
  const named = pluginNames.find((name) => name.startsWith(CONFIG_DIGEST_PLUGIN_PREFIX));
  return named === undefined ? undefined : named.slice(CONFIG_DIGEST_PLUGIN_PREFIX.length) || undefined;
}

/** A protobuf Timestamp or Duration (seconds as a number or a Long). */
type SecondsAndNanos =
  { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined;

/** A Timestamp as epoch ms, a Duration as ms. */
export function millis(value: SecondsAndNanos): number | undefined {
  if (!value?.seconds) return undefined;
  const seconds = typeof value.seconds === 'number' ? value.seconds : value.seconds.toNumber();
  return seconds * 1000 + Math.floor((value.nanos ?? 0) / 1e6);
}

const WORKER_STATUS = temporal.api.enums.v1.WorkerStatus;

function statusOf(status: temporal.api.enums.v1.WorkerStatus | null | undefined): HeartbeatSeen['status'] {
  switch (status) {
    case WORKER_STATUS.WORKER_STATUS_RUNNING:
      return 'running';
    case WORKER_STATUS.WORKER_STATUS_SHUTTING_DOWN:
      return 'stopping';
    case WORKER_STATUS.WORKER_STATUS_SHUTDOWN:
      return 'stopped';
    default:
      return 'unknown';
  }
}

/** Pages of heartbeats read at most: a task queue with more workers than this is live anyway. */
const MAX_PAGES = 5;

/** The latest heartbeat of every worker of `taskQueue`; undefined where the server keeps none or refuses. */
export async function taskQueueHeartbeats(
  client: Pick<Client, 'workflowService'>,
  namespace: string,
  taskQueue: string,
): Promise<HeartbeatSeen[] | undefined> {
  const seen: HeartbeatSeen[] = [];
  // The list query takes a quoted string; a name it could not quote is filtered here instead.
  const query = /^[^'"\\]*$/.test(taskQueue) ? `TaskQueue = '${taskQueue}'` : '';
  let nextPageToken: Uint8Array | undefined;
  try {
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const response = await client.workflowService.listWorkers({
        namespace,
        pageSize: 200,
        query,
        ...(nextPageToken && { nextPageToken }),
      });
      for (const info of response.workersInfo ?? []) {
        const heartbeat = info.workerHeartbeat;
        if (!heartbeat || heartbeat.taskQueue !== taskQueue) continue;
        const atMs = millis(heartbeat.heartbeatTime);
        const intervalMs = millis(heartbeat.elapsedSinceLastHeartbeat);
        const configDigest = configDigestOf((heartbeat.plugins ?? []).map((plugin) => plugin.name ?? ''));
        seen.push({
          identity: heartbeat.workerIdentity ?? '',
          status: statusOf(heartbeat.status),
          ...(atMs !== undefined && { atMs }),
          ...(intervalMs !== undefined && { intervalMs }),
          ...(configDigest !== undefined && { configDigest }),
        });
      }
      if (!response.nextPageToken?.length) break;
      nextPageToken = response.nextPageToken;
    }
  } catch {
    // An older server, ListWorkers turned off, or no permission: the poller list answers alone.
    return undefined;
  }
  return seen;
}
