/**
 * Admission against the real server: `subagent_runtime` bounds the subagents executing at once across every
 * run of a task queue, queues the rest (with a timeout and a bound), refuses under `reject`, rotates slots
 * between runs, and gets every slot back however a delegation ends (a SIGKILLed worker, a cancel, a
 * terminate). What executed when is read from the child workflows' histories.
 */
import { workflowResult } from '../../client/results';
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import {
  acquireSlotSignal,
  admissionAnswerSignal,
  admissionStateQuery,
  admissionWorkflowId,
  releaseSlotSignal,
  capacityFullText,
  queueTimeoutText,
  type AdmissionSettings,
  type AdmissionState,
} from '../../contracts/admission';
import type { TaskEvent } from '../../contracts/events';
import {
  leadEventsQuery,
  leadStatusQuery,
  type LeadRunInput,
  type LeadRunResult,
} from '../../contracts/lead';
import { admissionWorkflow } from '../../workflows/admission';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { workerIdentity } from '../support/chaos-workers';
import {
  startProjectWorkerProcess,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { fanOutLeadInput, gatedFanOutLeadInput, tempDir } from '../support/subagent-input';
import { mostAtOnce } from '../harness/spans';

const testClient = useTestClient();

function admission(settings: Partial<AdmissionSettings>): AdmissionSettings {
  return {
    max_running: 3,
    max_queued: 64,
    admission_policy: 'queue',
    queue_timeout_seconds: 300,
    ...settings,
  };
}

async function startLead(taskQueue: string, id: string, input: LeadRunInput) {
  return testClient().workflow.start(leadRunWorkflow, {
    taskQueue,
    workflowId: `${taskQueue}-${id}`,
    args: [input],
  });
}

function admissionState(client: Client, taskQueue: string): Promise<AdmissionState> {
  return client.workflow.getHandle(admissionWorkflowId(taskQueue)).query(admissionStateQuery);
}

interface Span {
  workflowId: string;
  /** The first model call's start: when the subagent began executing. */
  start: number;
  end: number;
  modelCalls: number;
}

/**
 * When each child held its slot, from its history: its first model call's start, to the start of its last
 * workflow task, in which it gives the slot back (the execution closes a little later, and under load the
 * next child may already have started by then).
 */
async function spans(client: Client, workflowIds: readonly string[]): Promise<Span[]> {
  return Promise.all(
    workflowIds.map(async (workflowId) => {
      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      const time = (event: (typeof events)[number]) =>
        Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
      const scheduled = new Set(
        events
          .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
          .map((e) => String(e.eventId)),
      );
      const started = events.filter((e) =>
        scheduled.has(String(e.activityTaskStartedEventAttributes?.scheduledEventId ?? '')),
      );
      return {
        workflowId,
        start: started.length > 0 ? time(started[0]) : NaN,
        end: time(
          events.filter((e) => e.workflowTaskStartedEventAttributes).at(-1) ?? events[events.length - 1],
        ),
        modelCalls: scheduled.size,
      };
    }),
  );
}

async function events(handle: WorkflowHandle<typeof leadRunWorkflow>): Promise<TaskEvent[]> {
  return handle.query(leadEventsQuery, 0);
}

describe('admission', () => {
  it('runs 3 leads × 4 delegations with never more than max_running 2 executing; all 12 complete', async () => {
    const taskQueue = uniqueTaskQueue('admission-bound');
    const client = testClient();
    const results = await withProjectWorker(
      taskQueue,
      async () => {
        const handles = await Promise.all(
          ['r1', 'r2', 'r3'].map((run) =>
            startLead(
              taskQueue,
              run,
              fanOutLeadInput(
                ['a', 'b', 'c', 'd'].map((id) => `${run}${id}`),
                400,
              ),
            ),
          ),
        );
        const finished = await Promise.all(handles.map((handle) => handle.result()));
        return { finished, state: await admissionState(client, taskQueue) };
      },
      { admission: admission({ max_running: 2 }) },
    );
    const entries = results.finished.flatMap((result) => result.ledger);
    expect(entries.map((e) => e.status)).toEqual(Array(12).fill('completed'));
    const executed = await spans(
      client,
      entries.map((e) => e.workflow_id),
    );
    expect(executed.every((span) => span.modelCalls === 1 && !Number.isNaN(span.start))).toBe(true);
    expect(mostAtOnce(executed)).toBe(2);
    expect(results.state.running).toEqual([]);
    expect(results.state.queued).toEqual([]);
    expect(results.state.counters).toMatchObject({ granted: 12, released: 12, rejected: 0, timed_out: 0 });
  });

  it('under reject, refuses the third delegation at once with the exact message and no model call', async () => {
    const taskQueue = uniqueTaskQueue('admission-reject');
    const client = testClient();
    const { result, queuedEvents } = await withProjectWorker(
      taskQueue,
      async () => {
        const handle = await startLead(taskQueue, 'lead', fanOutLeadInput(['a', 'b', 'c'], 3000));
        const result = await handle.result();
        return { result, queuedEvents: (await events(handle)).filter((e) => e.type === 'task_queued') };
      },
      { admission: admission({ max_running: 2, admission_policy: 'reject' }) },
    );
    const refused = result.ledger.filter((e) => e.status === 'failed');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ error: capacityFullText(2, 0), admission_failure: true });
    expect(result.ledger.filter((e) => e.status === 'completed')).toHaveLength(2);
    // Its subagent stopped at its first step: no model call.
    expect((await spans(client, [refused[0].workflow_id]))[0].modelCalls).toBe(0);
    expect(queuedEvents).toEqual([]);
    // Refused at once: it ended before either running child did (each thinks for 3 s), however loaded the
    // machine (a bound in milliseconds would measure the machine, not the refusal).
    const completedAt = result.ledger
      .filter((e) => e.status === 'completed')
      .map((e) => Date.parse(e.updated_at));
    expect(Date.parse(refused[0].updated_at)).toBeLessThan(Math.min(...completedAt));
  });

  it('fails a queued delegation after queue_timeout_seconds with the exact message, before any model call', async () => {
    const taskQueue = uniqueTaskQueue('admission-timeout');
    const client = testClient();
    const { result, log } = await withProjectWorker(
      taskQueue,
      async () => {
        const handle = await startLead(taskQueue, 'lead', fanOutLeadInput(['a', 'b'], 5000));
        const result = await handle.result();
        return { result, log: await events(handle) };
      },
      { admission: admission({ max_running: 1, queue_timeout_seconds: 2 }) },
    );
    const waited = result.ledger.find((e) => e.status === 'failed');
    expect(waited).toMatchObject({ error: queueTimeoutText(2), admission_failure: true });
    expect((await spans(client, [waited!.workflow_id]))[0].modelCalls).toBe(0);
    const queued = log.find((e) => e.type === 'task_queued' && e.task_id === waited!.id);
    const failed = log.find((e) => e.type === 'task_failed' && e.task_id === waited!.id);
    expect(queued).toMatchObject({ running: 1, queued: 1 });
    expect(failed).toMatchObject({ admission_failure: true, error: queueTimeoutText(2) });
    // The queue timeout runs from the admission's own clock, which no event of the lead records; the entry was
    // created before the request was queued, so from it the refusal cannot come sooner than the timeout (the
    // lead's `task_queued` arrives a signal hop late, and by a varying amount on a loaded machine).
    const waitedMs = Date.parse(failed!.at) - Date.parse(waited!.created_at);
    expect(waitedMs).toBeGreaterThanOrEqual(2000);
    // Refused at its queue timeout, not when the running child (5 s) gave its slot back.
    const completed = result.ledger.filter((e) => e.status === 'completed');
    expect(completed).toHaveLength(1);
    expect(Date.parse(failed!.at)).toBeLessThan(Date.parse(completed[0].updated_at));
  });

  it('with max_queued 1, refuses the second waiting delegation with the exact message', async () => {
    const taskQueue = uniqueTaskQueue('admission-full');
    const result = await withProjectWorker(
      taskQueue,
      async () => (await startLead(taskQueue, 'lead', fanOutLeadInput(['a', 'b', 'c'], 800))).result(),
      { admission: admission({ max_running: 1, max_queued: 1 }) },
    );
    expect(result.ledger.map((e) => e.status).sort()).toEqual(['completed', 'completed', 'failed']);
    const refused = result.ledger.find((e) => e.status === 'failed');
    expect(refused).toMatchObject({ error: capacityFullText(1, 1), admission_failure: true });
    // The text the lead read for it is the usual failure text.
    expect(result.final_output).toBe('Combined.');
  });

  it('rotates slots between runs: a run that floods the queue does not starve one that comes later', async () => {
    const taskQueue = uniqueTaskQueue('admission-fair');
    const client = testClient();
    // As many as one response may ask for (the per-response ceiling, 4), through one slot. A's holds the slot
    // until B's two have queued behind A's other three, so the order tested is the rotation's, not the
    // machine's speed.
    const flood = ['a0', 'a1', 'a2', 'a3'];
    const gated = gatedFanOutLeadInput(flood, 300);
    const { a, b } = await withProjectWorker(
      taskQueue,
      async () => {
        const runA = await startLead(taskQueue, 'A', gated.input);
        await waitFor('run A to queue the rest', async () => {
          const state = await admissionState(client, taskQueue);
          return state.counters.queued === 3;
        });
        const runB = await startLead(taskQueue, 'B', fanOutLeadInput(['b1', 'b2'], 300));
        await waitFor('run B to queue both', async () => {
          const state = await admissionState(client, taskQueue);
          return state.counters.queued === 5;
        });
        gated.open();
        return { a: await runA.result(), b: await runB.result() };
      },
      { admission: admission({ max_running: 1 }) },
    );
    const executed = await spans(
      client,
      [...a.ledger, ...b.ledger].map((e) => e.workflow_id),
    );
    expect(mostAtOnce(executed)).toBe(1);
    const order = [...executed].sort((x, y) => x.start - y.start).map((span) => span.workflowId);
    const position = (id: string) => order.findIndex((workflowId) => workflowId.endsWith(`/task/${id}`));
    // First come, first served would run all of A's before B's; turns between the runs start both of B's
    // before A's last.
    const aLast = Math.max(...flood.map(position));
    for (const id of ['b1', 'b2']) expect(position(id)).toBeLessThan(aLast);
    expect([...a.ledger, ...b.ledger].every((e) => e.status === 'completed')).toBe(true);
  });

  it('a late `queued` answer does not hide the grant heard just before it (no minute lost to the re-ask)', async () => {
    const taskQueue = uniqueTaskQueue('admission-late-queued');
    const client = testClient();
    const gated = gatedFanOutLeadInput(['a', 'b'], 0);
    const lead = await startLead(taskQueue, 'lead', gated.input);
    // One holds the one slot (until the gate opens), the other waits in the queue; then the worker stops.
    const waiting = await withProjectWorker(
      taskQueue,
      async () => {
        let state: AdmissionState | undefined;
        await waitFor('one delegation to wait in the queue', async () => {
          state = await admissionState(client, taskQueue);
          return state.running.length === 1 && state.queued.length === 1;
        });
        return client.workflow.getHandle(state!.queued[0].slot);
      },
      { admission: admission({ max_running: 1 }) },
    );
    // While no worker runs, it is told it is granted, and then (a slow delivery's) that it is queued: both
    // reach it in one activation.
    await waiting.signal(admissionAnswerSignal, { slot: waiting.workflowId, outcome: 'granted' });
    await waiting.signal(admissionAnswerSignal, {
      slot: waiting.workflowId,
      outcome: 'queued',
      running: 1,
      queued: 1,
    });
    const result = await withProjectWorker(
      taskQueue,
      async () => {
        // It goes on at the grant while the other still holds its slot; before the fix it kept waiting.
        await waitFor('the waiting delegation to call its model on its grant', async () => {
          const events = (await waiting.fetchHistory()).events ?? [];
          return events.some(
            (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
          );
        });
        gated.open();
        return lead.result();
      },
      { admission: admission({ max_running: 1 }) },
    );
    expect(result.ledger.map((e) => e.status)).toEqual(['completed', 'completed']);
  });

  it('gives the slots back after a SIGKILLed worker restarts, and when a run is cancelled or terminated', async () => {
    const taskQueue = uniqueTaskQueue('admission-crash');
    const client = testClient();
    const dir = tempDir('admission-crash');
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'subagent_runtime:\n  max_running: 2\n');
    const workers: ChildProcess[] = [];
    try {
      workers.push(await startProjectWorkerProcess(taskQueue, { SUBAGENTS_CONFIG: config }));
      const handle = await startLead(taskQueue, 'crash', fanOutLeadInput(['a', 'b', 'c', 'd'], 3000));
      await waitFor('two slots held and two delegations queued', async () => {
        const status = await handle.query(leadStatusQuery);
        return status.counts.in_progress === 2 && status.counts.queued === 2;
      });
      workers[0].kill('SIGKILL');
      await once(workers[0], 'exit');
      workers.push(await startProjectWorkerProcess(taskQueue, { SUBAGENTS_CONFIG: config }));
      const result = await handle.result();
      expect(result.ledger.map((e) => e.status)).toEqual(Array(4).fill('completed'));
      const executed = await spans(
        client,
        result.ledger.map((e) => e.workflow_id),
      );
      expect(mostAtOnce(executed)).toBeLessThanOrEqual(2);
      let state = await admissionState(client, taskQueue);
      expect(state.running).toEqual([]);
      expect(state.settings.max_running).toBe(2);

      // A cancelled run gives back its slot and its place in the queue.
      const cancelled = await startLead(taskQueue, 'cancel', fanOutLeadInput(['x', 'y', 'z'], 60_000));
      await waitFor('two held, one queued', async () => {
        const s = await admissionState(client, taskQueue);
        return s.running.length === 2 && s.queued.length === 1;
      });
      await cancelled.cancel();
      const cancelledResult: LeadRunResult = await workflowResult(cancelled);
      expect(cancelledResult.ledger.map((e) => e.status)).toEqual(Array(3).fill('cancelled'));
      await waitFor('every slot back after the cancel', async () => {
        const s = await admissionState(client, taskQueue);
        return s.running.length === 0 && s.queued.length === 0;
      });

      // A child terminated from the UI: its parent gives its slot back at once.
      const terminatedChild = await startLead(taskQueue, 'child', fanOutLeadInput(['t1'], 60_000));
      await waitFor('the child running', async () => {
        return (await terminatedChild.query(leadStatusQuery)).counts.in_progress === 1;
      });
      await client.workflow.getHandle(`${taskQueue}-child/task/t1`).terminate('from the UI');
      expect((await terminatedChild.result()).ledger[0].status).toBe('failed');
      state = await admissionState(client, taskQueue);
      expect(state.running).toEqual([]);

      // A lead terminated from the UI runs no code at all: the sweep finds its slots and gives them back.
      const terminated = await startLead(taskQueue, 'term', fanOutLeadInput(['p', 'q'], 60_000));
      await waitFor('two held by the run', async () => {
        return (await admissionState(client, taskQueue)).running.length === 2;
      });
      await terminated.terminate('from the UI');
      await waitFor(
        'the sweep to reclaim the terminated run’s slots',
        async () => (await admissionState(client, taskQueue)).running.length === 0,
        30_000,
      );
      state = await admissionState(client, taskQueue);
      // The sweep reclaimed them (and maybe the terminated child's, had it come before its lead's release).
      expect(state.counters.reclaimed).toBeGreaterThanOrEqual(2);
      expect(state.queued).toEqual([]);
      // Every slot ever granted came back, one way or the other.
      expect(state.counters.released + state.counters.reclaimed).toBe(state.counters.granted);
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
    }
  });
});

describe('the admission workflow', () => {
  it('continues as new as its history grows, keeping its slots, queue, rotation and counters', async () => {
    const taskQueue = uniqueTaskQueue('admission-continued');
    const client = testClient();
    const settings = admission({ max_running: 1 });
    // Started before the worker declares itself (which then only signals it), with a short history.
    const semaphore = await client.workflow.start(admissionWorkflow, {
      taskQueue,
      workflowId: admissionWorkflowId(taskQueue),
      args: [{ settings, history_events: 40 }],
    });
    // Six delegations from two leads (a response holds at most four); a child's second keeps the others queued.
    const result = await withProjectWorker(
      taskQueue,
      async () => {
        const leads = await Promise.all([
          startLead(taskQueue, 'lead-1', fanOutLeadInput(['a', 'b', 'c'], 1000)),
          startLead(taskQueue, 'lead-2', fanOutLeadInput(['d', 'e', 'f'], 1000)),
        ]);
        const results = await Promise.all(leads.map((lead) => lead.result()));
        return { ledger: results.flatMap((r) => r.ledger) };
      },
      { admission: settings },
    );
    expect(result.ledger.map((e) => e.status)).toEqual(Array(6).fill('completed'));
    // Every grant arrived when it was sent: no subagent had to ask again (a minute later).
    for (const e of result.ledger) {
      const history = (await client.workflow.getHandle(e.workflow_id).fetchHistory()).events ?? [];
      expect(history.filter((event) => event.timerFiredEventAttributes)).toEqual([]);
      // The re-ask's timer was left to fire, not cancelled by the grant: a cancel in the task where the timer
      // also fired, that task lost to a killed worker, wedges the workflow in a non-determinism error.
      const resendTimers = history
        .filter((event) =>
          /^"admission: /.test(Buffer.from(event.userMetadata?.summary?.data ?? []).toString()),
        )
        .map((event) => event.timerStartedEventAttributes?.timerId);
      expect(resendTimers.length).toBeGreaterThan(0);
      const cancelled = history.map((event) => event.timerCanceledEventAttributes?.timerId);
      expect(resendTimers.filter((id) => cancelled.includes(id))).toEqual([]);
    }
    const executed = await spans(
      client,
      result.ledger.map((e) => e.workflow_id),
    );
    expect(mostAtOnce(executed)).toBe(1);
    const latest = client.workflow.getHandle(admissionWorkflowId(taskQueue));
    expect((await latest.describe()).runId).not.toBe(semaphore.firstExecutionRunId);
    // The counters span every execution: nothing was lost at a continue-as-new.
    const state = await withProjectWorker(taskQueue, () => latest.query(admissionStateQuery), {
      admission: settings,
    });
    expect(state.counters).toMatchObject({ granted: 6, released: 6, queued: 5 });
    expect(state.running).toEqual([]);
    expect(state.queued).toEqual([]);
  });
});

describe('the admission workflow under steady traffic', () => {
  it('still continues as new: answers decided while it drains go to the next execution', async () => {
    const taskQueue = uniqueTaskQueue('admission-steady');
    const client = testClient();
    const settings = admission({ max_running: 2, max_queued: 1000 });
    const workflowId = admissionWorkflowId(taskQueue);
    await client.workflow.start(admissionWorkflow, {
      taskQueue,
      workflowId,
      args: [{ settings, history_events: 60 }],
    });
    const handle = client.workflow.getHandle(workflowId);
    let sent = 0;
    let trafficEnded = Infinity;
    const state = await withProjectWorker(
      taskQueue,
      async () => {
        // Two senders, each asking for a slot and giving back the one before, without pause: every workflow
        // task has new requests, so answers are always in flight. The owners do not exist (an answer that
        // cannot be delivered gives its slot back), which keeps the traffic going.
        // The traffic goes on until the workflow has continued as new twice under it (however fast this machine
        // is today), and at least 40 requests; a bound on a hang besides.
        const executions = new Set<string>();
        const giveUp = Date.now() + 90_000;
        const going = () => (executions.size < 3 || sent <= 40) && Date.now() < giveUp;
        const watching = (async () => {
          while (going()) {
            executions.add((await handle.describe()).runId);
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })();
        await Promise.all(
          [0, 1].map(async (sender) => {
            for (let n = 0; going(); n += 1) {
              const slot = `steady-${sender}-${n}`;
              await handle.signal(acquireSlotSignal, {
                slot,
                owner: `${slot}-owner`,
                fairness_key: `k${sender}`,
              });
              if (n > 0) await handle.signal(releaseSlotSignal, { slot: `steady-${sender}-${n - 1}` });
              sent += 1;
            }
          }),
        );
        await watching;
        trafficEnded = Date.now();
        await waitFor('every request answered or given back', async () => {
          const now = await handle.query(admissionStateQuery);
          return now.running.length === 0 && now.queued.length === 0;
        });
        return handle.query(admissionStateQuery);
      },
      { admission: settings },
    );
    // Executions that continued as new while the traffic went on (before, one drained only once it stopped).
    const during: number[] = [];
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
      const closed = execution.closeTime?.getTime();
      if (closed !== undefined && closed < trafficEnded) during.push(execution.historyLength);
    }
    console.log(
      `admission under steady traffic: ${sent} requests; histories continued meanwhile: ${during.join(', ')}`,
    );
    expect(sent).toBeGreaterThan(40);
    expect(during.length).toBeGreaterThanOrEqual(2);
    // Nothing lost across them: every request was answered (granted, or queued and withdrawn by its release),
    // and every slot granted came back.
    expect(state.counters.granted).toBeGreaterThan(sent / 4);
    expect(state.counters.granted + state.counters.queued).toBeGreaterThanOrEqual(sent);
    expect(state.counters.released + state.counters.reclaimed).toBe(state.counters.granted);
  });
});

describe('workers that disagree', () => {
  it('says so when a worker starts with settings other than a live worker’s, and the newest are in force', async () => {
    const taskQueue = uniqueTaskQueue('admission-disagree');
    const client = testClient();
    const dir = tempDir('admission-disagree');
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'subagent_runtime:\n  max_running: 2\n');
    const first = await startProjectWorkerProcess(taskQueue, { SUBAGENTS_CONFIG: config });
    try {
      const said: string[] = [];
      await withProjectWorker(
        taskQueue,
        async () => {
          await waitFor('the new settings in force', async () => {
            return (await admissionState(client, taskQueue)).settings.max_running === 5;
          });
          await waitFor('the worker to say it replaced a live worker’s settings', () => said.length > 0);
        },
        { admission: admission({ max_running: 5 }), say: (line) => said.push(line) },
      );
      expect(said).toEqual([
        `admission: worker ${workerIdentity(first.pid!)} declared subagent_runtime max_running 2, max_queued 64, policy queue, ` +
          "queue timeout 300 s; this worker's max_running 5, max_queued 64, policy queue, queue timeout 300 s " +
          `now apply to every run on task queue "${taskQueue}". Give every worker of a task queue the same ` +
          'subagent_runtime.',
      ]);
      const state = await admissionState(client, taskQueue);
      expect(state.workers.map((worker) => [worker.identity, worker.settings.max_running])).toEqual([
        [workerIdentity(first.pid!), 2],
        [expect.any(String), 5],
      ]);
    } finally {
      first.kill('SIGKILL');
    }
  });
});
