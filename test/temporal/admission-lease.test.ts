/**
 * Leases of admission slots against the real server (activities/admission-lease.ts): a worker of a large pool
 * grants its spare slots within the asking workflow's own task, so a run and its subagents start with no signal
 * to the admission workflow and no answer back; every slot still goes back when its owner ends, and the
 * admission workflow's state shows the lease. With leases turned off, the same runs go the signal path. Two
 * leasing worker processes under a burst larger than the pool: leases and signals together never let more than
 * `max_running` subagents run at once (read from their histories), each slot is granted once and given back;
 * a leasing worker SIGKILLed mid-burst has its spare slots freed within the lease's timeout.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import {
  admissionStateQuery,
  admissionWorkflowId,
  LEASE_MIN_RUNNING,
  LEASE_TTL_MS,
  type AdmissionPool,
  type AdmissionSettings,
  type AdmissionState,
} from '../../contracts/admission';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { workflowResult } from '../../client/results';
import {
  startProjectWorkerProcess,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { workerIdentity } from '../support/chaos-workers';
import { peakOverlap, workIntervals } from '../support/slot-intervals';
import { fanOutLeadInput, tempDir } from '../support/subagent-input';

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
          // A slot granted from the lease and given back before the worker's next report is settled on the
          // worker alone, so the workflow counts at most one grant per run or subagent, and at least every one
          // it answered by signal.
          const ids = pool === 'runs' ? leads : children;
          const answers = pool === 'runs' ? heard.slice(0, leads.length) : heard.slice(leads.length);
          const bySignal = answers.filter((count) => count > 0).length;
          expect(state.counters.granted).toBeLessThanOrEqual(ids.length);
          expect(state.counters.granted).toBeGreaterThanOrEqual(bySignal);
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

  describe('two leasing workers under a burst larger than the pool', () => {
    /** The smallest pool that leases, so that 40 subagents at once are more than it holds. */
    const CAP = LEASE_MIN_RUNNING;
    const workers: ChildProcess[] = [];
    afterEach(() => {
      for (const worker of workers.splice(0)) worker.kill('SIGKILL');
    });

    /** Two worker processes, each holding a lease of the subagents' pool once it exists. */
    async function leasingWorkers(taskQueue: string): Promise<void> {
      const config = join(tempDir('admission-lease-cap'), 'config.yaml');
      writeFileSync(config, `subagent_runtime:\n  max_running: ${CAP}\n  max_queued: 64\n`);
      for (let i = 0; i < 2; i++) {
        workers.push(await startProjectWorkerProcess(taskQueue, { SUBAGENTS_CONFIG: config }));
      }
      // Each seen holding spare slots (a lease left unused a while gives them back until it is needed).
      const leasing = new Set<string>();
      await waitFor('both workers to lease spare slots', async () => {
        const leases = (await admissionState(testClient(), taskQueue, 'subagents')).leases ?? [];
        for (const hold of leases) if (hold.tokens.length > 0) leasing.add(hold.identity);
        return leasing.size === 2;
      });
    }

    /** Ten leads of four subagents each (40, more than the pool holds), each subagent's answer `childMs` late. */
    function burst(taskQueue: string, childMs: number) {
      return Promise.all(
        Array.from({ length: 10 }, (_, run) =>
          testClient().workflow.start(leadRunWorkflow, {
            taskQueue,
            workflowId: `${taskQueue}-r${run}`,
            args: [
              fanOutLeadInput(
                ['a', 'b', 'c', 'd'].map((id) => `${run}${id}`),
                childMs,
              ),
            ],
          }),
        ),
      );
    }

    /** Every run completed; from the children's histories, at most CAP ran together; every slot given back. */
    async function expectBounded(
      taskQueue: string,
      handles: Awaited<ReturnType<typeof burst>>,
      killed = false,
    ) {
      const results = await Promise.all(handles.map((handle) => workflowResult(handle)));
      const children = results.flatMap((result) => result.ledger.map((entry) => entry.workflow_id));
      expect(results.flatMap((result) => result.ledger.map((entry) => entry.status))).toEqual(
        Array(40).fill('completed'),
      );
      const intervals = await workIntervals(testClient(), children);
      expect(intervals).toHaveLength(40);
      expect(peakOverlap(intervals)).toBeLessThanOrEqual(CAP);
      let state: AdmissionState | undefined;
      // Given back by its owner, or (a worker killed under it) by the admission workflow's sweep.
      await waitFor('every subagent slot given back', async () => {
        state = await admissionState(testClient(), taskQueue, 'subagents');
        const { granted, released, reclaimed } = state.counters;
        return state.running.length === 0 && released + reclaimed === granted;
      });
      if (!state) throw new Error('no admission state');
      // Each of the 40 slots (a slot's id is its subagent's workflow id) granted once: all ran, none twice. A
      // worker killed before it reported the grants it made from its lease takes that count with it.
      if (killed) expect(state.counters.granted).toBeLessThanOrEqual(40);
      else expect(state.counters).toMatchObject({ granted: 40, released: 40, reclaimed: 0 });
      // The burst pressed on the bound: some requests had to wait.
      expect(state.counters.queued).toBeGreaterThan(0);
      return state;
    }

    it('never lets leases and signals together run more than max_running subagents; each slot granted once, all given back', async () => {
      const taskQueue = uniqueTaskQueue('admission-lease-cap');
      await leasingWorkers(taskQueue);
      await expectBounded(taskQueue, await burst(taskQueue, 1500));
    });

    it('frees the spare slots of a worker SIGKILLed mid-burst within the lease timeout; every run completes', async () => {
      const taskQueue = uniqueTaskQueue('admission-lease-kill');
      await leasingWorkers(taskQueue);
      const handles = await burst(taskQueue, 3000);
      const [victim] = workers;
      const identity = workerIdentity(victim.pid ?? -1);
      // Killed while its lease holds spare slots and the burst is under way.
      await waitFor('the burst under way, the victim holding spare slots', async () => {
        const state = await admissionState(testClient(), taskQueue, 'subagents');
        const held = state.leases?.find((hold) => hold.identity === identity)?.tokens.length ?? 0;
        return state.running.length > 0 && held > 0;
      });
      const killed = once(victim, 'exit');
      victim.kill('SIGKILL');
      await killed;
      // Within the lease's timeout (and the admission workflow's next look at it): not held for good.
      await waitFor(
        "the killed worker's spare slots to be freed",
        async () =>
          !((await admissionState(testClient(), taskQueue, 'subagents')).leases ?? []).some(
            (hold) => hold.identity === identity && hold.tokens.length > 0,
          ),
        LEASE_TTL_MS + 15_000,
      );
      await expectBounded(taskQueue, handles, true);
    });
  });
});
