/**
 * Admission (issue 12): what the task queue's admission workflow (`workflows/admission.ts`) costs a
 * delegation, read from the histories of the leads, their children and the admission workflow itself. Each part
 * runs on a task queue of its own, so each has its own admission workflow with the worker's settings:
 *   - hand-over: `max_running: 1`, a lead whose one response makes 20 `task` calls; for consecutive children,
 *     child k's close (and the admission workflow's receipt of its release) → child k+1's first model call
 *     started, with the hops in between;
 *   - uncontended: `max_running` well above the load, one child per lead; the lead's workflow task that sent
 *     the acquire signal → the child's StartChildWorkflowExecutionInitiated (what admission adds before a child
 *     starts), and the child's close → the release acknowledged (what it adds after);
 *   - throughput: 10 leads × 20 delegations through `max_running: 3`, children answering after 200 ms; wall
 *     time against the ideal (200 / 3 × a child's own start-to-close), the most children executing at once
 *     (first model call started → close) from their histories, how much of the time the slots were in use, and
 *     the admission workflow's own load: events and workflow tasks per delegation, and the answers it sent in
 *     the task that continued as new (the server drops them: their delegation waits for its resend).
 * Alone (`node dist/bench/admission.js`) it also runs the delegation-overhead benchmark, for the total a
 * delegation costs with admission in it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { ModelScriptFileInput } from '../activities/model/model-script';
import {
  admissionStateQuery,
  admissionWorkflowId,
  type AdmissionSettings,
  type AdmissionState,
} from '../contracts/admission';
import type { LeadRunInput } from '../contracts/lead';
import { projectDataConverter } from '../worker/payloads/data-converter';
import { connectOrStartServer, type TemporalServer } from '../worker/temporal-server';
import { bundleProjectWorkflows, createProjectWorker } from '../worker/worker';
import { benchDelegationOverhead } from './delegation-overhead';
import { executionHistories } from './support/histories';
import { leadInput, tempDir, writeScript } from './support/subagent-input';
import { formatTable, msRow, type BenchResult } from './stats';

/** Hand-over: leads (run one after the other) × children each, through one slot. */
const HANDOVER_LEADS = 3;
const HANDOVER_CHILDREN = 20;
/** Uncontended: leads of one child each, one after the other. */
const UNCONTENDED_RUNS = 20;
/** Throughput: leads started at once × children each, through THROUGHPUT_SLOTS slots. */
const THROUGHPUT_LEADS = 10;
const THROUGHPUT_CHILDREN = 20;
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

function leadScript(children: number, childDelayMs: number): ModelScriptFileInput {
  const calls = Array.from({ length: children }, (_, i) => ({
    name: 'task',
    id: `c${i}`,
    args: { description: `Part ${i}`, prompt: `Do part ${i}.`, subagent_type: 'general-purpose' },
  }));
  return {
    scripts: [
      { agent: 'lead', turns: [{ tool_calls: calls }, { content: 'Combined.' }] },
      {
        agent: 'general-purpose',
        repeat_last: true,
        turns: [{ content: 'Part done.', delay_ms: childDelayMs }],
      },
    ],
  };
}

/**
 * A lead whose first response makes `children` task calls, all allowed at once: the lead's own per-response
 * cap follows its config's `subagent_runtime.max_running`; the worker's settings are the ones admission enforces.
 */
function leadRun(children: number, childDelayMs = 0): LeadRunInput {
  const dir = tempDir('bench-admission');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return leadInput({
    workspace,
    scriptFile: writeScript(dir, leadScript(children, childDelayMs)),
    config: {
      subagent_runtime: { max_running: Math.max(children, 1) },
      subagents: { max_total_per_run: Math.max(children, 1) },
    },
  });
}

/** What a child's history says: when it started, made its first model call, closed. */
interface ChildTimes {
  id: string;
  started: number;
  firstModelCall: number;
  closed: number;
}

function childTimes(id: string, events: HistoryEvent[]): ChildTimes {
  const scheduled = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  const started = events.find(
    (e) =>
      Number(e.activityTaskStartedEventAttributes?.scheduledEventId ?? -1) === Number(scheduled?.eventId),
  );
  const last = events.at(-1);
  if (!started || !last?.workflowExecutionCompletedEventAttributes) {
    throw new Error(`${id}: no model call, or did not complete`);
  }
  return { id, started: at(events[0]), firstModelCall: at(started), closed: at(last) };
}

/** Per slot (the child's workflow id), what the lead's history says about its delegation. */
interface LeadTimes {
  /** The workflow task that sent the acquire signal, completed. */
  acquireSent: number;
  /** The answer `granted`, received. */
  granted: number;
  startInitiated: number;
  /** The lead heard the child completed. */
  childCompleted: number;
  releaseSent: number;
  /** The release signal acknowledged (the delegation's result is handed to the loop after this). */
  releaseAcked: number;
}

function leadTimes(events: HistoryEvent[]): Map<string, LeadTimes> {
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const out = new Map<string, Partial<LeadTimes>>();
  const entry = (slot: string) => out.get(slot) ?? out.set(slot, {}).get(slot)!;
  const releaseBySignal = new Map<number, string>();
  for (const e of events) {
    const signalOut = e.signalExternalWorkflowExecutionInitiatedEventAttributes;
    if (signalOut) {
      const slot = firstArg<{ slot: string }>(signalOut.input)?.slot;
      if (slot === undefined) continue;
      if (signalOut.signalName === 'admission_acquire') {
        entry(slot).acquireSent = at(byId.get(Number(signalOut.workflowTaskCompletedEventId))!);
      } else if (signalOut.signalName === 'admission_release') {
        entry(slot).releaseSent = at(e);
        releaseBySignal.set(Number(e.eventId), slot);
      }
    }
    const acked = e.externalWorkflowExecutionSignaledEventAttributes;
    const ackedSlot = acked && releaseBySignal.get(Number(acked.initiatedEventId));
    if (ackedSlot) entry(ackedSlot).releaseAcked = at(e);
    const signalIn = e.workflowExecutionSignaledEventAttributes;
    if (signalIn?.signalName === 'admission_answer') {
      const answer = firstArg<{ slot: string; outcome: string }>(signalIn.input);
      if (answer?.outcome === 'granted') entry(answer.slot).granted = at(e);
    }
    const start = e.startChildWorkflowExecutionInitiatedEventAttributes;
    if (start?.workflowId) entry(start.workflowId).startInitiated = at(e);
    const completed = e.childWorkflowExecutionCompletedEventAttributes;
    if (completed?.workflowExecution?.workflowId) {
      entry(completed.workflowExecution.workflowId).childCompleted = at(e);
    }
  }
  for (const [slot, times] of out) {
    for (const key of [
      'acquireSent',
      'granted',
      'startInitiated',
      'childCompleted',
      'releaseSent',
      'releaseAcked',
    ] as const) {
      if (times[key] === undefined) throw new Error(`lead history: no ${key} for ${slot}`);
    }
  }
  return out as Map<string, LeadTimes>;
}

/** What the admission workflow's histories say: per slot, when it heard and answered; and its own load. */
interface AdmissionTimes {
  /** Per slot, the first time (a request heard nothing for a minute is sent again, and answered again). */
  acquireReceived: Map<string, number>;
  grantSent: Map<string, number>;
  releaseReceived: Map<string, number>;
  /** Requests received again: the delegating workflow never heard the answer. */
  resentAcquires: number;
  /**
   * Answers sent in the workflow task that continued as new: the server drops a signal whose sender has
   * closed, so the delegation hears nothing until it sends its request again (ADMISSION_RESEND_MS).
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
    grantSent: new Map(),
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
        if (answer?.outcome === 'granted') first(out.grantSent, answer.slot, at(e));
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
      // Every lead has ended, so every release was delivered; the admission workflow may not have run it yet.
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

/** One slot, leads of 20 children: how soon a released slot becomes the next child's first model call. */
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
      const out: { children: ChildTimes[]; lead: Map<string, LeadTimes> }[] = [];
      for (let run = 0; run < HANDOVER_LEADS; run++) {
        const workflowId = `${taskQueue}/lead-${run}`;
        await runLead(client, taskQueue, workflowId, leadRun(HANDOVER_CHILDREN));
        const children = await Promise.all(
          Array.from({ length: HANDOVER_CHILDREN }, async (_, i) => {
            const id = `${workflowId}/task/c${i}`;
            return childTimes(id, await history(client, id));
          }),
        );
        out.push({ children, lead: leadTimes(await history(client, workflowId)) });
      }
      return out;
    },
  );
  checkCounters('hand-over', state, HANDOVER_LEADS * HANDOVER_CHILDREN);
  const fromClose: number[] = [];
  const fromRelease: number[] = [];
  const hops = {
    closeToLead: [] as number[],
    leadToRelease: [] as number[],
    releaseTransit: [] as number[],
    admissionDecides: [] as number[],
    grantTransit: [] as number[],
    leadStarts: [] as number[],
    childToModel: [] as number[],
  };
  const executing: [number, number][] = [];
  for (const { children, lead } of leads) {
    const order = [...children].sort((a, b) => a.firstModelCall - b.firstModelCall);
    executing.push(...order.map((c): [number, number] => [c.firstModelCall, c.closed]));
    for (let k = 0; k + 1 < order.length; k++) {
      const done = order[k];
      const next = order[k + 1];
      const released = admission.releaseReceived.get(done.id);
      const granted = admission.grantSent.get(next.id);
      const doneLead = lead.get(done.id)!;
      const nextLead = lead.get(next.id)!;
      if (released === undefined || granted === undefined)
        throw new Error(`no admission events for ${next.id}`);
      fromClose.push(next.firstModelCall - done.closed);
      fromRelease.push(next.firstModelCall - released);
      hops.closeToLead.push(doneLead.childCompleted - done.closed);
      hops.leadToRelease.push(doneLead.releaseSent - doneLead.childCompleted);
      hops.releaseTransit.push(released - doneLead.releaseSent);
      hops.admissionDecides.push(granted - released);
      hops.grantTransit.push(nextLead.granted - granted);
      hops.leadStarts.push(nextLead.startInitiated - nextLead.granted);
      hops.childToModel.push(next.firstModelCall - nextLead.startInitiated);
    }
  }
  const own = leads.flatMap(({ children }) => children.map((c) => c.closed - c.started));
  return [
    msRow('max_running 1: child k closed → child k+1 first model call', fromClose),
    msRow('max_running 1: release received by admission → next first model call', fromRelease),
    msRow('  hop: child closed → the lead hears it', hops.closeToLead),
    msRow('  hop: the lead hears it → release signal sent', hops.leadToRelease),
    msRow('  hop: release sent → received by admission', hops.releaseTransit),
    msRow('  hop: release received → grant sent (admission task)', hops.admissionDecides),
    msRow('  hop: grant sent → received by the lead', hops.grantTransit),
    msRow('  hop: grant received → child start initiated (lead task)', hops.leadStarts),
    msRow('  hop: child start initiated → its first model call', hops.childToModel),
    msRow("max_running 1: a child's own execution (start to close)", own),
    countRow('max_running 1: most children executing at once', 'subagents', maxOverlap(executing)),
  ];
}

/** Plenty of slots: what asking for one adds to a delegation before its child starts, and after it ends. */
async function uncontended(setting: Setting): Promise<BenchResult[]> {
  const { client } = setting;
  const {
    value: samples,
    admission,
    state,
  } = await withAdmission(
    setting,
    'uncontended',
    { max_running: 50, max_queued: 64, ...QUEUE_SETTINGS },
    async (taskQueue) => {
      const out: { slot: string; lead: LeadTimes; child: ChildTimes; nextModelCall: number }[] = [];
      for (let run = 0; run < UNCONTENDED_RUNS; run++) {
        const workflowId = `${taskQueue}/lead-${run}`;
        await runLead(client, taskQueue, workflowId, leadRun(1));
        const slot = `${workflowId}/task/c0`;
        const events = await history(client, workflowId);
        const lead = leadTimes(events).get(slot)!;
        // The lead's next model call, scheduled once the delegation's result reached the loop.
        const nextModelCall = events.find(
          (e) =>
            e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel' &&
            at(e) >= lead.childCompleted,
        );
        if (!nextModelCall) throw new Error(`${workflowId}: no model call after the child`);
        out.push({
          slot,
          lead,
          child: childTimes(slot, await history(client, slot)),
          nextModelCall: at(nextModelCall),
        });
      }
      return out;
    },
  );
  checkCounters('uncontended', state, UNCONTENDED_RUNS);
  const seen = (map: Map<string, number>, slot: string) => {
    const time = map.get(slot);
    if (time === undefined) throw new Error(`no admission event for ${slot}`);
    return time;
  };
  return [
    msRow(
      'uncontended: acquire sent (its task completed) → child start initiated',
      samples.map(({ lead }) => lead.startInitiated - lead.acquireSent),
    ),
    msRow(
      '  hop: acquire sent → received by admission',
      samples.map(({ slot, lead }) => seen(admission.acquireReceived, slot) - lead.acquireSent),
    ),
    msRow(
      '  hop: acquire received → grant sent (admission task)',
      samples.map(({ slot }) => seen(admission.grantSent, slot) - seen(admission.acquireReceived, slot)),
    ),
    msRow(
      '  hop: grant sent → received by the lead',
      samples.map(({ slot, lead }) => lead.granted - seen(admission.grantSent, slot)),
    ),
    msRow(
      '  hop: grant received → child start initiated (lead task)',
      samples.map(({ lead }) => lead.startInitiated - lead.granted),
    ),
    msRow(
      'uncontended: the lead hears the child closed → release acknowledged',
      samples.map(({ lead }) => lead.releaseAcked - lead.childCompleted),
    ),
    msRow(
      "uncontended: the lead hears the child closed → the lead's next model call scheduled",
      samples.map(({ lead, nextModelCall }) => nextModelCall - lead.childCompleted),
    ),
    msRow(
      "uncontended: the child's own execution (start to close)",
      samples.map(({ child }) => child.closed - child.started),
    ),
  ];
}

/** 10 leads × 20 delegations of 200 ms children through 3 slots. */
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
      const children = await Promise.all(
        leadIds.flatMap((lead) =>
          Array.from({ length: THROUGHPUT_CHILDREN }, async (_, i) => {
            const id = `${lead}/task/c${i}`;
            return childTimes(id, await history(client, id));
          }),
        ),
      );
      return { wall, children };
    },
  );
  checkCounters('throughput', state, total);
  const { wall, children } = value;
  const own = children.map((c) => c.closed - c.started);
  const ownP50 = msRow('', own).p50;
  const ideal = (total / THROUGHPUT_SLOTS) * ownP50;
  const first = Math.min(...children.map((c) => c.started));
  const span = Math.max(...children.map((c) => c.closed)) - first;
  const held = children.map((c): [number, number] => {
    const grant = admission.grantSent.get(c.id);
    const release = admission.releaseReceived.get(c.id);
    if (grant === undefined || release === undefined) throw new Error(`no admission events for ${c.id}`);
    return [grant, release];
  });
  // A queued request is granted when a release comes in: the latest release received before its grant.
  const releases = [...admission.releaseReceived.values()].sort((a, b) => a - b);
  const handOver = held
    .map(([grant]) => grant - (releases.filter((release) => release <= grant).at(-1) ?? Number.NaN))
    .filter((ms) => !Number.isNaN(ms));
  const grantToModel = children.map((c) => c.firstModelCall - admission.grantSent.get(c.id)!);
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
    msRow(name("a child's own execution (start to close)"), own),
    countRow(name(`ideal, ${total} / ${THROUGHPUT_SLOTS} × a child's own (p50)`), 'ms', ideal),
    countRow(name(`wall, ${THROUGHPUT_LEADS} leads started → all ended`), 'ms', wall),
    countRow(name('first child started → last child closed'), 'ms', span),
    countRow(name('wall / ideal'), '×', wall / ideal),
    countRow(name('(first child started → last closed) / ideal'), '×', span / ideal),
    countRow(
      name('most children executing at once (first model call → close)'),
      'subagents',
      maxOverlap(executing),
    ),
    countRow(
      name('most children open at once (start → close)'),
      'subagents',
      maxOverlap(children.map((c) => [c.started, c.closed])),
    ),
    countRow(name('most slots held at once (grant sent → release received)'), 'subagents', maxOverlap(held)),
    countRow(name('slots in use: executing children (first model call → close)'), '%', 100 * busy(executing)),
    countRow(name('slots in use: held (grant sent → release received)'), '%', 100 * busy(held)),
    msRow(name('release received → next grant sent (admission task)'), handOver),
    msRow(name("grant sent → the child's first model call"), grantToModel),
    countRow(name("longest grant sent → the child's first model call"), 'ms', Math.max(...grantToModel)),
    countRow(
      name('answers sent in the task that continued as new (lost)'),
      'answers',
      admission.answersAtContinueAsNew,
    ),
    countRow(name('requests sent again (their answer never came)'), 'requests', admission.resentAcquires),
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
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await connectOrStartServer({
    headless: true,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  try {
    const results = [...(await benchAdmission(server)), ...(await benchDelegationOverhead(server))];
    process.stdout.write(`${formatTable(results)}\n`);
  } finally {
    await server.stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
