/**
 * The chaos scenario (issue 8), shared by test/temporal/chaos.test.ts (bounded for CI) and `npm run chaos`
 * (long): lead runs that each delegate to three subagents, on a fleet of worker processes of which one is
 * SIGKILLed at random every few seconds and restarted. Every subagent appends to a journal in the run's
 * workspace with a tool call that is not idempotent (`write_file` with `append: true`), so a blind retry
 * would show as a line written twice. The scripted model plans every turn per agent, so what each subagent does is known.
 *
 * Afterwards each run is checked from the outside: its result and ledger, the child starts in its history
 * (every continue-as-new execution included), and the journal lines against what each append call reported.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { admissionStateQuery, admissionWorkflowId } from '../../contracts/admission';
import type { LeadRunResult } from '../../contracts/lead';
import { subagentStepsQuery } from '../../contracts/queries';
import { WORKSPACE_FAILURES } from '../../contracts/workspace';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { WorkerFleet, type WorkerProcessOptions } from './chaos-workers';
import { historyOutline } from './histories';
import { leadInput, tempDir, writeScript } from './subagent-input';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export const CHAOS_PARTS = ['north', 'south', 'east'] as const;
const APPENDS_PER_SUBAGENT = 2;
const CHECKS_AT_ONCE = 8;

/**
 * One journal per subagent: appends to one new file from several processes at once trip a check-then-use
 * race in the file tools (a file created between `realpath` and `lstat` is taken for a dangling link and the
 * write refused), which is not what this scenario is about.
 */
function journalOf(part: string): string {
  return `journal-${part}.txt`;
}

export interface ChaosOptions {
  client: Client;
  workers: WorkerProcessOptions;
  /** Worker processes alive at once (one of them is killed at a time). */
  workerCount: number;
  /** Lead runs to complete; the killing goes on while any of them is in flight. */
  runs?: number;
  /** Kills to make; when `runs` is not set, new runs keep starting until this many kills are done. */
  kills?: number;
  /** Lead runs in flight at once. */
  concurrency: number;
  /** The pause between a replacement worker polling and the next kill: uniform in [min, max] ms. */
  killEveryMs: readonly [number, number];
  /** The scripted model's delay per turn: the window in which a kill catches a model call in flight. */
  modelDelayMs: number;
  seed: number;
  /** Runs not finished by then are reported as such instead of awaited. */
  deadlineMs: number;
  /** The workers' `subagent_runtime.max_running`: the admission bound the kills must not break or leak. */
  maxRunning: number;
  log?: (line: string) => void;
}

export interface ChaosRun {
  workflowId: string;
  workspace: string;
  /** When its lane started it, in ms after the first worker started. */
  startedAtMs: number;
  durationMs: number;
  result?: LeadRunResult;
  error?: string;
}

/** What one append call reported to its subagent, and how many times its line is in the journal. */
export interface AppendOutcome {
  line: string;
  /** `failed`: an error tool result, e.g. "interrupted … may or may not have run" after a kill. */
  reported: 'done' | 'failed' | 'not called';
  /** The tool result the subagent saw. */
  told?: string;
  written: number;
}

/** How the kills showed in the runs' histories (leads and subagents), summed over every run. */
export interface Recoveries {
  /** Activity attempts after the first (a model call whose worker died, retried on another). */
  retried_activities: number;
  /** Activities that ran out of attempts (a non-idempotent tool call whose worker died: not retried). */
  timed_out_activities: number;
  /** Workflow tasks lost with their worker mid-task: the server waits the workflow task timeout (10 s). */
  workflow_task_timeouts: number;
  /** Workflow tasks that waited on a dead worker's sticky queue until they moved to the shared one. */
  sticky_timeouts: number;
}

export interface ChaosReport {
  seed: number;
  /** From the first worker start to the last run's end (the checks afterwards not included). */
  wallMs: number;
  kills: number;
  runs: ChaosRun[];
  appends: AppendOutcome[];
  recoveries: Recoveries;
  /** Every broken promise, one line each, naming the run; empty when the run of chaos passed. */
  violations: string[];
}

/** A small seeded generator (mulberry32): the same seed makes the same choice of victims and pauses. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function journalLine(part: string, k: number): string {
  return `${part} append ${k}`;
}

/** The lead delegates the three parts at once; each subagent appends, lists, appends again, answers. */
export function chaosScript(modelDelayMs: number): ModelScriptFileInput {
  const append = (part: string, k: number) => ({
    name: 'write_file',
    args: { path: journalOf(part), content: `${journalLine(part, k)}\n`, append: true },
  });
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          {
            content: 'Three parts, delegated at once.',
            tool_calls: CHAOS_PARTS.map((part) => ({
              name: 'task',
              id: part,
              args: {
                description: `Survey ${part}`,
                prompt: `Survey the ${part} part and journal it.`,
                subagent_type: 'general-purpose',
              },
            })),
            delay_ms: modelDelayMs,
          },
          { content: 'All three parts surveyed.', delay_ms: modelDelayMs },
        ],
      },
      ...CHAOS_PARTS.map((part) => ({
        agent: 'general-purpose',
        prompt_contains: `the ${part} part`,
        turns: [
          { content: 'Journal the start.', tool_calls: [append(part, 1)], delay_ms: modelDelayMs },
          { content: 'Look around.', tool_calls: [{ name: 'ls', args: {} }], delay_ms: modelDelayMs },
          { content: 'Journal the end.', tool_calls: [append(part, 2)], delay_ms: modelDelayMs },
          { content: `The ${part} part is surveyed.`, delay_ms: modelDelayMs },
        ],
      })),
    ],
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs the scenario; never throws for a broken promise (those are `violations`), only for a broken harness. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  if (options.runs === undefined && options.kills === undefined) {
    throw new Error('chaos: set runs, kills or both (neither would run forever)');
  }
  const log = options.log ?? (() => undefined);
  const random = seededRandom(options.seed);
  const dir = tempDir('chaos');
  const scriptFile = writeScript(dir, chaosScript(options.modelDelayMs));
  // One host id a slot: a restarted worker is the same host, its runs' workspaces on the same disk, so they
  // wait for it rather than move (the many-hosts test moves them: test/temporal/many-hosts.test.ts).
  const slotConfig = (slot: number) => {
    const config = join(dir, `worker-config-${slot}.yaml`);
    writeFileSync(
      config,
      `subagent_runtime:\n  max_running: ${options.maxRunning}\nworker:\n  host_id: chaos-${slot}\n`,
    );
    return { SUBAGENTS_CONFIG: config };
  };
  const fleet = new WorkerFleet({ ...options.workers, slotEnv: slotConfig }, options.workerCount);
  const started = Date.now();
  const deadline = started + options.deadlineMs;
  await fleet.start();
  try {
    let kills = 0;
    let running = true;
    const killing = (async () => {
      const [min, max] = options.killEveryMs;
      while (running && (options.kills === undefined || kills < options.kills)) {
        const pause = min + random() * (max - min);
        for (const until = Date.now() + pause; running && Date.now() < until;) await sleep(50);
        if (!running) break;
        const slot = Math.floor(random() * fleet.size);
        const pid = fleet.pids()[slot];
        const at = await fleet.kill(slot);
        kills += 1;
        log(`kill ${kills}: worker ${slot}, pid ${pid}, at ${new Date(at).toISOString()}`);
        await fleet.restart(slot);
      }
    })();
    // Awaited once the runs are done; a replacement that cannot start must not crash the process before.
    killing.catch(() => undefined);

    const runs: ChaosRun[] = [];
    const wantsMore = () =>
      Date.now() < deadline &&
      (options.runs !== undefined ? runs.length < options.runs : kills < (options.kills ?? 0));
    const lane = async () => {
      while (wantsMore()) {
        const index = runs.length;
        const workspace = join(dir, `run-${index}`, 'workspace');
        mkdirSync(workspace, { recursive: true });
        const run: ChaosRun = {
          workflowId: `${options.workers.taskQueue}-lead-${index}`,
          workspace,
          startedAtMs: Date.now() - started,
          durationMs: 0,
        };
        runs.push(run);
        await executeRun(options.client, run, options.workers.taskQueue, scriptFile, deadline);
        log(`run ${index}: ${run.result?.status ?? run.error} in ${(run.durationMs / 1000).toFixed(1)} s`);
      }
    };
    try {
      await Promise.all(Array.from({ length: options.concurrency }, lane));
    } finally {
      running = false;
      await killing;
    }

    const wallMs = Date.now() - started;
    const checked: RunCheck[] = [];
    // A few runs at a time: each check reads four histories and three step logs.
    for (let i = 0; i < runs.length; i += CHECKS_AT_ONCE) {
      const batch = runs.slice(i, i + CHECKS_AT_ONCE);
      checked.push(...(await Promise.all(batch.map((run) => checkRun(options.client, run)))));
    }
    const admissionViolations = await checkAdmission(options.client, options.workers.taskQueue, runs);
    const recoveries: Recoveries = noRecoveries();
    for (const check of checked) {
      for (const key of Object.keys(recoveries) as (keyof Recoveries)[])
        recoveries[key] += check.recoveries[key];
    }
    return {
      seed: options.seed,
      wallMs,
      kills,
      runs,
      appends: checked.flatMap((check) => check.appends),
      recoveries,
      violations: [...checked.flatMap((check) => check.violations), ...admissionViolations],
    };
  } finally {
    await fleet.stop();
  }
}

const EventType = temporal.api.enums.v1.EventType;

function eventName(event: HistoryEvent): string {
  return (EventType[event.eventType ?? 0] ?? String(event.eventType)).replace(/^EVENT_TYPE_/, '');
}

function eventMs(event: HistoryEvent | undefined): number {
  const time = event?.eventTime;
  return time ? Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : 0;
}

/** A run the deadline caught: when it started, how far it got, what it last did and waits on. */
async function whereItStands(
  client: Client,
  id: string,
  events: HistoryEvent[],
  run: ChaosRun,
): Promise<string> {
  const last = events.slice(-6).map(eventName).join(' → ');
  const quietS = ((Date.now() - eventMs(events.at(-1))) / 1000).toFixed(0);
  let pending = '';
  try {
    const raw = (await client.workflow.getHandle(id).describe()).raw;
    const activities = (raw.pendingActivities ?? []).map(
      (a) => `${a.activityType?.name} attempt ${a.attempt} (${a.lastFailure?.message ?? 'no failure'})`,
    );
    const children = (raw.pendingChildren ?? []).map((c) => c.workflowId ?? '?');
    pending = `; pending: ${[...activities, ...children].join(', ') || 'nothing'}`;
  } catch (err) {
    pending = `; describe failed: ${err instanceof Error ? err.message : String(err)}`;
  }
  return (
    `started at +${(run.startedAtMs / 1000).toFixed(0)} s; ${events.length} events, ` +
    `the last ${quietS} s ago: ${last}${pending}`
  );
}

/** Both admission pools as they stand (for a report whose runs did not all end). */
async function admissionStates(client: Client, taskQueue: string): Promise<string[]> {
  const pools = [
    ['subagents', admissionWorkflowId(taskQueue)],
    ['runs', admissionWorkflowId(taskQueue, 'runs')],
  ] as const;
  return Promise.all(
    pools.map(async ([pool, workflowId]) => {
      try {
        const state = await client.workflow.getHandle(workflowId).query(admissionStateQuery);
        return `admission (${pool}): ${state.running.length} running, ${state.queued.length} queued`;
      } catch (err) {
        const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
        const why = `${err instanceof Error ? err.message : String(err)}${cause}`;
        return `admission (${pool}): not answering (${why}); ${await admissionHistory(client, workflowId)}`;
      }
    }),
  );
}

/** An admission workflow that does not answer: how its latest execution stands, from its history. */
async function admissionHistory(client: Client, workflowId: string): Promise<string> {
  try {
    const handle = client.workflow.getHandle(workflowId);
    const raw = (await handle.describe()).raw;
    const task = raw.pendingWorkflowTask;
    const pending = task
      ? `a workflow task ${String(task.state)} attempt ${task.attempt}`
      : 'no workflow task';
    const events = (await handle.fetchHistory()).events ?? [];
    const timeouts = events.filter((e) => e.workflowTaskTimedOutEventAttributes).length;
    const failures = events.filter((e) => e.workflowTaskFailedEventAttributes);
    const failure = failures.at(-1)?.workflowTaskFailedEventAttributes?.failure?.message;
    return (
      `${events.length} events (${timeouts} task timeouts, ${failures.length} task ` +
      `failures${failure ? `, the last: ${failure.slice(0, 300)}` : ''}), the last ` +
      `${((Date.now() - eventMs(events.at(-1))) / 1000).toFixed(0)} s ago: ` +
      `${events.slice(-8).map(eventName).join(' → ')}; ${pending}`
    );
  } catch (err) {
    return `its history could not be read: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** No slot outlives the runs: once every run has ended, nothing is held or queued at admission. */
async function checkAdmission(
  client: Client,
  taskQueue: string,
  runs: readonly ChaosRun[],
): Promise<string[]> {
  if (runs.some((run) => run.result === undefined)) return admissionStates(client, taskQueue);
  const state = await client.workflow.getHandle(admissionWorkflowId(taskQueue)).query(admissionStateQuery);
  const problems: string[] = [];
  if (state.running.length > 0) {
    problems.push(`admission: ${state.running.length} slots still held after every run ended`);
  }
  if (state.queued.length > 0) {
    problems.push(`admission: ${state.queued.length} requests still queued after every run ended`);
  }
  return problems;
}

async function executeRun(
  client: Client,
  run: ChaosRun,
  taskQueue: string,
  scriptFile: string,
  deadline: number,
): Promise<void> {
  const started = Date.now();
  try {
    const handle = await client.workflow.start(leadRunWorkflow, {
      taskQueue,
      workflowId: run.workflowId,
      args: [leadInput({ workspace: run.workspace, scriptFile, prompt: 'Survey the site.' })],
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('not finished by the deadline')), deadline - Date.now());
    });
    try {
      run.result = await Promise.race([handle.result(), late]);
    } finally {
      clearTimeout(timer);
    }
  } catch (err) {
    run.error = err instanceof Error ? err.message : String(err);
  }
  run.durationMs = Date.now() - started;
}

/** Every event of a workflow id, across its continue-as-new executions, oldest first. */
export async function historyChain(client: Client, workflowId: string): Promise<HistoryEvent[]> {
  const latest = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const start = latest[0]?.workflowExecutionStartedEventAttributes;
  // A single execution: the latest one is the whole story.
  if (!start?.continuedExecutionRunId) return latest;
  const events: HistoryEvent[] = [];
  let runId: string | undefined = start.firstExecutionRunId ?? undefined;
  while (runId) {
    const execution: WorkflowHandle = client.workflow.getHandle(workflowId, runId);
    const history = (await execution.fetchHistory()).events ?? [];
    events.push(...history);
    runId = history.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return events;
}

/** Child workflow id → how many times the lead's history asked to start it. */
function childStarts(events: HistoryEvent[]): Map<string, number> {
  const starts = new Map<string, number>();
  for (const event of events) {
    const id = event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
    if (id) starts.set(id, (starts.get(id) ?? 0) + 1);
  }
  return starts;
}

/**
 * How many append calls a subagent's history ran as activities. Other tool calls run as activities too (on a
 * home host's queue every workspace call does), and a call that never ran is sent again where the workspace
 * is: one that never started (it waited on a host that had died), or one a host refused before running it
 * (it held an older epoch of the run's workspace, or had no workspace to serve). Only an append that started
 * and was not refused so counts, known by the summary each tool activity carries (its tool and arguments).
 */
function appendActivities(events: HistoryEvent[]): number {
  const started = new Set<string>();
  const refused = new Set<string>();
  for (const e of events) {
    const scheduled = e.activityTaskStartedEventAttributes?.scheduledEventId;
    if (scheduled !== undefined && scheduled !== null) started.add(String(scheduled));
    const failed = e.activityTaskFailedEventAttributes;
    const type = failed?.failure?.applicationFailureInfo?.type;
    const beforeRunning =
      type === WORKSPACE_FAILURES.unavailable ||
      (type === WORKSPACE_FAILURES.moved && !(failed?.failure?.message ?? '').includes('while the call ran'));
    if (failed && beforeRunning) refused.add(String(failed.scheduledEventId));
  }
  return events.filter((e) => {
    if (e.activityTaskScheduledEventAttributes?.activityType?.name !== 'executeToolCall') return false;
    const id = String(e.eventId);
    if (!started.has(id) || refused.has(id)) return false;
    const summary = e.userMetadata?.summary;
    const line = summary ? String(defaultPayloadConverter.fromPayload(summary)) : '';
    return line.startsWith('write_file:') && /"append":\s*true/.test(line);
  }).length;
}

/** What a subagent was told about each append it asked for, in order: its step log, read by query. */
async function appendReports(client: Client, childId: string): Promise<{ ok: boolean; text: string }[]> {
  const steps = await client.workflow.getHandle(childId).query(subagentStepsQuery, 0);
  const calls = steps.flatMap((step) =>
    step.kind === 'ai' ? step.tool_calls.filter((call) => call.name === 'write_file') : [],
  );
  return calls.map((call) => {
    const result = steps.find((step) => step.kind === 'tool' && step.tool_call_id === call.id);
    return {
      ok: result !== undefined && result.kind === 'tool' && !result.is_error,
      text: result?.text ?? '',
    };
  });
}

function noRecoveries(): Recoveries {
  return { retried_activities: 0, timed_out_activities: 0, workflow_task_timeouts: 0, sticky_timeouts: 0 };
}

function countRecoveries(events: HistoryEvent[], into: Recoveries): void {
  const { TIMEOUT_TYPE_SCHEDULE_TO_START } = temporal.api.enums.v1.TimeoutType;
  for (const event of events) {
    into.retried_activities += Math.max(0, (event.activityTaskStartedEventAttributes?.attempt ?? 1) - 1);
    if (event.activityTaskTimedOutEventAttributes) into.timed_out_activities += 1;
    const timeout = event.workflowTaskTimedOutEventAttributes?.timeoutType;
    if (timeout === TIMEOUT_TYPE_SCHEDULE_TO_START) into.sticky_timeouts += 1;
    else if (timeout !== undefined && timeout !== null) into.workflow_task_timeouts += 1;
  }
}

interface RunCheck {
  appends: AppendOutcome[];
  recoveries: Recoveries;
  violations: string[];
}

async function checkRun(client: Client, run: ChaosRun): Promise<RunCheck> {
  const id = run.workflowId;
  const recoveries: Recoveries = noRecoveries();
  const violations: string[] = [];
  const leadEvents = await historyChain(client, id);
  if (run.result?.status !== 'completed') {
    const ended = run.result ? `${run.result.status}: ${run.result.error}` : run.error;
    // Where an unfinished run stood: slow (events still coming) and stalled (none for long) read differently.
    const where = run.result ? '' : `; ${await whereItStands(client, id, leadEvents, run)}`;
    violations.push(`${id}: ended ${ended}${where}`);
  }
  const ledger = run.result?.ledger.map((entry) => entry.status) ?? [];
  if (ledger.length !== CHAOS_PARTS.length || ledger.some((status) => status !== 'completed')) {
    // Why each one that did not complete ended, for the one who reads the failure.
    const why = (run.result?.ledger ?? [])
      .filter((entry) => entry.status !== 'completed')
      .map((entry) => `${entry.status}: ${entry.error ?? entry.result_brief ?? '(no error recorded)'}`);
    violations.push(
      `${id}: ledger is [${ledger.join(', ')}], not ${CHAOS_PARTS.length} × completed` +
        (why.length > 0 ? ` (${why.join('; ')})` : ''),
    );
  }

  countRecoveries(leadEvents, recoveries);
  const starts = childStarts(leadEvents);
  const expectedChildren = CHAOS_PARTS.map((part) => `${id}/task/${part}`);
  for (const child of new Set([...expectedChildren, ...starts.keys()])) {
    const count = starts.get(child) ?? 0;
    if (count !== 1 || !expectedChildren.includes(child)) {
      violations.push(`${id}: child ${child} started ${count} times (expected once)`);
    }
  }

  const written = new Map<string, number>();
  for (const part of CHAOS_PARTS) {
    const path = join(run.workspace, journalOf(part));
    const lines = existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
    for (const line of lines) written.set(line, (written.get(line) ?? 0) + 1);
  }
  const appends: AppendOutcome[] = [];
  for (const part of CHAOS_PARTS) {
    const child = `${id}/task/${part}`;
    const started = starts.has(child);
    const childEvents = started ? await historyChain(client, child) : [];
    countRecoveries(childEvents, recoveries);
    const entry = run.result?.ledger.find((e) => e.workflow_id === child);
    if (entry && entry.status !== 'completed') {
      // Where the subagent's own history went wrong, for the one who reads the failure.
      violations.push(`${child} ended ${entry.status}; its history:\n${historyOutline(childEvents)}`);
    }
    const scheduled = appendActivities(childEvents);
    if (scheduled > APPENDS_PER_SUBAGENT) {
      violations.push(`${child}: ${scheduled} append activities scheduled (a call was retried blindly)`);
    }
    const reports = started ? await appendReports(client, child) : [];
    for (let k = 1; k <= APPENDS_PER_SUBAGENT; k++) {
      const line = journalLine(part, k);
      const report = reports[k - 1];
      const outcome: AppendOutcome = {
        line,
        reported: report === undefined ? 'not called' : report.ok ? 'done' : 'failed',
        told: report?.text,
        written: written.get(line) ?? 0,
      };
      written.delete(line);
      appends.push(outcome);
      if (outcome.written > 1) violations.push(`${id}: "${line}" written ${outcome.written} times`);
      if (outcome.reported === 'done' && outcome.written !== 1) {
        violations.push(
          `${id}: "${line}" reported done ("${outcome.told}") but written ${outcome.written} times`,
        );
      }
      if (outcome.reported === 'not called' && outcome.written > 0) {
        violations.push(`${id}: "${line}" written but never called`);
      }
    }
  }
  for (const [line, count] of written) violations.push(`${id}: unexpected journal line "${line}" × ${count}`);
  return { appends, recoveries, violations };
}
