/**
 * What the server keeps of the workers polling a task queue: their heartbeats (ListWorkers), read by the
 * client's liveness checks (client/worker-liveness.ts), by the workspace's home check
 * (activities/workspace/home-liveness.ts), by the lost-worker watch (worker/lost-workers.ts), and by `run` for
 * the config each worker runs with.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/**
 * A project worker names a plugin `<this prefix><digest>`, and the heartbeat lists the plugins of its worker:
 * how a worker publishes the digest of the config it runs runs with (worker/config-digest.ts).
 */
export const CONFIG_DIGEST_PLUGIN_PREFIX = 'durable-subagents.config/';

/**
 * How often each worker tells the server it runs (one small call for all of a process's workers): clients
 * tell a killed worker from a live one after three missed beats, and a stopped one at once from its last
 * beat (client/worker-liveness.ts); a run whose home host fell silent moves its workspace after three
 * (activities/workspace/home-liveness.ts), so the beat bounds how soon a lost host's runs go on. The SDK's
 * default, 60 s, would leave `run` and `status` guessing for minutes.
 */
export const WORKER_HEARTBEAT_INTERVAL_MS = 1000;

/** How long a worker's heartbeat may stand still before it counts as dead: three beats. */
export const LOST_WORKER_SILENCE_MS = 3 * WORKER_HEARTBEAT_INTERVAL_MS;

/**
 * A worker first seen with a beat older than this (by its clock and ours: skew only changes which dead workers
 * are swept) is left alone: it died before anyone watched, and the timeouts have settled its calls.
 */
const RECENT_BEAT_MS = 60_000;

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

/** Which workers fell silent: fed each reading of the heartbeats, with this process's clock (pure: unit-tested). */
export class SilenceTracker {
  private readonly latest = new Map<string, { atMs: number; firstSeenMs: number; changed: boolean }>();
  private readonly lost = new Set<string>();

  constructor(
    private readonly self: string,
    private readonly silenceMs: number,
  ) {}

  /**
   * The workers found dead by this reading, each once a silence. `nowMs`: a monotonic clock of this process, which times
   * the silences; `wallMs`: the wall clock, only to tell a worker first seen long dead from one just killed.
   */
  observe(beats: readonly HeartbeatSeen[], nowMs: number, wallMs: number = Date.now()): string[] {
    const found: string[] = [];
    for (const beat of beats) {
      if (beat.identity === this.self || beat.identity === '' || beat.atMs === undefined) continue;
      if (beat.status !== 'running') {
        this.latest.delete(beat.identity);
        continue;
      }
      const known = this.latest.get(beat.identity);
      if (known === undefined || known.atMs !== beat.atMs) {
        // Beating now, or (first seen) recently by its own clock: a worker long dead is left to the timeouts.
        const recent = known !== undefined || wallMs - beat.atMs < RECENT_BEAT_MS;
        this.latest.set(beat.identity, { atMs: beat.atMs, firstSeenMs: nowMs, changed: recent });
        // One found dead that beats again was stalled, not dead: alive now, and found again if it falls silent.
        this.lost.delete(beat.identity);
        continue;
      }
      if (!known.changed || this.lost.has(beat.identity)) continue;
      if (nowMs - known.firstSeenMs < this.silenceMs) continue;
      this.lost.add(beat.identity);
      found.push(beat.identity);
    }
    return found;
  }

  /** Whether `identity` was found dead by an earlier reading (and has not beaten since). */
  isLost(identity: string): boolean {
    return this.lost.has(identity);
  }
}
