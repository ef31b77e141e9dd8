/**
 * `subagents status|ledger|cancel <run-id>` and `subagents events <run-id> [--follow]`. A closed run is read
 * from its result, which the server keeps: no worker needed. An open run answers through its queries, which
 * need a worker; when none polls its task queue the command says so at once, with the command that starts one.
 */
import type { ForkLink } from '../client/fork';
import type { ForkOrigin } from '../contracts/run-fork';
import { forkedFromLines, forkListLines } from './fork-lines';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { TaskEvent } from '../contracts/events';
import type { LeadCostUsd, LeadStatus, LeadTokenUsage } from '../contracts/lead';
import { formatUsd } from '../contracts/text';
import type { LedgerEntry } from '../contracts/ledger';
import {
  eventsFromLedger,
  ledgerCounts,
  SubagentsClient,
  workflowUiUrl,
  type ClosedRun,
  type RunHandle,
} from '../client/api';
import { loadCommandConfig, requireServer } from './command-setup';
import { connectClient, type ConnectionSettings } from '../client/connection';
import { askWorker, QUERY_DEADLINE_MS, taskQueueHasWorker, type Asked } from '../client/worker-liveness';
import { findRunningDevServer } from '../devserver/dev-server-state';
import { delegationStatus } from './delegation-status';
import { identify, notALeadRunMessage, type Identified } from '../client/id-kinds';
import { scheduleNamedBy } from '../client/schedules';
import { integerFlag, parseFlags, stringFlag, UsageError, type FlagSpec, type FlagValues } from './flags';
import { eventLine } from './progress';
import { openCircuitBreakerLine, openCircuitBreakers } from '../client/circuit-breakers';
import type { OpenCircuitBreaker } from '../contracts/circuit-breaker';
import { pendingApprovalLines } from './approvals';
import { pendingQuestionLines } from './questions';
import { queuePlace, renderLedgerTable } from './tree';
import { workerCommandLine } from './worker-presence';

/** How long an open run's queries may take: a worker answers in milliseconds; none never does. */

/**
 * A blob of the payload store named in a failure's message: the claim-check codec's (`payload blob <hash>`)
 * or a transcript's (`transcript segment <hash>`, `tool specs <hash>`), missing or not matching its hash; or a
 * payload under an encryption key not held, or that does not decrypt (payloads/encryption-codec.ts).
 */
const PAYLOAD_STORE_FAULT =
  /\b(payload blob|transcript segment|tool specs) [0-9a-f]{64}\b|\bpayload\b[^;]*? is encrypted with key /;

/** The message of `err` or of one of its causes that names a blob of the payload store, else undefined. */
export function payloadStoreFault(err: unknown): string | undefined {
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    const line = e.message.split('\n').find((text) => PAYLOAD_STORE_FAULT.test(text));
    if (line !== undefined) return line.slice(line.search(PAYLOAD_STORE_FAULT));
  }
  return undefined;
}

/** One line for a run (`what`: `run X`) whose blob cannot be decoded or verified: what is wrong, what heals it. */
export function unreadableRunMessage(command: string, what: string, fault: string): string {
  const heals = / is encrypted with key /.test(fault)
    ? 'the run waits and resumes once its workers hold that key'
    : 'the run waits and resumes when it is restored';
  return `${command}: ${what} cannot be read: ${fault}; ${heals}`;
}

/**
 * The failure of a pending activity of `workflowId` that names a blob of the payload store (an altered or
 * missing transcript segment, retried until it is restored), else undefined.
 */
async function pendingStoreFault(client: Client, workflowId: string): Promise<string | undefined> {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  for (const activity of raw.pendingActivities ?? []) {
    const fault = activity.lastFailure?.message
      ? payloadStoreFault(new Error(activity.lastFailure.message))
      : undefined;
    if (fault !== undefined) return fault;
  }
  return undefined;
}

/**
 * Why the workflow's recent tasks failed, when a blob of the payload store is to blame: a worker that cannot
 * decode the history fails each workflow task, and so cannot answer a query either.
 */
async function workflowTaskStoreFault(
  client: Client,
  namespace: string,
  workflowId: string,
): Promise<string | undefined> {
  const { history } = await client.workflowService.getWorkflowExecutionHistoryReverse({
    namespace,
    execution: { workflowId },
    maximumPageSize: 20,
  });
  for (const event of history?.events ?? []) {
    const message = event.workflowTaskFailedEventAttributes?.failure?.message;
    const fault = message ? payloadStoreFault(new Error(message)) : undefined;
    if (fault !== undefined) return fault;
  }
  return undefined;
}

/** The run could not be read: printed as one line, exit code 1. */
export class InspectionError extends Error {
  override name = 'InspectionError';
}

interface Inspected {
  run: RunHandle;
  values: FlagValues;
  /** What follows the run id on the command line (`answer`'s text). */
  rest: string[];
  /** The run's page in the Web UI, when the server has one this command knows of. */
  uiUrl?: string;
  /** An open run's queries, within the deadline, or an InspectionError naming the task queue no worker polls. */
  query<T>(taskQueue: string, read: (run: RunHandle) => Promise<T>): Promise<T>;
  /** What an open run waits on in the payload store: an activity's retried failure naming a blob, if any. */
  storeFault(): Promise<string | undefined>;
  /** The circuit breakers open now that the run's model calls (its own, its open children's) wait on. */
  openBreakers(): Promise<OpenCircuitBreaker[]>;
  /** When no live worker polls `taskQueue`: `no worker polls …; start one with: …`. */
  workerMissing(taskQueue: string): Promise<string | undefined>;
}

/** The Web UI of the server in use: the config's `temporal.ui_url`, else the recorded dev server's. */
export async function uiBaseUrl(
  settings: ConnectionSettings & { address: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  if (settings.uiUrl) return settings.uiUrl;
  const recorded = await findRunningDevServer(env);
  return recorded?.address === settings.address ? recorded.ui_url : undefined;
}

/** What a user reads when an open run's worker is missing: which task queue, and how to start one. */
export function noWorkerMessage(options: {
  command: string;
  runId: string;
  address: string;
  namespace: string;
  taskQueue: string;
  configFile?: string;
  /** A worker was seen lately but did not answer within this long (else: none polls). */
  silentForMs?: number;
}): string {
  const queue = `task queue "${options.taskQueue}" at ${options.address}`;
  const missing =
    options.silentForMs === undefined
      ? `no worker polls ${queue}`
      : `no worker on ${queue} answered within ${options.silentForMs / 1000} s`;
  return (
    `${options.command}: ${options.runId} is open, but ${missing}, so it cannot answer (its state is kept ` +
    `on the server and it goes on when a worker polls). Start one with: ${workerCommandLine(options)}`
  );
}

/**
 * What a command says of an id the server knows no workflow by: a schedule's name or id names its schedule and
 * the command that reads it (a schedule is not a run: it starts them); anything else is no run. Exit 2.
 */
async function unknownIdError(
  client: Client,
  command: string,
  id: string,
  address: string,
): Promise<UsageError> {
  const schedule = await scheduleNamedBy(client, id);
  if (schedule === undefined) return new UsageError(`${command}: no run ${id} on ${address}`);
  return new UsageError(
    `${command}: ${id} is a schedule, not a run; its timing and the runs it started: ` +
      `subagents schedule describe ${schedule}`,
  );
}

/** A query within the deadline, on a workflow of task queue `taskQueue`; `what` names it (`run X`, `batch Y`). */
export type Ask = <T>(what: string, taskQueue: string, read: () => Promise<T>) => Promise<T>;

/** What a command does with an id that is not a lead run (a subagent's, a batch's, …). */
export type OtherKind = (
  identified: Identified,
  context: { client: Client; values: FlagValues; uiUrl?: string; ask: Ask },
) => Promise<number>;

export interface WithRunOptions {
  /** What the command takes after its name, run id first. */
  usage?: { positionals: number; what: string; shape: string };
  /** Default: say what the id is and which command reads it (exit 2). */
  other?: OtherKind;
}

/**
 * Runs `body` on the lead run named on the command line. Any other id the server knows (a subagent's, a
 * batch's, one of its items', the admission workflow's) goes to `options.other`, or is named with the
 * command that reads it.
 */
export async function withRun(
  command: string,
  args: string[],
  spec: FlagSpec,
  body: (inspected: Inspected) => Promise<number>,
  options: WithRunOptions = {},
): Promise<number> {
  const usage = options.usage ?? { positionals: 1, what: 'one run id', shape: '<run-id>' };
  const { values, positionals } = parseFlags(args, spec, command);
  if (positionals.length !== usage.positionals) {
    throw new UsageError(`${command}: give ${usage.what}: subagents ${command} ${usage.shape}`);
  }
  const [runId, ...rest] = positionals;
  const settings = await requireServer(command, loadCommandConfig(values));
  const { client, connection } = await connectClient(settings);
  try {
    // One worker command for every hint of these commands: the server, task queue and config they were given.
    const place = {
      address: settings.address,
      namespace: settings.namespace,
      ...(stringFlag(values, 'config') !== undefined && { configFile: stringFlag(values, 'config') }),
    };
    const noWorker = (what: string, taskQueue: string, silentForMs?: number) =>
      new InspectionError(
        noWorkerMessage({
          command,
          runId: what,
          ...place,
          taskQueue,
          ...(silentForMs !== undefined && { silentForMs }),
        }),
      );
    /** Why the run's worker cannot run its workflow tasks, when a blob or a key is to blame. */
    const taskFault = () => workflowTaskStoreFault(client, settings.namespace, runId).catch(() => undefined);
    const ask: Ask = async <T>(what: string, taskQueue: string, read: () => Promise<T>) => {
      let asked: Asked<T>;
      try {
        asked = await askWorker(client, settings.namespace, taskQueue, read);
      } catch (err) {
        // The query failed at once ("Failed to query Workflow"): a worker that fails each task says why there.
        const fault = payloadStoreFault(err) ?? (await taskFault());
        if (fault !== undefined) throw new InspectionError(unreadableRunMessage(command, what, fault));
        throw err;
      }
      if (asked.answered) return asked.value;
      if (asked.why === 'no_worker') throw noWorker(what, taskQueue);
      // A worker polls but cannot decode or verify the workflow's history: say which blob, not "no worker".
      const fault = await taskFault();
      if (fault !== undefined) throw new InspectionError(unreadableRunMessage(command, what, fault));
      // The server remembers a worker for minutes after it stopped: one that has just died lands here.
      throw noWorker(what, taskQueue, QUERY_DEADLINE_MS);
    };
    try {
      const identified = await identify(client, runId);
      if (identified.kind.kind === 'unknown')
        throw await unknownIdError(client, command, runId, settings.address);
      const uiUrl = workflowUiUrl(await uiBaseUrl(settings), settings.namespace, runId);
      if (identified.kind.kind !== 'lead') {
        if (!options.other) throw new UsageError(notALeadRunMessage(command, identified.kind));
        return await options.other(identified, { client, values, ...(uiUrl && { uiUrl }), ask });
      }
      const run = new SubagentsClient(client, settings.namespace).getRun(runId);
      const query = <T>(taskQueue: string, read: (run: RunHandle) => Promise<T>): Promise<T> =>
        ask(`run ${runId}`, taskQueue, () => read(run));
      const storeFault = () => pendingStoreFault(client, runId);
      const openBreakers = () => openCircuitBreakers(client, runId).catch(() => []);
      const workerMissing = async (taskQueue: string) =>
        (await taskQueueHasWorker(client, settings.namespace, taskQueue).catch(() => true))
          ? undefined
          : `no worker polls task queue "${taskQueue}" at ${settings.address}. Start one with: ` +
            workerCommandLine({ ...place, taskQueue });
      return await body({
        run,
        values,
        rest,
        ...(uiUrl && { uiUrl }),
        query,
        storeFault,
        openBreakers,
        workerMissing,
      });
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) {
        throw new UsageError(`${command}: no run ${runId} on ${settings.address}`);
      }
      // This client, or the worker answering a query, could not decode or verify a blob the run refers to.
      const fault = payloadStoreFault(err);
      if (fault !== undefined) {
        process.stderr.write(`subagents: ${unreadableRunMessage(command, `run ${runId}`, fault)}\n`);
        return 1;
      }
      if (err instanceof InspectionError) {
        process.stderr.write(`subagents: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
  } finally {
    await connection.close();
  }
}

const json = (value: unknown) => process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

/** `status --json` of a closed run: how it ended, and what its result says of turns, usage and delegations. */
export interface ClosedRunStatus {
  state: 'finished';
  /** Temporal's status of the execution (COMPLETED, FAILED, TERMINATED, TIMED_OUT, CANCELLED). */
  execution_status: string;
  status: ClosedRun['status'];
  stop_reason?: string;
  error?: string;
  admission_failure?: true;
  /** Absent when the execution returned no result (failed, terminated, hard timeout): unknown then. */
  turns?: number;
  token_usage?: LeadTokenUsage;
  cost_usd?: LeadCostUsd;
  counts?: LeadStatus['counts'];
  ui_url?: string;
  /** A fork's origin (docs/fork.md). */
  forked_from?: ForkOrigin;
}

/** A closed run's status, from what `RunHandle.inspect()` read. */
export function closedRunStatus(closed: ClosedRun, uiUrl?: string): ClosedRunStatus {
  const { result } = closed;
  return {
    state: 'finished',
    execution_status: closed.execution_status,
    status: closed.status,
    ...(closed.stop_reason && { stop_reason: closed.stop_reason }),
    ...(closed.error && { error: closed.error }),
    ...(result?.admission_failure && { admission_failure: true }),
    ...(result && {
      turns: result.turns,
      token_usage: result.token_usage,
      ...(result.cost_usd && { cost_usd: result.cost_usd }),
      counts: ledgerCounts(result.ledger),
    }),
    ...(uiUrl && { ui_url: uiUrl }),
    ...(result?.forked_from && { forked_from: result.forked_from }),
  };
}

function countsText(counts: LeadStatus['counts']): string {
  return (
    Object.entries(counts)
      .filter(([, n]) => n > 0)
      .map(([state, n]) => `${n} ${state}`)
      .join(', ') || 'none'
  );
}

function turnsText(turns: number): string {
  return `${turns} lead ${turns === 1 ? 'turn' : 'turns'}`;
}

/** `, 3000 tokens`, with what they cost when any call was priced: `, 3000 tokens ($3.0000)`. */
function tokensText(usage: LeadTokenUsage | undefined, cost?: LeadCostUsd): string {
  const priced = cost ? ` (${formatUsd(cost.total)})` : '';
  return usage?.total
    ? `, ${usage.total.total_tokens} tokens${priced}`
    : cost
      ? `, ${formatUsd(cost.total)}`
      : '';
}

/**
 * `status`'s lines for an open run (its `lead_status` query); `storeFault`: what it waits on in the payload
 * store (a model call retried on an altered transcript segment); `breakers`: the circuit breakers open that its
 * model calls wait on, one line each.
 */
export function openStatusLines(
  runId: string,
  status: LeadStatus,
  uiUrl?: string,
  storeFault?: string,
  breakers: readonly OpenCircuitBreaker[] = [],
): string[] {
  // A run waiting for a slot (lead_runtime) says where it stands and since when.
  const state = status.admission
    ? `queued for a run slot (${queuePlace(status.admission)} when it joined, since ${status.admission.since})`
    : status.state;
  return [
    `${runId}: ${state}, ${turnsText(status.turns)}${tokensText(status.token_usage, status.cost_usd)}; ` +
      `delegations: ${countsText(status.counts)}`,
    ...(storeFault !== undefined ? [`waiting on the payload store: ${storeFault}`] : []),
    ...breakers.map(openCircuitBreakerLine),
    // Its tools are limited to what they allow (their allowed-tools), from the read that activated them on.
    ...(status.active_skills ? [`active skills: ${status.active_skills.join(', ')}`] : []),
    ...workspaceLines(status.workspace),
    ...pendingQuestionLines(runId, status.questions),
    ...pendingApprovalLines(runId, status.approvals),
    ...(uiUrl ? [`Web UI: ${uiUrl}`] : []),
  ];
}

/** Where a run's workspace lives, when it has a home host, and whether it is still saved. */
function workspaceLines(workspace: LeadStatus['workspace']): string[] {
  if (!workspace) return [];
  const moved = workspace.epoch > 1 ? ` (moved ${workspace.epoch - 1}× after a host was lost)` : '';
  const lines = [`workspace: on host ${workspace.host_id}${moved}`];
  if (workspace.not_saved) {
    lines.push(
      `workspace not saved: ${workspace.not_saved.bytes} bytes, over workspace.snapshot.max_bytes ` +
        `(${workspace.not_saved.max_bytes}); a lost host loses what changed since`,
    );
  }
  return lines;
}

/** `status`'s lines for a closed run: how it ended (status, stop reason, error), its turns and delegations. */
export function closedStatusLines(runId: string, status: ClosedRunStatus): string[] {
  const how = `${status.status}${status.stop_reason ? ` (${status.stop_reason})` : ''}`;
  const facts =
    status.turns === undefined
      ? `; the execution ${status.execution_status.toLowerCase().replace('_', ' ')} without a result ` +
        '(turns and delegations unknown)'
      : `, ${turnsText(status.turns)}${tokensText(status.token_usage, status.cost_usd)}; ` +
        `delegations: ${status.counts ? countsText(status.counts) : 'none'}`;
  return [
    `${runId}: ${how}${facts}`,
    ...(status.admission_failure ? ['refused a run slot at admission, before any model call'] : []),
    ...(status.error ? [`error: ${status.error}`] : []),
    ...(status.ui_url ? [`Web UI: ${status.ui_url}`] : []),
  ];
}

const forkLines = (origin: ForkOrigin | undefined, forks: readonly ForkLink[]) => [
  ...forkedFromLines(origin),
  ...forkListLines(forks),
];

const print = (lines: readonly string[]) => process.stdout.write(`${lines.join('\n')}\n`);

export function statusCommand(args: string[]): Promise<number> {
  return withRun(
    'status',
    args,
    {},
    async ({ run, values, uiUrl, query, storeFault, openBreakers }) => {
      const inspected = await run.inspect();
      // Linked both ways: a fork names its origin (its status), a run its forks (their search attributes).
      const forks = await run.forks().catch(() => []);
      if (!inspected.open) {
        const status = closedRunStatus(inspected, uiUrl);
        if (values.json) json({ ...status, ...(forks.length > 0 && { forks }) });
        else print([...closedStatusLines(run.runId, status), ...forkLines(status.forked_from, forks)]);
        return 0;
      }
      const status = await query(inspected.task_queue, (r) => r.status());
      const [fault, breakers] = await Promise.all([storeFault(), openBreakers()]);
      if (values.json)
        json({
          ...status,
          ...(fault !== undefined && { payload_store_fault: fault }),
          ...(breakers.length > 0 && { circuit_breakers: breakers }),
          ...(uiUrl && { ui_url: uiUrl }),
          ...(forks.length > 0 && { forks }),
        });
      else
        print([
          ...openStatusLines(run.runId, status, uiUrl, fault, breakers),
          ...forkLines(status.forked_from, forks),
        ]);
      return 0;
    },
    { other: delegationStatus },
  );
}

/** The ledger of a run, open (its query) or closed (its result); undefined when a closed run left none. */
async function readLedger(
  inspected: Awaited<ReturnType<RunHandle['inspect']>>,
  query: Inspected['query'],
): Promise<LedgerEntry[] | undefined> {
  if (inspected.open) return query(inspected.task_queue, (r) => r.ledger());
  return inspected.result?.ledger;
}

function noLedger(runId: string, closed: ClosedRun): InspectionError {
  return new InspectionError(
    `run ${runId} ended without a result (${closed.execution_status}: ${closed.error ?? 'no error recorded'}); ` +
      'its ledger and events lived in the workflow and are not kept after it (the Web UI shows its history)',
  );
}

export function ledgerCommand(args: string[]): Promise<number> {
  return withRun('ledger', args, {}, async ({ run, values, uiUrl, query }) => {
    const inspected = await run.inspect();
    const ledger = await readLedger(inspected, query);
    if (ledger === undefined && !inspected.open) throw noLedger(run.runId, inspected);
    const entries = ledger ?? [];
    if (values.json) json({ run_id: run.runId, ...(uiUrl && { ui_url: uiUrl }), ledger: entries });
    else
      print([
        ...renderLedgerTable(entries, { color: process.stdout.isTTY === true }),
        ...(uiUrl ? [`Web UI: ${uiUrl}`] : []),
      ]);
    return 0;
  });
}

/** Events as `events` prints them: JSON lines, or the live view's line numbered by `seq`, named from the ledger. */
export function eventText(
  event: TaskEvent,
  asJson: boolean,
  descriptions: ReadonlyMap<string, string> = new Map(),
): string {
  if (asJson) return JSON.stringify(event);
  const description = 'description' in event ? undefined : descriptions.get(event.task_id);
  return `${event.seq} ${eventLine(event, description)}`;
}

const descriptionsOf = (ledger: readonly LedgerEntry[]) =>
  new Map(ledger.map((entry) => [entry.id, entry.description]));

export function eventsCommand(args: string[]): Promise<number> {
  const spec: FlagSpec = { follow: { type: 'boolean' }, after: { type: 'string' } };
  return withRun('events', args, spec, async ({ run, values, query }) => {
    const after = integerFlag(values, 'after', 0, Number.MAX_SAFE_INTEGER) ?? 0;
    const asJson = values.json === true;
    const inspected = await run.inspect();
    if (!inspected.open) {
      // The event log lived in the workflow: a closed run's events are rebuilt from its ledger.
      if (!inspected.result) throw noLedger(run.runId, inspected);
      const { ledger, decisions } = inspected.result;
      const descriptions = descriptionsOf(ledger);
      const events = eventsFromLedger(ledger, decisions).filter((e) => e.seq > after);
      for (const event of events) process.stdout.write(`${eventText(event, asJson, descriptions)}\n`);
      if (events.length === 0 && !asJson)
        process.stderr.write(
          `${run.runId}: ${ledger.length === 0 && !decisions ? 'made no delegations and decided on no held call, so it has no events' : `no events after ${after}`}\n`,
        );
      return 0;
    }
    const taskQueue = inspected.task_queue;
    let descriptions = descriptionsOf(await query(taskQueue, (r) => r.ledger()));
    const write = async (event: TaskEvent) => {
      // A question's event names no delegation (its task_id is the question's name).
      if (!('description' in event) && !('question_id' in event) && !descriptions.has(event.task_id))
        descriptions = descriptionsOf(await query(taskQueue, (r) => r.ledger()));
      process.stdout.write(`${eventText(event, asJson, descriptions)}\n`);
    };
    if (values.follow) {
      for await (const event of run.followEvents(500, after)) await write(event);
    } else {
      for (const event of await query(taskQueue, (r) => r.events(after))) await write(event);
    }
    return 0;
  });
}

export function cancelCommand(args: string[]): Promise<number> {
  return withRun('cancel', args, {}, async ({ run, workerMissing }) => {
    const inspected = await run.inspect();
    // The server answers a cancel of a closed run as of a missing one: say which it is.
    if (!inspected.open)
      throw new InspectionError(
        `cancel: run ${run.runId} has already ended (${inspected.status}): nothing to cancel`,
      );
    await run.cancel();
    // Without a worker the run cannot act on it yet: waiting for its end would wait in silence.
    const missing = await workerMissing(inspected.task_queue);
    if (missing !== undefined) {
      process.stderr.write(
        `Cancellation requested for ${run.runId}; it takes effect when a worker polls: ${missing}\n`,
      );
      process.stdout.write(`${run.runId}: cancellation requested\n`);
      return 0;
    }
    process.stderr.write(`Cancellation requested for ${run.runId}; waiting for its children to stop…\n`);
    const result = await run.result();
    process.stdout.write(`${run.runId}: ${result.status}\n`);
    return 0;
  });
}
