/**
 * Admission (issue 12): what the task queue's admission workflow (`workflows/admission.ts`) costs a
 * delegation, read from the histories of the children and of the admission workflow itself. A child asks for
 * its slot as its first step: a local activity in its first workflow task signals `admission_acquire`, the
 * answer comes back as the signal `admission_answer`; when it ends, a local activity in its last task signals
 * `admission_release`. Each part runs on a task queue of its own, so each has its own admission workflow with
 * the worker's settings:
 *   - hand-over: `max_running: 1`, five leads started at once whose one response makes 4 `task` calls each (a
 *     response holds at most four); for consecutive children,
 *     the admission workflow's receipt of child k's release → child k+1's first model call started, with the
 *     hops in between (child k's end, the admission task, the answer's transit, child k+1's task);
 *   - uncontended: `max_running` well above the load, one child per lead; in the child's history, started →
 *     first model call scheduled, and the part of it admission adds: its first task completed (the acquire
 *     local activity's marker) → the answer received → the model call scheduled (without admission the first
 *     task schedules the model call itself);
 *   - throughput: 50 leads × 4 delegations through `max_running: 3`, children answering after 200 ms; wall
 *     time against the ideal (200 / 3 × a child's own execution, first model call started → close: its
 *     history also holds its wait in the queue), the most children executing at once, how much of the time the
 *     slots were in use, and the admission workflow's own load: events and workflow tasks per delegation, the
 *     answers it sent in the task that continued as new (lost: the server drops them) and the children's
 *     resend timers that fired (a request that heard nothing for a minute).
 * Alone (`node dist/bench/admission.js`) it also runs the delegation-overhead benchmark, for the total a
 * delegation costs with admission in it.
 */
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import {
  admissionStateQuery,
  admissionWorkflowId,
  type AdmissionSettings,
  type AdmissionState,
} from '../contracts/admission';
import type { LeadRunInput } from '../contracts/lead';
import { ADMISSION_RESEND_MS } from '../workflows/admission-client';
import { projectDataConverter } from '../payloads/data-converter';
import type { TemporalServer } from '../devserver/temporal-server';
import { bundleProjectWorkflows, createProjectWorker } from '../worker/worker';
import { benchDelegationOverhead } from './delegation-overhead';
import { withBenchServer } from './support/bench-server';
import { executionHistories } from '../test/support/histories';
import { fanOutLeadInput } from '../test/support/subagent-input';
import { formatTable, msRow, type BenchResult } from './stats';

/**
 * Hand-over: rounds (run one after the other) of leads started at once × children each, through one slot. A
 * response holds at most four task calls (the per-response ceiling), so a round's 20 delegations come from
 * five leads.
 */
const HANDOVER_ROUNDS = 3;
const HANDOVER_LEADS = 5;
const HANDOVER_CHILDREN = 4;
/** Uncontended: leads of one child each, one after the other. */
const UNCONTENDED_RUNS = 20;
/** Throughput: leads started at once × children each, through THROUGHPUT_SLOTS slots. */
const THROUGHPUT_LEADS = 50;
const THROUGHPUT_CHILDREN = 4;
const THROUGHPUT_SLOTS = 3;
const CHILD_DELAY_MS = 200;

const QUEUE_SETTINGS = { admission_policy: 'queue', queue_timeout_seconds: 300 } as const;

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

function at(event: HistoryEvent): number {
  return tsToMs(event.eventTime);
}

function firstArg<T>(payloads: Payloads): T | undefined {
  const payload = payloads?.payloads?.[0];
  return payload ? defaultPayloadConverter.fromPayload<T>(payload) : undefined;
}

/** A lead whose first response makes `children` task calls (`c0`, `c1`, …), all allowed at once. */
function leadRun(children: number, childDelayMs = 0): LeadRunInput {
  return fanOutLeadInput(
    Array.from({ length: children }, (_, i) => `c${i}`),
    childDelayMs,
  );
}

/** What a child's history says about its slot and its work. */
interface ChildTimes {
  id: string;
  started: number;
  /** Its first workflow task: the one that ran the acquire local activity (its marker is in the completion). */
  firstTaskStarted: number;
  firstTaskCompleted: number;
  /** The answer `granted` received (WorkflowExecutionSignaled `admission_answer`). */
  answered: number;
  /** Its first model call: scheduled, started. */
  modelScheduled: number;
  firstModelCall: number;
  /** Its last model call completed. */
  lastModelCompleted: number;
  /** The workflow task that ran the release local activity, started. */
  releaseTaskStarted: number;
  closed: number;
  /** Resend timers (ADMISSION_RESEND_MS) that fired: the child heard nothing for a minute and asked again. */
  resends: number;
}

function localActivityType(event: HistoryEvent): string | undefined {
  const marker = event.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return undefined;
  return firstArg<{ activity_type?: string }>(marker.details?.data)?.activity_type;
}

function childTimes(id: string, events: HistoryEvent[]): ChildTimes {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const need = (what: string, event: HistoryEvent | undefined): number => {
    if (!event) throw new Error(`${id}: no ${what} in its history`);
    return at(event);
  };
  const isModelCall = (e: HistoryEvent) =>
    e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel';
  const scheduled = events.find(isModelCall);
  const modelCalls = new Set(events.filter(isModelCall).map((e) => Number(e.eventId)));
  const started = events.find(
    (e) =>
      Number(e.activityTaskStartedEventAttributes?.scheduledEventId ?? -1) === Number(scheduled?.eventId),
  );
  const lastCompleted = [...events]
    .reverse()
    .find((e) => modelCalls.has(Number(e.activityTaskCompletedEventAttributes?.scheduledEventId ?? -1)));
  const taskOf = (type: string) => {
    const marker = events.find((e) => localActivityType(e) === type);
    return byId.get(Number(marker?.markerRecordedEventAttributes?.workflowTaskCompletedEventId));
  };
  // Its first task: the one that ran the acquire local activity (the marker is among its completion's events).
  const firstTaskCompleted = taskOf('acquireSlot');
  const granted = events.find((e) => {
    const signal = e.workflowExecutionSignaledEventAttributes;
    return (
      signal?.signalName === 'admission_answer' &&
      firstArg<{ outcome: string }>(signal.input)?.outcome === 'granted'
    );
  });
  const releaseTask = taskOf('releaseSlot');
  const resendTimers = new Set(
    events
      .filter((e) => {
        const timeout = e.timerStartedEventAttributes?.startToFireTimeout;
        return timeout && tsToMs(timeout) === ADMISSION_RESEND_MS;
      })
      .map((e) => Number(e.eventId)),
  );
  const last = events.at(-1);
  if (!last?.workflowExecutionCompletedEventAttributes) throw new Error(`${id}: did not complete`);
  return {
    id,
    started: at(events[0]),
    firstTaskStarted: need(
      'acquireSlot task',
      byId.get(Number(firstTaskCompleted?.workflowTaskCompletedEventAttributes?.startedEventId)),
    ),
    firstTaskCompleted: need('acquireSlot task', firstTaskCompleted),
    answered: need('admission_answer granted', granted),
    modelScheduled: need('model call', scheduled),
    firstModelCall: need('model call started', started),
    lastModelCompleted: need('model call completed', lastCompleted),
    releaseTaskStarted: need(
      'release task',
      byId.get(Number(releaseTask?.workflowTaskCompletedEventAttributes?.startedEventId)),
    ),
    closed: at(last),
    resends: events.filter((e) => resendTimers.has(Number(e.timerFiredEventAttributes?.startedEventId ?? -1)))
      .length,
  };
}

/** What the admission workflow's histories say: per slot, when it heard and answered; and its own load. */
interface AdmissionTimes {
  /** Per slot, the first time (a request heard nothing for a minute is sent again, and answered again). */
  acquireReceived: Map<string, number>;
  grantInitiated: Map<string, number>;
  releaseReceived: Map<string, number>;
  /** Requests received again: the child heard no answer for ADMISSION_RESEND_MS. */
  resentAcquires: number;
  /**
   * Answers sent in the workflow task that continued as new: the server drops a signal whose sender has
   * closed, so the child hears nothing until it sends its request again (ADMISSION_RESEND_MS). The workflow
   * waits for its answers before it continues as new: there should be none.
   */
  answersAtContinueAsNew: number;
  executions: number;
  events: number;
  /** Its workflow tasks, started → completed. */
  tasks: [number, number][];
}

async function admissionTimes(
  client: Client,
  taskQueue: string,
  firstRunId: string,
): Promise<AdmissionTimes> {
  const out: AdmissionTimes = {
    acquireReceived: new Map(),
    grantInitiated: new Map(),
    releaseReceived: new Map(),
    resentAcquires: 0,
    answersAtContinueAsNew: 0,
    executions: 0,
    events: 0,
    tasks: [],
  };
  for (const { history } of await executionHistories(client, admissionWorkflowId(taskQueue), firstRunId)) {
    const events = history.events ?? [];
    const byId = new Map(events.map((e) => [Number(e.eventId), e]));
    out.executions += 1;
    out.events += events.length;
    const first = (map: Map<string, number>, slot: string, time: number) => {
      if (!map.has(slot)) map.set(slot, time);
    };
    const continuedAsNew = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes !== undefined;
    let lastTaskCompleted = 0;
    for (const e of events) {
      const signalIn = e.workflowExecutionSignaledEventAttributes;
      const slotIn = signalIn ? firstArg<{ slot?: string }>(signalIn.input)?.slot : undefined;
      if (slotIn !== undefined && signalIn?.signalName === 'admission_acquire') {
        if (out.acquireReceived.has(slotIn)) out.resentAcquires += 1;
        first(out.acquireReceived, slotIn, at(e));
      }
      if (slotIn !== undefined && signalIn?.signalName === 'admission_release') {
        first(out.releaseReceived, slotIn, at(e));
      }
      const signalOut = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
      if (signalOut?.signalName === 'admission_answer') {
        const answer = firstArg<{ slot: string; outcome: string }>(signalOut.input);
        if (answer?.outcome === 'granted') first(out.grantInitiated, answer.slot, at(e));
      }
      const completed = e.workflowTaskCompletedEventAttributes;
      const started = completed && byId.get(Number(completed.startedEventId));
      if (started) out.tasks.push([at(started), at(e)]);
      if (completed) lastTaskCompleted = Number(e.eventId);
    }
    if (continuedAsNew) {
      out.answersAtContinueAsNew += events.filter(
        (e) =>
          Number(e.eventId) > lastTaskCompleted &&
          e.signalExternalWorkflowExecutionInitiatedEventAttributes?.signalName === 'admission_answer',
      ).length;
    }
  }
  return out;
}

async function history(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  return (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
}

/** Runs a lead to its end; throws unless it completed. */
async function runLead(client: Client, taskQueue: string, workflowId: string, input: LeadRunInput) {
  const result = await client.workflow.execute('leadRunWorkflow', { taskQueue, workflowId, args: [input] });
  if ((result as { status?: string }).status !== 'completed') {
    throw new Error(`${workflowId}: the lead run ended ${JSON.stringify(result).slice(0, 300)}`);
  }
}

/** The most intervals open at once (an interval closing at the instant another opens does not overlap it). */
function maxOverlap(intervals: readonly [number, number][]): number {
  const edges = intervals.flatMap(([from, to]): [number, number][] => [
    [from, 1],
    [to, -1],
  ]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, step] of edges) {
    open += step;
    most = Math.max(most, open);
  }
  return most;
}

function countRow(name: string, unit: string, value: number): BenchResult {
  return { name, unit, p50: value, p95: value, samples: 1 };
}

interface Setting {
  client: Client;
  native: NativeConnection;
  namespace: string;
  bundle: string;
}

/**
 * Runs `body` with a worker of its own task queue declaring `admission`; returns what `body` returns, what the
 * admission workflow's histories say (its continue-as-new chain followed) and its state once every slot came
 * back. The admission workflow is terminated afterwards: the next part has a task queue of its own.
 */
async function withAdmission<T>(
  setting: Setting,
  label: string,
  admission: AdmissionSettings,
  body: (taskQueue: string) => Promise<T>,
): Promise<{ value: T; admission: AdmissionTimes; state: AdmissionState }> {
  const { client, native, namespace, bundle } = setting;
  const taskQueue = `bench-admission-${label}-${Date.now()}`;
  const worker = await createProjectWorker({
    connection: native,
    namespace,
    taskQueue,
    workflowBundleCode: bundle,
    admission,
  });
  const semaphore = client.workflow.getHandle(admissionWorkflowId(taskQueue));
  const firstRunId = (await semaphore.describe()).runId;
  try {
    return await worker.runUntil(async () => {
      const value = await body(taskQueue);
      // Every child has ended, and sent its release before it closed; the admission workflow may not have run
      // every release yet.
      let state = await semaphore.query(admissionStateQuery);
      for (let i = 0; i < 50 && state.running.length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        state = await semaphore.query(admissionStateQuery);
      }
      return { value, state, admission: await admissionTimes(client, taskQueue, firstRunId) };
    });
  } finally {
    await semaphore.terminate('benchmark done').catch(() => undefined);
  }
}

function checkCounters(label: string, state: AdmissionState, delegations: number): void {
  const { counters } = state;
  if (counters.granted !== delegations || counters.released !== delegations || state.running.length > 0) {
    throw new Error(
      `${label}: admission counters ${JSON.stringify(counters)}, expected ${delegations} granted`,
    );
  }
  if (counters.rejected + counters.timed_out + counters.reclaimed > 0) {
    throw new Error(`${label}: admission refused or reclaimed: ${JSON.stringify(counters)}`);
  }
}

/** Child histories of a lead's `children` task calls. */
async function childrenOf(client: Client, leadId: string, children: number): Promise<ChildTimes[]> {
  return await Promise.all(
    Array.from({ length: children }, async (_, i) => {
      const id = `${leadId}/task/c${i}`;
      return childTimes(id, await history(client, id));
    }),
  );
}

/**
 * When a child's grant went out: its signal command, or, once answers are delivered many at a time by a local
 * activity (whose marker is written after the signals were sent), when the child received it.
 */
function grantAt(
  admission: { grantInitiated: Map<string, number> },
  child: { id: string; answered: number },
): number {
  return admission.grantInitiated.get(child.id) ?? child.answered;
}

function seen(map: Map<string, number>, slot: string, what: string): number {
  const time = map.get(slot);
  if (time === undefined) throw new Error(`admission workflow: no ${what} for ${slot}`);
  return time;
}

/** One slot, rounds of 20 children (5 leads × 4): how soon a released slot becomes the next child's first model call. */
async function handOver(setting: Setting): Promise<BenchResult[]> {
  const { client } = setting;
  const {
    value: leads,
    admission,
    state,
  } = await withAdmission(
    setting,
    'handover',
    { max_running: 1, max_queued: 64, ...QUEUE_SETTINGS },
    async (taskQueue) => {
      const out: ChildTimes[][] = [];
      for (let round = 0; round < HANDOVER_ROUNDS; round++) {
        const ids = Array.from(
          { length: HANDOVER_LEADS },
          (_, lead) => `${taskQueue}/round-${round}-lead-${lead}`,
        );
        await Promise.all(ids.map((id) => runLead(client, taskQueue, id, leadRun(HANDOVER_CHILDREN))));
        out.push((await Promise.all(ids.map((id) => childrenOf(client, id, HANDOVER_CHILDREN)))).flat());
      }
      return out;
    },
  );
  checkCounters('hand-over', state, HANDOVER_ROUNDS * HANDOVER_LEADS * HANDOVER_CHILDREN);
  const fromRelease: number[] = [];
  const fromLastCall: number[] = [];
  const hops = {
    doneEnds: [] as number[],
    doneToTask: [] as number[],
    taskToRelease: [] as number[],
    admissionDecides: [] as number[],
    grantTransit: [] as number[],
    nextSchedules: [] as number[],
    scheduledToStarted: [] as number[],
  };
  const executing: [number, number][] = [];
  for (const children of leads) {
    const order = [...children].sort((a, b) => a.firstModelCall - b.firstModelCall);
    executing.push(...order.map((c): [number, number] => [c.firstModelCall, c.closed]));
    for (let k = 0; k + 1 < order.length; k++) {
      const done = order[k];
      const next = order[k + 1];
      const released = seen(admission.releaseReceived, done.id, 'release');
      const granted = grantAt(admission, next);
      fromRelease.push(next.firstModelCall - released);
      fromLastCall.push(next.firstModelCall - done.lastModelCompleted);
      hops.doneEnds.push(released - done.lastModelCompleted);
      hops.doneToTask.push(done.releaseTaskStarted - done.lastModelCompleted);
      hops.taskToRelease.push(released - done.releaseTaskStarted);
      hops.admissionDecides.push(granted - released);
      hops.grantTransit.push(next.answered - granted);
      hops.nextSchedules.push(next.modelScheduled - next.answered);
      hops.scheduledToStarted.push(next.firstModelCall - next.modelScheduled);
    }
  }
  const own = leads.flat().map((c) => c.closed - c.firstModelCall);
  const name = (what: string) => `max_running 1: ${what}`;
  return [
    msRow(
      name(
        "child k's release received by admission → child k+1's first model call started (target p50 ≤ 50 ms)",
      ),
      fromRelease,
    ),
    msRow(
      "  hop: child k's last model call completed → its release received by admission (child k's end)",
      hops.doneEnds,
    ),
    msRow("    of which: last model call completed → child k's last workflow task started", hops.doneToTask),
    msRow(
      '    of which: that task started → release received (its code + the releaseSlot local activity)',
      hops.taskToRelease,
    ),
    msRow('  hop: release received → grant signal initiated (admission task)', hops.admissionDecides),
    msRow('  hop: grant initiated → admission_answer received by child k+1', hops.grantTransit),
    msRow('  hop: answer received → its first model call scheduled (child k+1 task)', hops.nextSchedules),
    msRow('  hop: first model call scheduled → started', hops.scheduledToStarted),
    msRow(
      name("child k's last model call completed → child k+1's first model call started (whole hand-over)"),
      fromLastCall,
    ),
    msRow(name("a child's own execution (first model call started → close)"), own),
    countRow(name('most children executing at once (must be 1)'), 'subagents', maxOverlap(executing)),
  ];
}

/** Plenty of slots: what asking for one adds to a child before its first model call. */
async function uncontended(setting: Setting): Promise<BenchResult[]> {
  const { client } = setting;
  const {
    value: children,
    admission,
    state,
  } = await withAdmission(
    setting,
    'uncontended',
    { max_running: 50, max_queued: 64, ...QUEUE_SETTINGS },
    async (taskQueue) => {
      const out: ChildTimes[] = [];
      for (let run = 0; run < UNCONTENDED_RUNS; run++) {
        const workflowId = `${taskQueue}/lead-${run}`;
        await runLead(client, taskQueue, workflowId, leadRun(1));
        out.push(...(await childrenOf(client, workflowId, 1)));
      }
      return out;
    },
  );
  checkCounters('uncontended', state, UNCONTENDED_RUNS);
  const total = children.map((c) => c.modelScheduled - c.started);
  // Without admission the first task schedules the model call itself: admission adds its completion → the
  // answer → the next task's schedule.
  const added = children.map((c) => c.modelScheduled - c.firstTaskCompleted);
  const name = (what: string) => `uncontended: ${what}`;
  return [
    msRow(name('child started → first model call scheduled, with admission'), total),
    msRow(
      name(
        "admission's part: first task completed → answer received → model call scheduled (target p50 ≤ 20 ms)",
      ),
      added,
    ),
    msRow(
      '  hop: first task completed (acquire local activity marker) → admission_answer received',
      children.map((c) => c.answered - c.firstTaskCompleted),
    ),
    msRow(
      '  hop: answer received → first model call scheduled (its second task)',
      children.map((c) => c.modelScheduled - c.answered),
    ),
    msRow(
      '  beside: acquire received by admission → grant signal initiated (admission task)',
      children.map((c) => grantAt(admission, c) - seen(admission.acquireReceived, c.id, 'acquire')),
    ),
    msRow(
      '  beside: grant initiated → admission_answer received by the child',
      children.map((c) => c.answered - grantAt(admission, c)),
    ),
    msRow(
      "  beside: the child's first task, started → completed (runs the acquireSlot local activity)",
      children.map((c) => c.firstTaskCompleted - c.firstTaskStarted),
    ),
    msRow(
      name("child started → first model call scheduled, without admission (with − admission's part)"),
      children.map((_, i) => total[i] - added[i]),
    ),
    msRow(
      name(
        "the child's last model call completed → closed (its last task, with the releaseSlot local activity)",
      ),
      children.map((c) => c.closed - c.lastModelCompleted),
    ),
    msRow(
      name("the child's own execution (start to close)"),
      children.map((c) => c.closed - c.started),
    ),
  ];
}

/** 50 leads × 4 delegations of 200 ms children through 3 slots. */
async function throughput(setting: Setting): Promise<BenchResult[]> {
  const { client } = setting;
  const total = THROUGHPUT_LEADS * THROUGHPUT_CHILDREN;
  const { value, admission, state } = await withAdmission(
    setting,
    'throughput',
    // Every delegation but the first few waits in the queue: it must hold them all.
    { max_running: THROUGHPUT_SLOTS, max_queued: total, ...QUEUE_SETTINGS },
    async (taskQueue) => {
      const leadIds = Array.from({ length: THROUGHPUT_LEADS }, (_, run) => `${taskQueue}/lead-${run}`);
      const started = Date.now();
      await Promise.all(
        leadIds.map((id) => runLead(client, taskQueue, id, leadRun(THROUGHPUT_CHILDREN, CHILD_DELAY_MS))),
      );
      const wall = Date.now() - started;
      const children = (
        await Promise.all(leadIds.map((lead) => childrenOf(client, lead, THROUGHPUT_CHILDREN)))
      ).flat();
      return { wall, children };
    },
  );
  checkCounters('throughput', state, total);
  const { wall, children } = value;
  // A child's history holds its wait in the queue: its own execution starts with its first model call.
  const own = children.map((c) => c.closed - c.firstModelCall);
  const ownP50 = msRow('', own).p50;
  const ideal = (total / THROUGHPUT_SLOTS) * ownP50;
  // A long tail of slow children (a busy machine) makes the p50 ideal unreachable: the mean shows how much.
  const idealMean = own.reduce((sum, ms) => sum + ms, 0) / THROUGHPUT_SLOTS;
  const first = Math.min(...children.map((c) => c.started));
  const span = Math.max(...children.map((c) => c.closed)) - first;
  const held = children.map((c): [number, number] => [
    grantAt(admission, c),
    seen(admission.releaseReceived, c.id, 'release'),
  ]);
  // A queued request is granted when a release comes in: the latest release received before its grant.
  const releases = [...admission.releaseReceived.values()].sort((a, b) => a - b);
  const handOver = held
    .map(([grant]) => grant - (releases.filter((release) => release <= grant).at(-1) ?? Number.NaN))
    .filter((ms) => !Number.isNaN(ms));
  const grantToModel = children.map((c) => c.firstModelCall - grantAt(admission, c));
  const executing = children.map((c): [number, number] => [c.firstModelCall, c.closed]);
  // The share of the time from the first interval's start to the last one's end that the slots were in use.
  const busy = (intervals: [number, number][]) => {
    const from = Math.min(...intervals.map(([start]) => start));
    const to = Math.max(...intervals.map(([, end]) => end));
    return intervals.reduce((sum, [start, end]) => sum + (end - start), 0) / (THROUGHPUT_SLOTS * (to - from));
  };
  const taskTime = admission.tasks.reduce((sum, [from, to]) => sum + (to - from), 0);
  const name = (what: string) => `${total} delegations, max_running ${THROUGHPUT_SLOTS}: ${what}`;
  return [
    msRow(name("a child's own execution (first model call started → close)"), own),
    countRow(name(`ideal, ${total} / ${THROUGHPUT_SLOTS} × a child's own (p50)`), 'ms', ideal),
    countRow(name(`wall, ${THROUGHPUT_LEADS} leads started → all ended`), 'ms', wall),
    countRow(name('first child started → last child closed'), 'ms', span),
    countRow(name('wall / ideal (p50)'), '×', wall / ideal),
    countRow(name(`ideal, ${total} / ${THROUGHPUT_SLOTS} × a child's own (mean)`), 'ms', idealMean),
    countRow(name('wall / ideal (mean)'), '×', wall / idealMean),
    countRow(name('(first child started → last closed) / ideal (p50)'), '×', span / ideal),
    countRow(
      name(`most children executing at once (first model call → close; must be ≤ ${THROUGHPUT_SLOTS})`),
      'subagents',
      maxOverlap(executing),
    ),
    countRow(
      name('most children open at once (start → close, queued ones included)'),
      'subagents',
      maxOverlap(children.map((c) => [c.started, c.closed])),
    ),
    countRow(
      name('most slots held at once (grant initiated → release received)'),
      'subagents',
      maxOverlap(held),
    ),
    countRow(name('delegations that waited in the queue'), 'delegations', state.counters.queued),
    countRow(name('slots in use: executing children (first model call → close)'), '%', 100 * busy(executing)),
    countRow(name('slots in use: held (grant initiated → release received)'), '%', 100 * busy(held)),
    msRow(name('release received → next grant initiated (admission task)'), handOver),
    msRow(name("grant initiated → the child's first model call started"), grantToModel),
    countRow(
      name("longest grant initiated → the child's first model call started"),
      'ms',
      Math.max(...grantToModel),
    ),
    countRow(
      name('answers initiated in the task that continued as new (lost; should be 0)'),
      'answers',
      admission.answersAtContinueAsNew,
    ),
    countRow(
      name(`resend timers fired in children (${ADMISSION_RESEND_MS / 1000} s; should be 0)`),
      'timers',
      children.reduce((sum, c) => sum + c.resends, 0),
    ),
    countRow(name('requests received again by admission'), 'requests', admission.resentAcquires),
    countRow(name('admission workflow: executions (continue-as-new)'), 'executions', admission.executions),
    countRow(name('admission workflow: history events per delegation'), 'events', admission.events / total),
    countRow(
      name('admission workflow: workflow tasks per delegation'),
      'tasks',
      admission.tasks.length / total,
    ),
    countRow(name('admission workflow: its tasks running, share of the span'), '%', (100 * taskTime) / span),
    msRow(
      name('admission workflow: one task, started → completed'),
      admission.tasks.map(([from, to]) => to - from),
    ),
  ];
}

export async function benchAdmission(server: TemporalServer): Promise<BenchResult[]> {
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const setting: Setting = {
      client,
      native,
      namespace: server.namespace,
      bundle: await bundleProjectWorkflows(),
    };
    return [...(await handOver(setting)), ...(await uncontended(setting)), ...(await throughput(setting))];
  } finally {
    await native.close();
    await connection.close();
  }
}

async function main(): Promise<void> {
  await withBenchServer(async (server) => {
    const results = [...(await benchAdmission(server)), ...(await benchDelegationOverhead(server))];
    process.stdout.write(`${formatTable(results)}\n`);
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
