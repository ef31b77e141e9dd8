/**
 * Is a run's home host still there? Asked when a workspace call waited too long for its home's task queue, or
 * its attempt there was lost: the answer decides between trying the home again and moving the workspace. It
 * reads what the server keeps: the pollers of the home's activity task queue and the heartbeats of the workers
 * polling it (every second from this project's: worker/runtime.ts). A host whose worker said it stopped, or fell
 * silent for five beats (10 s at the least) by the clocks of both, is gone; one that beat within the last one and
 * a half beats is alive; in between the question is asked again, and the asker remembers what it read: a host
 * whose every worker's beat then stands still for three beats of the asker's own clock is gone, the lost-worker
 * watch's measure (worker/lost-workers.ts), which no clock skew or slow reader moves.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { performance } from 'node:perf_hooks';
import {
  LOST_WORKER_SILENCE_MS,
  SilenceTracker,
  taskQueueHeartbeats,
  millis,
  type HeartbeatSeen,
} from '../../contracts/worker-heartbeats';

export type HomeVerdict = 'alive' | 'gone' | 'unsure';

/**
 * Never sooner than this: a saturated host's beats come late (its worker's core thread shares the CPU), and a
 * move costs a restore and the calls in flight there.
 */
const MIN_GONE_SILENCE_MS = 10_000;
const GONE_AFTER_BEATS = 3;
/** A poller that sent no heartbeat (killed in its first seconds) is gone once it has not asked for this long. */
const SILENT_POLLER_MS = 15_000;

/** The verdict from what the server listed (pure: unit-tested). */
export function homeVerdict(
  pollers: { lastAccessMs?: number }[],
  heartbeats: { status: string; atMs?: number; intervalMs?: number }[] | undefined,
  nowMs: number,
): HomeVerdict {
  if (pollers.length === 0 && (heartbeats ?? []).every((beat) => beat.status !== 'running')) return 'gone';
  if (heartbeats === undefined) return 'alive';
  const running = heartbeats.filter((beat) => beat.status === 'running' || beat.status === 'unknown');
  if (running.length === 0) {
    if (heartbeats.length > 0) return 'gone';
    const lastPoll = Math.max(...pollers.map((poller) => poller.lastAccessMs ?? nowMs));
    return nowMs - lastPoll > SILENT_POLLER_MS ? 'gone' : 'unsure';
  }
  let verdict: HomeVerdict = 'gone';
  for (const beat of running) {
    if (beat.atMs === undefined) return 'alive';
    const interval = beat.intervalMs ?? 0;
    const silence = nowMs - beat.atMs;
    if (silence <= Math.max(1.5 * interval, 1_000) + 1_000) return 'alive';
    if (silence <= Math.max(MIN_GONE_SILENCE_MS, GONE_AFTER_BEATS * interval)) verdict = 'unsure';
  }
  return verdict;
}

/**
 * An 'unsure' verdict made sure by what this asker saw before (pure: unit-tested): 'gone' once every running
 * worker of the home has been found dead by `tracker` (fed `beats` here, `monotonicMs` its clock).
 */
export function rememberedVerdict(
  verdict: HomeVerdict,
  beats: readonly HeartbeatSeen[] | undefined,
  tracker: SilenceTracker,
  monotonicMs: number,
  wallMs: number,
): HomeVerdict {
  if (verdict !== 'unsure' || beats === undefined) return verdict;
  tracker.observe(beats, monotonicMs, wallMs);
  const running = beats.filter((beat) => beat.status === 'running' || beat.status === 'unknown');
  return running.length > 0 && running.every((beat) => tracker.isLost(beat.identity)) ? 'gone' : verdict;
}

/**
 * Asks what the server says of the host queue `queue`, each call afresh, remembering the heartbeats it read
 * (`rememberedVerdict`): ask again while 'unsure'.
 */
export function homeVerdictAsker(
  client: Pick<Client, 'workflowService'>,
  namespace: string,
  queue: string,
): () => Promise<HomeVerdict> {
  const tracker = new SilenceTracker('', LOST_WORKER_SILENCE_MS);
  return async () => {
    let beats: HeartbeatSeen[] | undefined;
    const verdict = await askHomeVerdict(client, namespace, queue, Date.now, (read) => (beats = read));
    return rememberedVerdict(verdict, beats, tracker, performance.now(), Date.now());
  };
}

/** What the server says of the host queue `queue` now; `seen` is given the heartbeats read. */
export async function askHomeVerdict(
  client: Pick<Client, 'workflowService'>,
  namespace: string,
  queue: string,
  nowMs: () => number = Date.now,
  seen?: (beats: HeartbeatSeen[] | undefined) => void,
): Promise<HomeVerdict> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: queue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  const listed = (pollers ?? []).map((poller) => {
    const lastAccessMs = millis(poller.lastAccessTime);
    return lastAccessMs === undefined ? {} : { lastAccessMs };
  });
  const heartbeats = await taskQueueHeartbeats(client, namespace, queue);
  seen?.(heartbeats);
  return homeVerdict(listed, heartbeats, nowMs());
}
