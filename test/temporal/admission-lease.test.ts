/**
 * Leases of admission slots against the real server (activities/admission-lease.ts): a worker of a large pool
 * grants its spare slots within the asking workflow's own task, so a run and its subagents start with no signal
 * to the admission workflow and no answer back; every slot still goes back when its owner ends, and the
 * admission workflow's state shows the lease. With leases turned off, the same runs go the signal path.
 */
import type { Client } from '@temporalio/client';
import {
  admissionStateQuery,
  admissionWorkflowId,
  LEASE_MIN_RUNNING,
  type AdmissionPool,
  type AdmissionSettings,
  type AdmissionState,
} from '../../contracts/admission';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { workflowResult } from '../../client/results';
import { uniqueTaskQueue, useTestClient, waitFor, withProjectWorker } from '../harness/temporal';
import { fanOutLeadInput } from '../support/subagent-input';

const testClient = useTestClient();

const LARGE: AdmissionSettings = {
  max_running: LEASE_MIN_RUNNING,
  max_queued: 64,
  admission_policy: 'queue',
  queue_timeout_seconds: 300,
};

function admissionState(client: Client, taskQueue: string, pool: AdmissionPool): Promise<AdmissionState> {
  return client.workflow.getHandle(admissionWorkflowId(taskQueue, pool)).query(admissionStateQuery);
}

/** Admission answers a workflow heard by signal (none when its slot came from a lease). */
async function answersHeard(client: Client, workflowId: string): Promise<number> {
  const { events } = await client.workflow.getHandle(workflowId).fetchHistory();
  return (events ?? []).filter(
    (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'admission_answer',
  ).length;
}

/** Runs three fan-out leads (three subagents each); returns the workflow ids of the leads and subagents. */
async function threeFanOuts(
  client: Client,
  taskQueue: string,
): Promise<{ leads: string[]; children: string[] }> {
  const handles = await Promise.all(
    ['r1', 'r2', 'r3'].map((run) =>
      client.workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-${run}`,
        args: [fanOutLeadInput(['a', 'b', 'c'])],
      }),
    ),
  );
  const results = await Promise.all(handles.map((handle) => workflowResult(handle)));
  expect(results.flatMap((result) => result.ledger.map((entry) => entry.status))).toEqual(
    Array(9).fill('completed'),
  );
  const children: string[] = [];
  for (const handle of handles) {
    const { events } = await handle.fetchHistory();
    for (const event of events ?? []) {
      const started = event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
      if (started) children.push(started);
    }
  }
  expect(children).toHaveLength(9);
  return { leads: handles.map((handle) => handle.workflowId), children };
}

describe('admission leases', () => {
  it('grants a large pool’s slots from the worker’s lease: no answer by signal, every slot given back', async () => {
    const taskQueue = uniqueTaskQueue('admission-lease');
    const client = testClient();
    await withProjectWorker(
      taskQueue,
      async () => {
        // The worker asks for its leases once the admission workflows exist.
        for (const pool of ['subagents', 'runs'] as const) {
          await waitFor(
            `the worker to lease spare ${pool} slots`,
            async () => ((await admissionState(client, taskQueue, pool)).leases?.[0]?.tokens.length ?? 0) > 0,
          );
        }
        const { leads, children } = await threeFanOuts(client, taskQueue);
        const heard = await Promise.all([...leads, ...children].map((id) => answersHeard(client, id)));
        // Slots from the leases: the runs' pool lends the worker 25, the subagents' 8 (a quarter each), topped
        // up as they are reported; a request that finds the lease empty goes by signal, as before.
        expect(heard.filter((count) => count === 0).length).toBeGreaterThanOrEqual(9);
        for (const pool of ['subagents', 'runs'] as const) {
          // Reported and given back: held by nobody, counted as granted and released.
          let state: AdmissionState | undefined;
          await waitFor(`every ${pool} slot reported and given back`, async () => {
            state = await admissionState(client, taskQueue, pool);
            return state.running.length === 0 && state.counters.released === state.counters.granted;
          });
          if (!state) throw new Error('no admission state');
          expect(state.counters.granted).toBe(pool === 'runs' ? 3 : 9);
          expect(state.queued).toEqual([]);
          expect(state.leases?.[0].tokens.length).toBeGreaterThan(0);
          const spare = state.leases?.reduce((sum, hold) => sum + hold.tokens.length, 0) ?? 0;
          expect(spare).toBeLessThanOrEqual(state.settings.max_running / 4);
        }
      },
      { admission: LARGE },
    );
  });

  it('without leases, every run and subagent hears its answer by signal', async () => {
    const taskQueue = uniqueTaskQueue('admission-no-lease');
    const client = testClient();
    await withProjectWorker(
      taskQueue,
      async () => {
        const { leads, children } = await threeFanOuts(client, taskQueue);
        const heard = await Promise.all([...leads, ...children].map((id) => answersHeard(client, id)));
        expect(heard.every((count) => count >= 1)).toBe(true);
        expect((await admissionState(client, taskQueue, 'subagents')).leases).toBeUndefined();
      },
      { admission: LARGE, leases: false },
    );
  });
});
