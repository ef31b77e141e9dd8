/**
 * Scheduled runs on the server's Schedules API: create, list, describe, pause, unpause, trigger, delete. The
 * server keeps the schedule and starts each occurrence itself, so a schedule goes on while no client runs.
 *
 * Ids: a schedule named `nightly` is the schedule `subagents-schedule/nightly`; each occurrence is a lead run
 * whose workflow id, and so its run id, is `schedule-nightly-<nominal time>` (the server appends the time, e.g.
 * `schedule-nightly-2025-06-01T02:00:00Z`): one id per occurrence, so a start the server retries finds the
 * run it already started instead of starting a second one.
 */
import { randomUUID } from 'node:crypto';
import {
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  WorkflowNotFoundError,
  type Client,
  type ScheduleDescription,
  type ScheduleExecutionResult,
  type ScheduleHandle,
  type ScheduleOptionsAction,
  type ScheduleOverlapPolicy,
  type ScheduleSpec,
  type ScheduleSummary,
} from '@temporalio/client';
import { msToTs, tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import type { BatchInput, BatchResult } from '../contracts/batch';
import { assertLeadRunInput } from '../contracts/inputs';
import type { LeadRunInput, LeadRunStatus } from '../contracts/lead';
import { runSearchAttributes } from '../contracts/search-attributes';
import { scoped } from '../contracts/run-scope';
import { explainStartFailure } from './search-attribute-errors';
import { promptDetails } from '../contracts/text';
import type * as workflows from '../workflows';
import { checkWorkspaceFolder } from './api';
import { closedOutcome } from './id-kinds';

const LEAD_RUN_WORKFLOW = 'leadRunWorkflow' satisfies keyof typeof workflows;
type LeadRunWorkflow = typeof workflows.leadRunWorkflow;
const BATCH_WORKFLOW = 'batchWorkflow' satisfies keyof typeof workflows;
type BatchWorkflow = typeof workflows.batchWorkflow;

/** The id prefix of the paused schedule `create` makes to ask the server when a timing fires (not listed). */
const PROBE_ID_PREFIX = 'subagents-schedule-probe/';

/** Every schedule of this project has an id with this prefix: `list` shows these only. */
export const SCHEDULE_ID_PREFIX = 'subagents-schedule/';

/** A schedule's name: it is part of ids and of the default workspace folder's path. */
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
export const MAX_NAME_LENGTH = 64;

/** Why `name` cannot name a schedule, or undefined when it can. */
export function scheduleNameProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  if (name.length > MAX_NAME_LENGTH) return `is ${name.length} characters long (at most ${MAX_NAME_LENGTH})`;
  if (!NAME_PATTERN.test(name))
    return 'may hold only letters, digits, ".", "_" and "-", and starts with a letter or digit';
  return undefined;
}

/** A name that cannot name a schedule, or a schedule's settings that cannot be: nothing was created. */
export class InvalidScheduleError extends Error {
  override name = 'InvalidScheduleError';
}

/** No schedule of that name on the server. */
export class UnknownScheduleError extends Error {
  override name = 'UnknownScheduleError';
  constructor(readonly scheduleName: string) {
    super(`no schedule ${JSON.stringify(scheduleName)}`);
  }
}

/** A schedule of that name exists already. */
export class ScheduleExistsError extends Error {
  override name = 'ScheduleExistsError';
  constructor(readonly scheduleName: string) {
    super(
      `a schedule named ${JSON.stringify(scheduleName)} exists already (delete it first, or pick another name)`,
    );
  }
}

export function scheduleId(name: string): string {
  return `${SCHEDULE_ID_PREFIX}${name}`;
}

/** The workflow id the server extends with each occurrence's nominal time. */
export function occurrenceIdBase(name: string): string {
  return `schedule-${name}`;
}

function checkName(name: string): void {
  const problem = scheduleNameProblem(name);
  if (problem !== undefined)
    throw new InvalidScheduleError(`schedule name ${JSON.stringify(name)} ${problem}`);
}

/** When a schedule fires: every N seconds (from the epoch, as the server counts), or by a cron expression. */
export type ScheduleTiming = { kind: 'every'; seconds: number } | { kind: 'cron'; expression: string };

export const OVERLAP_POLICIES = [
  'skip',
  'buffer_one',
  'buffer_all',
  'cancel_other',
  'terminate_other',
  'allow_all',
] as const;
/** What an occurrence does while the previous one still runs (the server's ScheduleOverlapPolicy). */
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

const toServerPolicy = (policy: OverlapPolicy) => policy.toUpperCase() as ScheduleOverlapPolicy;
/** The server's policy as the CLI names it (unset is the server's default, skip). */
const fromServerPolicy = (policy: ScheduleOverlapPolicy | undefined) =>
  (policy ?? 'SKIP').toLowerCase() as OverlapPolicy;

/**
 * What each occurrence runs. A lead run on `input` (built once, at create time, without a `run_id`: each
 * occurrence's run id is its workflow id). Discriminated by `kind` so other actions can join.
 */
export interface LeadScheduleAction {
  kind: 'lead';
  input: LeadRunInput;
}
/**
 * A durable batch on `input` (client/batches.ts `buildBatchInput`): each occurrence is a batch whose id is its
 * workflow id (`schedule-<name>-<nominal time>`), its items the same each time.
 */
export interface BatchScheduleAction {
  kind: 'batch';
  input: BatchInput;
}
export type ScheduleAction = LeadScheduleAction | BatchScheduleAction;

export interface CreateScheduleRequest {
  name: string;
  timing: ScheduleTiming;
  /**
   * The shortest gap between two occurrences the timing may have, in seconds, as the server matches it
   * (a cron with a seconds field, `@every 1s`): a shorter one is an InvalidScheduleError. Default: none.
   */
  minimumIntervalSeconds?: number;
  action: ScheduleAction;
  /** Default `skip`: an occurrence due while the previous one runs is not taken. */
  overlap?: OverlapPolicy;
  /** The task queue the occurrences run on (the workers' one). */
  taskQueue: string;
}

/** What a schedule keeps in its memo: what the server does not give back as written (a cron's text). */
interface ScheduleMemo {
  name: string;
  action: ScheduleAction['kind'];
  timing: ScheduleTiming;
}
const MEMO_KEY = 'subagents_schedule';

/** A schedule as `describe` shows it. */
export interface ScheduleView {
  name: string;
  schedule_id: string;
  /** `lead`, or the workflow type of an action this version does not know. */
  action:
    | { kind: 'lead'; prompt: string; workspace: string }
    | { kind: 'batch'; description: string; subagent_type: string; items: number; workspace: string }
    | { kind: 'other'; workflow_type: string };
  task_queue: string;
  /** Undefined for a schedule made elsewhere (its spec is not kept in the memo). */
  timing?: ScheduleTiming;
  overlap: OverlapPolicy;
  paused: boolean;
  note?: string;
  /** ISO times of the next occurrences, soonest first. */
  next_runs: string[];
  /** The most recent occurrences (manual triggers included), oldest first. */
  recent_runs: ScheduleRunView[];
  /** Run ids of the occurrences that are running now. */
  running: string[];
  actions_taken: number;
  skipped_for_overlap: number;
  created_at: string;
}

export interface ScheduleRunView {
  /** The occurrence's workflow id, which is its run id. */
  run_id: string;
  /** The nominal time it was due. */
  scheduled_at: string;
  started_at: string;
  /** The workflow's state: running, completed, failed, cancelled, terminated, timed_out, … */
  workflow_status: string;
  /** What the occurrence is: a lead run, or a batch (read with `subagents batch status <run_id>`). */
  kind?: 'lead' | 'batch' | 'other';
  /**
   * A closed workflow's own status, from its result (returned, or carried by its failure): a lead run's, or a
   * batch's (`completed`, `cancelled`).
   */
  outcome?: LeadRunStatus | 'cancelled';
  /** A closed batch's items by how they ended: a batch that completed may hold failed items. */
  items?: { total: number; completed: number; failed: number; cancelled: number };
}

/** A schedule as `list` shows it: its state and last occurrence, without asking each run how it went. */
export interface ScheduleListEntry {
  name: string;
  schedule_id: string;
  action_kind: 'lead' | 'batch' | 'other';
  timing?: ScheduleTiming;
  paused: boolean;
  note?: string;
  next_run?: string;
  last_run?: { run_id: string; scheduled_at: string };
}

function scheduleSpec(timing: ScheduleTiming): ScheduleSpec {
  if (timing.kind === 'every') {
    if (!Number.isSafeInteger(timing.seconds) || timing.seconds < 1)
      throw new InvalidScheduleError(`every: ${timing.seconds} is not a whole number of seconds ≥ 1`);
    return { intervals: [{ every: timing.seconds * 1000 }] };
  }
  if (timing.expression.trim() === '') throw new InvalidScheduleError('cron: the expression is empty');
  return { cronExpressions: [timing.expression] };
}

/** How far ahead a timing must fire at least once: a spec with no time in this window never fires. */
export const FIRST_RUN_HORIZON_YEARS = 10;

/** The flag (or field) a timing was given with, and its value, for messages. */
function timingText(timing: ScheduleTiming): string {
  return timing.kind === 'every'
    ? `every: ${timing.seconds} s`
    : `cron: ${JSON.stringify(timing.expression)}`;
}

/**
 * Why the server's matching times of a timing are refused, or undefined: none within the horizon (it never
 * fires), or two closer than `minimumSeconds`.
 */
export function matchingTimesProblem(
  timing: ScheduleTiming,
  times: readonly Date[],
  minimumSeconds: number | undefined,
): string | undefined {
  if (times.length === 0)
    return (
      `${timingText(timing)} never fires within ${FIRST_RUN_HORIZON_YEARS} years ` +
      '(give a timing that matches a time soon, e.g. --every 6h or --cron "0 2 * * *")'
    );
  if (minimumSeconds === undefined) return undefined;
  for (let i = 1; i < times.length; i++) {
    const gap = (times[i].getTime() - times[i - 1].getTime()) / 1000;
    if (gap < minimumSeconds)
      return (
        `${timingText(timing)} fires ${gap} s apart (${times[i - 1].toISOString()}, ${times[i].toISOString()}), ` +
        `under the minimum interval of ${minimumSeconds} s (a timing whose runs are at least that far apart)`
      );
  }
  return undefined;
}

const PROMPT_SUMMARY_CHARS = 120;

function shortened(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function isLeadAction(action: ScheduleDescription['action'] | ScheduleSummary['action']): boolean {
  return action?.workflowType === LEAD_RUN_WORKFLOW;
}

function actionKind(
  action: ScheduleDescription['action'] | ScheduleSummary['action'],
): 'lead' | 'batch' | 'other' {
  if (isLeadAction(action)) return 'lead';
  return action?.workflowType === BATCH_WORKFLOW ? 'batch' : 'other';
}

function readMemo(memo: Record<string, unknown> | undefined): ScheduleMemo | undefined {
  const value = memo?.[MEMO_KEY];
  return typeof value === 'object' && value !== null ? (value as ScheduleMemo) : undefined;
}

/** The name in a schedule id of this project's, else undefined. */
function nameOf(id: string): string | undefined {
  return id.startsWith(SCHEDULE_ID_PREFIX) ? id.slice(SCHEDULE_ID_PREFIX.length) : undefined;
}

/**
 * The name of this project's schedule that `id` names, as its name or its schedule id (the Web UI's), when
 * the server has one; else undefined. For a command given a schedule where it takes a run.
 */
export async function scheduleNamedBy(
  client: Pick<Client, 'schedule'>,
  id: string,
): Promise<string | undefined> {
  const name = nameOf(id) ?? id;
  if (scheduleNameProblem(name) !== undefined) return undefined;
  try {
    await client.schedule.getHandle(scheduleId(name)).describe();
    return name;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return undefined;
    throw err;
  }
}

/** The server's start of a lead run occurrence. */
function leadAction(name: string, action: LeadScheduleAction, taskQueue: string) {
  const { prompt } = action.input;
  return {
    type: 'startWorkflow' as const,
    workflowType: LEAD_RUN_WORKFLOW,
    workflowId: occurrenceIdBase(name),
    taskQueue,
    args: [action.input] satisfies Parameters<LeadRunWorkflow>,
    staticSummary: `lead (schedule ${name}): ${shortened(prompt, PROMPT_SUMMARY_CHARS)}`,
    staticDetails: promptDetails(prompt),
    // LeadRunId is the occurrence's workflow id, which the server makes when it starts it: it cannot be
    // set here. Each occurrence carries TemporalScheduledById (this schedule's id) instead; its
    // delegations carry LeadRunId as usual.
    typedSearchAttributes: runSearchAttributes(
      '',
      'lead',
      action.input.depth,
      action.input.scope.user_id,
    ).filter((pair) => pair.key.name !== 'LeadRunId'),
  };
}

/** The server's start of a batch occurrence: the batch's id is its workflow id, as its items' run id. */
function batchAction(name: string, action: BatchScheduleAction, taskQueue: string) {
  const { input } = action;
  return {
    type: 'startWorkflow' as const,
    workflowType: BATCH_WORKFLOW,
    workflowId: occurrenceIdBase(name),
    taskQueue,
    args: [input] satisfies Parameters<BatchWorkflow>,
    staticSummary: `batch (schedule ${name}): ${input.subagent_type}: ${shortened(input.description, PROMPT_SUMMARY_CHARS)} (${input.items.length} items)`,
    typedSearchAttributes: runSearchAttributes('', 'batch', input.depth - 1, input.scope.user_id).filter(
      (pair) => pair.key.name !== 'LeadRunId',
    ),
  };
}

export class SubagentsSchedules {
  constructor(
    readonly client: Client,
    readonly namespace: string,
  ) {}

  /**
   * Creates the schedule. The name, timing and lead input are checked first (InvalidScheduleError,
   * InvalidInputError; the workspace folder is made); a taken name is a ScheduleExistsError. Nothing is
   * created when any check fails.
   */
  async create(request: CreateScheduleRequest): Promise<ScheduleView> {
    const { name, timing, action } = request;
    checkName(name);
    const spec = scheduleSpec(timing);
    if (action.input.run_id !== undefined)
      throw new InvalidScheduleError(
        `a scheduled ${action.kind} input has no run_id: each occurrence gets its own (its workflow id)`,
      );
    if (action.kind === 'lead') assertLeadRunInput(action.input);
    checkWorkspaceFolder(action.input.scope.workspace);
    const memo: ScheduleMemo = { name, action: action.kind, timing };
    const serverAction: ScheduleOptionsAction =
      action.kind === 'lead'
        ? leadAction(name, action, request.taskQueue)
        : batchAction(name, action, request.taskQueue);
    try {
      const problem = matchingTimesProblem(
        timing,
        await this.matchingTimes(spec, serverAction),
        request.minimumIntervalSeconds,
      );
      if (problem !== undefined) throw new InvalidScheduleError(problem);
      await this.client.schedule.create({
        scheduleId: scheduleId(name),
        spec,
        action: serverAction,
        policies: { overlap: toServerPolicy(request.overlap ?? 'skip') },
        memo: { [MEMO_KEY]: memo },
      });
    } catch (err) {
      if (err instanceof ScheduleAlreadyRunning) throw new ScheduleExistsError(name);
      // The server's refusal of the spec (a cron expression it cannot read), as the SDK reports it.
      if (err instanceof TypeError)
        throw new InvalidScheduleError(
          `cron: ${JSON.stringify(timing.kind === 'cron' ? timing.expression : '')} is refused: ${err.message}`,
        );
      throw explainStartFailure(err);
    }
    return this.describe(name);
  }

  /**
   * The times the server matches `spec` to from now on, over FIRST_RUN_HORIZON_YEARS (the server lists at
   * most a bounded number). The server answers for a schedule only: a paused probe schedule of a random id,
   * which never starts anything, is made and deleted for the question. One source of truth: the server's
   * own reading of a cron (seconds field, `@every`, years) or an interval, not a copy of its parser here.
   */
  private async matchingTimes(spec: ScheduleSpec, action: ScheduleOptionsAction): Promise<Date[]> {
    const probeId = `${PROBE_ID_PREFIX}${randomUUID()}`;
    const handle = await this.client.schedule.create({
      scheduleId: probeId,
      spec,
      action,
      state: { paused: true, note: 'a probe of `subagents schedule create`: deleted at once' },
    });
    try {
      const start = new Date();
      const end = new Date(start);
      end.setUTCFullYear(end.getUTCFullYear() + FIRST_RUN_HORIZON_YEARS);
      const request = {
        namespace: this.namespace,
        scheduleId: probeId,
        startTime: msToTs(start.getTime()),
        endTime: msToTs(end.getTime()),
      };
      const response: temporal.api.workflowservice.v1.IListScheduleMatchingTimesResponse =
        await this.client.workflowService.listScheduleMatchingTimes(request);
      return (response.startTime ?? []).map((time) => new Date(tsToMs(time)));
    } finally {
      await handle.delete();
    }
  }

  /** This project's schedules (ids with SCHEDULE_ID_PREFIX), by name. The server's list may lag a change. */
  async list(): Promise<ScheduleListEntry[]> {
    const entries: ScheduleListEntry[] = [];
    for await (const summary of this.client.schedule.list()) {
      const name = nameOf(summary.scheduleId);
      if (name === undefined) continue;
      const memo = readMemo(summary.memo);
      const last = summary.info.recentActions.at(-1);
      const next = summary.info.nextActionTimes[0];
      entries.push({
        name,
        schedule_id: summary.scheduleId,
        action_kind: actionKind(summary.action),
        ...(memo && { timing: memo.timing }),
        paused: summary.state.paused,
        ...(summary.state.note && { note: summary.state.note }),
        ...(next && { next_run: next.toISOString() }),
        ...(last && {
          last_run: { run_id: last.action.workflow.workflowId, scheduled_at: last.scheduledAt.toISOString() },
        }),
      });
    }
    return entries.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The schedule, its next times and its recent occurrences with how each went. */
  async describe(name: string): Promise<ScheduleView> {
    const description = await this.known(name, (handle) => handle.describe());
    const { action, info, state } = description;
    const memo = readMemo(description.memo);
    const recent = await Promise.all(info.recentActions.map((result) => this.runView(result)));
    let actionView: ScheduleView['action'];
    if (isLeadAction(action)) {
      // A schedule made before the run scope starts its occurrences with the settings at the top level.
      const input = scoped<LeadRunInput>((action.args as Parameters<LeadRunWorkflow>)[0]);
      actionView = { kind: 'lead', prompt: input.prompt, workspace: input.scope.workspace };
    } else if (actionKind(action) === 'batch') {
      const input = scoped<BatchInput>((action.args as Parameters<BatchWorkflow>)[0]);
      actionView = {
        kind: 'batch',
        description: input.description,
        subagent_type: input.subagent_type,
        items: input.items.length,
        workspace: input.scope.workspace,
      };
    } else {
      actionView = { kind: 'other', workflow_type: String(action.workflowType) };
    }
    return {
      name,
      schedule_id: description.scheduleId,
      action: actionView,
      task_queue: action.taskQueue,
      ...(memo && { timing: memo.timing }),
      overlap: fromServerPolicy(description.policies.overlap),
      paused: state.paused,
      ...(state.note && { note: state.note }),
      next_runs: info.nextActionTimes.map((time) => time.toISOString()),
      recent_runs: recent,
      running: info.runningActions.map((running) => running.workflow.workflowId),
      actions_taken: info.numActionsTaken,
      skipped_for_overlap: info.numActionsSkippedOverlap,
      created_at: info.createdAt.toISOString(),
    };
  }

  /** Stops taking occurrences (a running one goes on); the note says why, in `describe` and the Web UI. */
  async pause(name: string, note = 'paused with `subagents schedule pause`'): Promise<void> {
    await this.known(name, (handle) => handle.pause(note));
  }

  async unpause(name: string, note = 'unpaused with `subagents schedule unpause`'): Promise<void> {
    await this.known(name, (handle) => handle.unpause(note));
  }

  /**
   * Takes one occurrence now, paused or not. It meets the schedule's own overlap policy unless `overlap`
   * says otherwise: under `skip`, nothing starts while an occurrence runs.
   */
  async trigger(name: string, overlap?: OverlapPolicy): Promise<void> {
    await this.known(name, async (handle) => {
      const policy = overlap ?? fromServerPolicy((await handle.describe()).policies.overlap);
      await handle.trigger(toServerPolicy(policy));
    });
  }

  /** Deletes the schedule; occurrences already started go on to their end. */
  async delete(name: string): Promise<void> {
    await this.known(name, (handle) => handle.delete());
  }

  /** Runs `body` on the schedule's handle; a schedule the server does not know is an UnknownScheduleError. */
  private async known<T>(name: string, body: (handle: ScheduleHandle) => Promise<T>): Promise<T> {
    checkName(name);
    try {
      return await body(this.client.schedule.getHandle(scheduleId(name)));
    } catch (err) {
      if (err instanceof ScheduleNotFoundError) throw new UnknownScheduleError(name);
      throw err;
    }
  }

  private async runView(result: ScheduleExecutionResult): Promise<ScheduleRunView> {
    const runId = result.action.workflow.workflowId;
    const view: ScheduleRunView = {
      run_id: runId,
      scheduled_at: result.scheduledAt.toISOString(),
      started_at: result.takenAt.toISOString(),
      workflow_status: 'unknown',
    };
    const handle = this.client.workflow.getHandle<LeadRunWorkflow | BatchWorkflow>(runId);
    try {
      const description = await handle.describe();
      const status = description.status.name;
      view.workflow_status = status.toLowerCase();
      view.kind =
        description.type === LEAD_RUN_WORKFLOW
          ? 'lead'
          : description.type === BATCH_WORKFLOW
            ? 'batch'
            : 'other';
      if (status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW') {
        const closed = await closedOutcome<{ status: ScheduleRunView['outcome'] } & Partial<BatchResult>>(
          handle,
          status,
          (value) => 'status' in value,
        );
        if (closed.result) view.outcome = closed.result.status;
        const counts = closed.result?.counts;
        if (view.kind === 'batch' && counts)
          view.items = {
            total: closed.result?.total ?? 0,
            completed: counts.completed,
            failed: counts.failed,
            cancelled: counts.cancelled,
          };
      }
    } catch (err) {
      // A run removed by the namespace's retention is still listed among the schedule's recent actions.
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      view.workflow_status = 'not_found';
    }
    return view;
  }
}
