/**
 * A worker's part in admission: its `subagent_runtime` and `lead_runtime` (read when it starts; restart to
 * change) are declared to the task queue's admission workflows (one per pool), which it starts if there is none, and the newest declaration is in
 * force. Workers of one task queue that disagree would otherwise run with two limits in turn: a starting
 * worker says so when another live worker declared different settings. On a clean shutdown it withdraws.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { declareAdmission } from '../activities/admission';
import {
  admissionStateQuery,
  admissionWorkflowId,
  declareWorkerSignal,
  describeAdmission,
  sameAdmissionSettings,
  admissionSection,
  type AdmissionPool,
  type AdmissionSettings,
} from '../contracts/admission';

/** A poller seen this recently is a live worker (a long poll lasts about a minute). */
const LIVE_POLLER_MS = 90_000;

export interface WorkerAdmission {
  client: Client;
  namespace: string;
  taskQueue: string;
  /** Absent: `subagents`. */
  pool?: AdmissionPool;
  settings: AdmissionSettings;
  identity: string;
}

/** Identities that polled the task queue's workflow tasks within the last LIVE_POLLER_MS. */
async function livePollers(client: Client, namespace: string, taskQueue: string): Promise<Set<string>> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  const now = Date.now();
  const live = new Set<string>();
  for (const poller of pollers ?? []) {
    const seconds = Number(poller.lastAccessTime?.seconds ?? 0);
    if (poller.identity && now - seconds * 1000 < LIVE_POLLER_MS) live.add(poller.identity);
  }
  return live;
}

/** Declares this worker's settings: they are in force from now on for every run on the task queue. */
export async function declareWorkerAdmission(worker: WorkerAdmission): Promise<void> {
  const { client, taskQueue, settings, identity, pool } = worker;
  await declareAdmission(client, { taskQueue, pool, settings, identity });
}

/**
 * Once the worker runs (the admission workflow has then taken its declaration): a warning line for each other
 * live worker that declared different settings.
 */
export async function disagreeingWorkers(worker: WorkerAdmission): Promise<string[]> {
  const { client, namespace, taskQueue, settings, identity, pool = 'subagents' } = worker;
  const state = await client.workflow
    .getHandle(admissionWorkflowId(taskQueue, pool))
    .query(admissionStateQuery);
  const differing = state.workers.filter(
    (other) => other.identity !== identity && !other.left && !sameAdmissionSettings(other.settings, settings),
  );
  if (differing.length === 0) return [];
  const live = await livePollers(client, namespace, taskQueue).catch(() => new Set<string>());
  return differing
    .filter((other) => live.has(other.identity))
    .map(
      (other) =>
        `admission: worker ${other.identity} declared ${admissionSection(pool)} ` +
        `${describeAdmission(other.settings)}; this worker's ${describeAdmission(settings)} now apply to every ` +
        `run on task queue "${taskQueue}". Give every worker of a task queue the same ${admissionSection(pool)}.`,
    );
}

/** A clean shutdown: this worker's settings no longer speak for a live worker. Never fails. */
export async function withdrawWorkerAdmission(worker: WorkerAdmission): Promise<void> {
  const { client, taskQueue, settings, identity, pool } = worker;
  await client.workflow
    .getHandle(admissionWorkflowId(taskQueue, pool))
    .signal(declareWorkerSignal, { identity, settings, at: new Date().toISOString(), left: true })
    .catch(() => undefined);
}
