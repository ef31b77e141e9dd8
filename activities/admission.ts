/**
 * Admission from outside the workflow sandbox, through the worker's own client: a subagent's request for a
 * slot and its release, which slot owners have closed (the admission workflow's sweep), and starting the
 * admission workflow when there is none.
 */
import { Context } from '@temporalio/activity';
import { isGrpcServiceError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  ADMISSION_WORKFLOW_TASK_TIMEOUT,
  ADMISSION_WORKFLOW_TYPE,
  acquireSlotSignal,
  admissionAnswerSignal,
  admissionWorkflowId,
  declareWorkerSignal,
  describeAdmission,
  releaseSlotSignal,
  type AdmissionDelivery,
  type AdmissionPool,
  type AdmissionSettings,
  type LeaseGrant,
  type SlotRequest,
} from '../contracts/admission';
import type { SlotLeases } from './admission-lease';

/** Owners described at once by a sweep. */
const SWEEP_CONCURRENCY = 8;

/** Answers signalled at once by a delivery. */
const DELIVERY_CONCURRENCY = 16;

/** gRPC codes that say a signal can never reach this owner (a bad id, a workflow that refuses more signals). */
const UNREACHABLE_OWNER_CODES: ReadonlySet<number> = new Set([
  3 /* INVALID_ARGUMENT */, 9 /* FAILED_PRECONDITION */,
]);

function unreachableOwner(err: unknown): boolean {
  if (err instanceof WorkflowNotFoundError) return true;
  const cause = err instanceof Error ? err.cause : undefined;
  return isGrpcServiceError(cause) && UNREACHABLE_OWNER_CODES.has(cause.code);
}

/** How far a delivery got: answers signalled (in order) and the slots of those that cannot reach their owner. */
export interface DeliveryProgress {
  done: number;
  gone: string[];
}

/**
 * Signals each answer to the workflow that asked; returns the slots of the answers that cannot reach their
 * owner: it has closed, or will never take the signal (its slot, or its place in the queue, goes back). Any
 * other failure (the server unreachable) throws, and the delivery is retried (an answer heard twice changes
 * nothing). `from` resumes an attempt that got part of the way; `beat` hears the progress after each group.
 */
export async function deliverAnswers(
  client: Client,
  deliveries: readonly AdmissionDelivery[],
  from: DeliveryProgress = { done: 0, gone: [] },
  beat: (progress: DeliveryProgress) => void = () => undefined,
): Promise<string[]> {
  const gone = [...from.gone];
  for (let i = Math.max(0, from.done); i < deliveries.length; i += DELIVERY_CONCURRENCY) {
    const batch = deliveries.slice(i, i + DELIVERY_CONCURRENCY);
    await Promise.all(
      batch.map(async ({ owner, answer }) => {
        try {
          await client.workflow.getHandle(owner).signal(admissionAnswerSignal, answer);
        } catch (err) {
          if (!unreachableOwner(err)) throw err;
          gone.push(answer.slot);
        }
      }),
    );
    beat({ done: i + batch.length, gone: [...gone] });
  }
  return gone;
}

/** What an earlier attempt's heartbeat said it had done (nothing when it said nothing readable). */
function deliveredBefore(details: unknown): DeliveryProgress | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { done, gone } = details as Partial<DeliveryProgress>;
  if (typeof done !== 'number' || !Array.isArray(gone)) return undefined;
  return { done, gone: gone.filter((slot): slot is string => typeof slot === 'string') };
}

/** Of `owners` (workflow ids), those with no open execution: closed, or never there. */
export async function closedWorkflows(client: Client, owners: readonly string[]): Promise<string[]> {
  const closed: string[] = [];
  for (let i = 0; i < owners.length; i += SWEEP_CONCURRENCY) {
    const batch = owners.slice(i, i + SWEEP_CONCURRENCY);
    const open = await Promise.all(
      batch.map(async (owner) => {
        try {
          const description = await client.workflow.getHandle(owner).describe();
          return description.status.name === 'RUNNING';
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return false;
          throw err;
        }
      }),
    );
    batch.forEach((owner, j) => !open[j] && closed.push(owner));
  }
  return closed;
}

export interface AdmissionDeclaration {
  taskQueue: string;
  /** Absent: `subagents`. */
  pool?: AdmissionPool;
  settings: AdmissionSettings;
  identity: string;
}

/** A worker's settings for each pool: `subagent_runtime` and `lead_runtime`. */
export type PoolSettings = Record<AdmissionPool, AdmissionSettings>;

/**
 * Declares a worker's settings to its task queue's admission workflow, starting the workflow when there is
 * none (signal-with-start: one call, whatever the state). The newest declaration is the one in force.
 */
export async function declareAdmission(client: Client, declaration: AdmissionDeclaration): Promise<void> {
  const { taskQueue, settings, identity, pool = 'subagents' } = declaration;
  await client.workflow.signalWithStart(ADMISSION_WORKFLOW_TYPE, {
    workflowId: admissionWorkflowId(taskQueue, pool),
    taskQueue,
    args: [pool === 'subagents' ? { settings } : { settings, pool }],
    signal: declareWorkerSignal,
    signalArgs: [{ identity, settings, at: new Date().toISOString() }],
    workflowTaskTimeout: ADMISSION_WORKFLOW_TASK_TIMEOUT,
    staticSummary: `${pool === 'runs' ? 'Lead run' : 'Subagent'} admission for task queue ${taskQueue}`,
    staticDetails: `Started with ${describeAdmission(settings)}. The newest worker's settings are in force.`,
  });
}

/**
 * The admission activities of a worker whose `subagent_runtime` and `lead_runtime` are `settings`; `leases`, its
 * leases of spare slots (activities/admission-lease.ts), when it holds any.
 */
export function createAdmissionActivities(settings: PoolSettings, identity: string, leases?: SlotLeases) {
  return {
    /**
     * The admission workflow's answers, many in one activity: the slots whose owners have closed. It beats after
     * each group of signals, so that an attempt lost with its worker is given up within the heartbeat timeout
     * and the next one starts where the beat said it was.
     */
    async sendAdmissionAnswers(deliveries: AdmissionDelivery[]): Promise<string[]> {
      const context = Context.current();
      const from = deliveredBefore(context.info.heartbeatDetails);
      return deliverAnswers(context.client, deliveries, from, (progress) => context.heartbeat(progress));
    },
    /**
     * The same, as a local activity: what executions recorded before answers went out by activity replay
     * (`admission-activity-answers` in workflows/admission.ts).
     */
    async deliverAdmissionAnswers(deliveries: AdmissionDelivery[]): Promise<string[]> {
      return deliverAnswers(Context.current().client, deliveries);
    },
    /** The sweep: which of these slot owners have closed. */
    async admissionClosedOwners(owners: string[]): Promise<string[]> {
      return closedWorkflows(Context.current().client, owners);
    },
    /**
     * A subagent's (or a lead's) request for a slot: a local activity, run within the asker's workflow task.
     * With `lease`, a spare slot this worker holds is granted here and returned (no signal, no answer, no task
     * of its own). Otherwise the request is signalled and the answer comes by signal (it costs the asker no task
     * of its own either). When the task queue has no admission workflow (terminated by hand, a reset server),
     * it is started again with this worker's settings first.
     */
    async acquireSlot(request: SlotRequest, options?: { lease?: boolean }): Promise<LeaseGrant | undefined> {
      const pool = request.pool ?? 'subagents';
      if (options?.lease && request.again === undefined) {
        const token = leases?.get(pool)?.take(request);
        if (token !== undefined) return { outcome: 'granted', lease: token };
      }
      const context = Context.current();
      const { taskQueue } = context.info;
      const handle = context.client.workflow.getHandle(admissionWorkflowId(taskQueue, pool));
      try {
        await handle.signal(acquireSlotSignal, request);
        return undefined;
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      await declareAdmission(context.client, { taskQueue, pool, settings: settings[pool], identity });
      await handle.signal(acquireSlotSignal, request);
      return undefined;
    },
    /** Gives a slot back, or withdraws a queued request (a signal: the owner does not wait on it). */
    async releaseSlot(slot: string, pool: AdmissionPool = 'subagents'): Promise<void> {
      // A grant of this worker's lease not yet reported is undone here (the admission workflow never heard of
      // it); one whose report is in flight goes back in the next report, after it.
      if (leases?.get(pool)?.release(slot)) return;
      const context = Context.current();
      await context.client.workflow
        .getHandle(admissionWorkflowId(context.info.taskQueue, pool))
        .signal(releaseSlotSignal, { slot });
    },
  };
}

export type AdmissionActivities = ReturnType<typeof createAdmissionActivities>;
