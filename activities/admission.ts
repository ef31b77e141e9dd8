/**
 * What the admission workflow needs from outside the workflow sandbox: which slot owners have closed (the
 * sweep), and starting the admission workflow again when a delegating workflow finds none (someone
 * terminated it). Both go through the worker's own client.
 */
import { Context } from '@temporalio/activity';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  ADMISSION_WORKFLOW_TASK_TIMEOUT,
  ADMISSION_WORKFLOW_TYPE,
  admissionWorkflowId,
  declareWorkerSignal,
  describeAdmission,
  type AdmissionSettings,
} from '../contracts/admission';

/** Owners described at once by a sweep. */
const SWEEP_CONCURRENCY = 8;

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
  namespace?: string;
  taskQueue: string;
  settings: AdmissionSettings;
  identity: string;
}

/**
 * Declares a worker's settings to its task queue's admission workflow, starting the workflow when there is
 * none (signal-with-start: one call, whatever the state). The newest declaration is the one in force.
 */
export async function declareAdmission(client: Client, declaration: AdmissionDeclaration): Promise<void> {
  const { taskQueue, settings, identity } = declaration;
  await client.workflow.signalWithStart(ADMISSION_WORKFLOW_TYPE, {
    workflowId: admissionWorkflowId(taskQueue),
    taskQueue,
    args: [{ settings }],
    signal: declareWorkerSignal,
    signalArgs: [{ identity, settings, at: new Date().toISOString() }],
    workflowTaskTimeout: ADMISSION_WORKFLOW_TASK_TIMEOUT,
    staticSummary: `Subagent admission for task queue ${taskQueue}`,
    staticDetails: `Started with ${describeAdmission(settings)}. The newest worker's settings are in force.`,
  });
}

/** The admission activities of a worker whose `subagent_runtime` is `settings`. */
export function createAdmissionActivities(settings: AdmissionSettings, identity: string) {
  return {
    /** The sweep: which of these slot owners have closed. */
    async admissionClosedOwners(owners: string[]): Promise<string[]> {
      return closedWorkflows(Context.current().client, owners);
    },
    /** Starts this task queue's admission workflow again (with this worker's settings) when it is gone. */
    async restartAdmission(): Promise<void> {
      const context = Context.current();
      await declareAdmission(context.client, {
        taskQueue: context.info.taskQueue,
        settings,
        identity,
      });
    },
  };
}

export type AdmissionActivities = ReturnType<typeof createAdmissionActivities>;
