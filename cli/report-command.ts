/**
 * `subagents report <run-id> [-o report.html]`: one self-contained HTML page about a lead run (cli/report.ts
 * builds it). A closed run is read from the server alone: the lead's result and ledger, each subagent's
 * result and steps rebuilt from its history, nested delegations found in their parent's history. An open run
 * answers through its queries, which need a worker; when none answers the command says so and exits 1.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import type { LeadStatus } from '../contracts/lead';
import type { LedgerEntry } from '../contracts/ledger';
import { subagentProgressQuery, subagentStepsQuery, type SubagentProgress } from '../contracts/queries';
import { SUBAGENT_STATUS } from '../contracts/search-attributes';
import type { SubagentStep } from '../contracts/steps';
import { promptFromDetails } from '../contracts/text';
import { SubagentsClient, workflowUiUrl, type ClosedRun, type RunHandle } from '../client/api';
import { loadCommandConfig, requireServer } from './command-setup';
import { connectClient } from '../client/connection';
import { askWorker, QUERY_DEADLINE_MS, type Asked } from '../client/worker-liveness';
import { parseFlags, stringFlag, UsageError, type FlagSpec } from './flags';
import { identify, notALeadRunMessage } from '../client/id-kinds';
import { uiBaseUrl } from './inspect-commands';
import { barTone, renderReport, type ReportBar, type ReportStepLog, type RunReport } from './report';
import { closedSubagentSteps, executionHistories, runningGraphSteps } from '../client/subagent-steps';
import { outcomeLine } from './outcome-lines';
import { workerCommandLine } from './worker-presence';

/** How long an open run's (or subagent's) queries may take: a worker answers in milliseconds; none never does. */
/** Characters of the lead's prompt that name its bar. */
const LEAD_LABEL_CHARS = 100;

/** The run cannot be reported: one line on stderr, exit code 1. */
class ReportError extends Error {
  override name = 'ReportError';
}

/** Where the report goes when `-o` does not say: `report-<run-id>.html` here, the id made a safe file name. */
export function defaultReportPath(runId: string): string {
  return `report-${runId.replace(/[^\w.-]/g, '_')}.html`;
}

/** The prompt a workflow was started with, as its static details (the Web UI's copy) keep it. */
async function startPrompt(description: WorkflowExecutionDescription): Promise<string | undefined> {
  const details = await description.staticDetails().catch(() => undefined);
  return details === undefined ? undefined : promptFromDetails(details);
}

const isOpen = (description: WorkflowExecutionDescription) =>
  description.status.name === 'RUNNING' || description.status.name === 'CONTINUED_AS_NEW';

const firstLine = (text: string, max: number) => {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

interface ReadContext {
  client: Client;
  namespace: string;
  uiBase?: string;
  address: string;
  configFile?: string;
}

/** What one subagent's workflow says: its bar's facts, its step log, and the children it started. */
interface SubagentRecord {
  bar: Omit<ReportBar, 'depth'>;
  log?: ReportStepLog;
  children: { workflowId: string; type: string }[];
}

/** The workflows a history started as children, in the order they started, across continue-as-new. */
function startedChildren(
  histories: Awaited<ReturnType<typeof executionHistories>>,
): SubagentRecord['children'] {
  const children: SubagentRecord['children'] = [];
  for (const events of histories) {
    for (const event of events) {
      const started = event.childWorkflowExecutionStartedEventAttributes;
      const id = started?.workflowExecution?.workflowId;
      if (id) children.push({ workflowId: id, type: started.workflowType?.name ?? '' });
    }
  }
  return children;
}

/**
 * An open subagent's steps and turns from its queries (a running graph's from its latest checkpoint), or why
 * they could not be read.
 */
async function openSteps(
  context: ReadContext,
  handle: WorkflowHandle,
  description: WorkflowExecutionDescription,
): Promise<{ steps: SubagentStep[]; turns?: number; tokens?: number; unavailable?: string }> {
  const { client } = context;
  const { taskQueue } = description;
  let asked: Asked<[SubagentProgress, SubagentStep[]]>;
  try {
    asked = await askWorker(client, context.namespace, taskQueue, () =>
      Promise.all([handle.query(subagentProgressQuery), handle.query(subagentStepsQuery, 0)]),
    );
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { steps: [], unavailable: `still running, and its steps could not be read: ${message}` };
  }
  if (!asked.answered) {
    const why =
      asked.why === 'no_worker'
        ? `no worker polls task queue "${taskQueue}"`
        : `no worker answered within ${QUERY_DEADLINE_MS / 1000} s`;
    return { steps: [], unavailable: `still running, and ${why}` };
  }
  const [progress, steps] = asked.value;
  // A graph's run hands its messages (and turns, usage) to the workflow when it ends: until then, its
  // checkpoint and heartbeat have them.
  const graph = progress.last_seq === 0 ? await runningGraphSteps(client, description) : undefined;
  if (graph && 'steps' in graph) {
    const { model_calls: turns, usage } = graph.progress;
    return { steps: graph.steps, turns, ...(usage && { tokens: usage.total_tokens }) };
  }
  return {
    steps,
    turns: progress.turns,
    tokens: progress.token_usage?.total_tokens,
    ...(graph && { unavailable: `still running, and ${graph.unavailable}` }),
  };
}

/** A subagent (or a batch) as the server knows it: from its result and history, or its queries. */
async function readSubagent(context: ReadContext, workflowId: string, type: string): Promise<SubagentRecord> {
  const { client } = context;
  const handle = client.workflow.getHandle(workflowId);
  const description = await handle.describe();
  const memo = (description.memo ?? {}) as { description?: unknown; subagent_type?: unknown };
  const summary = (await description.staticSummary().catch(() => undefined)) ?? '';
  const histories = await executionHistories(client, workflowId);
  const first = histories[0]?.[0]?.eventTime;
  const open = isOpen(description);
  const ui = workflowUiUrl(context.uiBase, context.namespace, workflowId);
  const base = {
    workflow_id: workflowId,
    started_at: new Date(first ? tsToMs(first) : description.startTime.getTime()).toISOString(),
    ...(!open && description.closeTime && { ended_at: description.closeTime.toISOString() }),
    ...(ui && { ui_url: ui }),
  };
  const children = startedChildren(histories);
  if (type === 'batchWorkflow') {
    const status = open
      ? 'in_progress'
      : (description.typedSearchAttributes.get(SUBAGENT_STATUS) ?? description.status.name.toLowerCase());
    return {
      bar: { ...base, kind: 'batch', type: 'batch', description: summary.replace(/^batch: /, ''), status },
      children: [],
    };
  }
  const subagentType = typeof memo.subagent_type === 'string' ? memo.subagent_type : 'subagent';
  const taskDescription = typeof memo.description === 'string' ? memo.description : summary;
  const prompt = await startPrompt(description);
  const named = { type: subagentType, description: taskDescription, ...(prompt && { prompt }) };
  if (open) {
    const read = await openSteps(context, handle, description);
    const turns = read.turns ?? read.steps.filter((step) => step.kind === 'ai').length;
    return {
      bar: {
        ...base,
        kind: 'task',
        ...named,
        status: 'in_progress',
        turns,
        ...(read.tokens !== undefined && { tokens: read.tokens }),
      },
      log: {
        ...named,
        workflow_id: workflowId,
        tone: 'running',
        steps: read.steps,
        missing: [],
        ...(read.unavailable && { unavailable: read.unavailable }),
      },
      children,
    };
  }
  const closed = await closedSubagentSteps(client, handle, histories);
  const { result } = closed;
  const status = result?.status ?? description.status.name.toLowerCase();
  const error = result?.error ?? closed.error;
  return {
    bar: {
      ...base,
      kind: 'task',
      ...named,
      status,
      ...(result?.stop_reason && { stop_reason: result.stop_reason }),
      ...(error && { error }),
      ...(result && { turns: result.turns }),
      ...(result?.token_usage && { tokens: result.token_usage.total_tokens }),
    },
    log: {
      ...named,
      workflow_id: workflowId,
      tone: barTone(status, result?.stop_reason),
      steps: closed.steps,
      missing: closed.missing,
      outcome: result ? outcomeLine(workflowId, result) : `${workflowId}: ${status}: ${closed.error}`,
    },
    children,
  };
}

/** A ledger entry's bar: its times and outcome as the lead recorded them, its turns from the child's record. */
function entryBar(context: ReadContext, entry: LedgerEntry, record: SubagentRecord | undefined): ReportBar {
  const running = entry.status === 'queued' || entry.status === 'in_progress';
  const ui = workflowUiUrl(context.uiBase, context.namespace, entry.workflow_id);
  const turns = record?.bar.turns;
  return {
    kind: entry.kind === 'batch' ? 'batch' : 'task',
    depth: 1,
    workflow_id: entry.workflow_id,
    type: entry.subagent_type,
    description: entry.description,
    status: entry.status,
    ...(entry.stop_reason && { stop_reason: entry.stop_reason }),
    ...(entry.error && { error: entry.error }),
    ...(entry.started_at && { queued_at: entry.created_at }),
    started_at: entry.started_at ?? entry.created_at,
    ...(!running && { ended_at: entry.updated_at }),
    ...(entry.token_usage && { tokens: entry.token_usage.total_tokens }),
    ...(turns !== undefined && { turns }),
    ...(entry.batch && { batch: entry.batch }),
    ...(ui && { ui_url: ui }),
  };
}

/** A subagent that is gone from the server (its retention passed): what the ledger says, no steps. */
async function readOrMissing(
  context: ReadContext,
  workflowId: string,
  type: string,
): Promise<SubagentRecord | undefined> {
  try {
    return await readSubagent(context, workflowId, type);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** Bars and step logs of `children` and, depth first, of theirs. */
async function descend(
  context: ReadContext,
  children: SubagentRecord['children'],
  depth: number,
  out: { bars: ReportBar[]; logs: ReportStepLog[] },
): Promise<void> {
  for (const child of children) {
    const record = await readOrMissing(context, child.workflowId, child.type);
    if (!record) continue;
    out.bars.push({ ...record.bar, depth });
    if (record.log) out.logs.push(record.log);
    await descend(context, record.children, depth + 1, out);
  }
}

/** The lead's start: its first execution's, when it has continued as new. */
async function leadStart(
  client: Client,
  runId: string,
  description: WorkflowExecutionDescription,
): Promise<Date> {
  const firstRunId = description.raw.workflowExecutionInfo?.firstRunId;
  if (!firstRunId || firstRunId === description.runId) return description.startTime;
  const first = await client.workflow
    .getHandle(runId, firstRunId)
    .describe()
    .catch(() => undefined);
  return first?.startTime ?? description.startTime;
}

/** An open run's ledger and status through its queries, or a ReportError saying no worker answers. */
async function openRunState(
  context: ReadContext,
  run: RunHandle,
  taskQueue: string,
): Promise<{ ledger: LedgerEntry[]; status: LeadStatus }> {
  const queue = `task queue "${taskQueue}" at ${context.address}`;
  const noWorker = (silentForMs?: number) =>
    new ReportError(
      `report: run ${run.runId} is still running, and ` +
        (silentForMs === undefined
          ? `no worker polls ${queue}`
          : `no worker on ${queue} answered within ${silentForMs / 1000} s`) +
        ' to answer its queries: report it once it has ended, or start a worker with: ' +
        workerCommandLine({ ...context, taskQueue }),
    );
  const asked = await run.ask(taskQueue, async (r) => ({
    ledger: await r.ledger(),
    status: await r.status(),
  }));
  if (asked.answered) return asked.value;
  throw noWorker(asked.why === 'no_answer' ? QUERY_DEADLINE_MS : undefined);
}

/** Everything the report shows of run `runId`, read now. */
export async function readRunReport(
  context: ReadContext,
  runId: string,
  now = new Date(),
): Promise<RunReport> {
  const { client } = context;
  const run = new SubagentsClient(client, context.namespace).getRun(runId);
  const description = await client.workflow.getHandle(runId).describe();
  const inspected = await run.inspect();
  const prompt = (await startPrompt(description)) ?? '';
  const ui = workflowUiUrl(context.uiBase, context.namespace, runId);
  let ledger: LedgerEntry[] | undefined;
  let lead: Pick<RunReport, LeadFacts>;
  if (inspected.open) {
    const state = await openRunState(context, run, inspected.task_queue);
    ledger = state.ledger;
    lead = {
      status: state.status.state,
      turns: state.status.turns,
      token_usage: state.status.token_usage,
      ...(state.status.cost_usd && { cost_usd: state.status.cost_usd }),
    };
  } else {
    ledger = inspected.result?.ledger;
    lead = closedLead(inspected);
  }
  const leadBar: ReportBar = {
    kind: 'lead',
    depth: 0,
    workflow_id: runId,
    type: 'lead',
    description: firstLine(prompt, LEAD_LABEL_CHARS) || runId,
    status: inspected.open ? 'running' : lead.status,
    ...(lead.stop_reason && { stop_reason: lead.stop_reason }),
    ...(lead.error && { error: lead.error }),
    started_at: (await leadStart(client, runId, description)).toISOString(),
    ...(!inspected.open && description.closeTime && { ended_at: description.closeTime.toISOString() }),
    ...(lead.token_usage?.total && { tokens: lead.token_usage.total.total_tokens }),
    ...(lead.turns !== undefined && { turns: lead.turns }),
    ...(ui && { ui_url: ui }),
  };
  const out = { bars: [leadBar], logs: [] as ReportStepLog[] };
  if (ledger) {
    for (const entry of ledger) {
      const type = entry.kind === 'batch' ? 'batchWorkflow' : 'subagentWorkflow';
      const record = await readOrMissing(context, entry.workflow_id, type);
      out.bars.push(entryBar(context, entry, record));
      if (record?.log) out.logs.push(record.log);
      if (record) await descend(context, record.children, 2, out);
    }
  } else {
    // No result, no ledger: the children it started are in its history.
    await descend(context, startedChildren(await executionHistories(client, runId)), 1, out);
  }
  return {
    run_id: runId,
    generated_at: now.toISOString(),
    open: inspected.open,
    ...lead,
    ...(prompt && { prompt }),
    ...(ui && { ui_url: ui }),
    bars: out.bars,
    ...(ledger && { ledger }),
    step_logs: out.logs,
  };
}

/** What the report says of the lead itself. */
type LeadFacts = 'status' | 'stop_reason' | 'error' | 'final_output' | 'turns' | 'token_usage' | 'cost_usd';

function closedLead(closed: ClosedRun): Pick<RunReport, LeadFacts> {
  const { result } = closed;
  return {
    status: closed.status,
    ...(closed.stop_reason && { stop_reason: closed.stop_reason }),
    ...(closed.error && { error: closed.error }),
    ...(result && {
      final_output: result.final_output,
      turns: result.turns,
      token_usage: result.token_usage,
      ...(result.cost_usd && { cost_usd: result.cost_usd }),
    }),
  };
}

export async function reportCommand(args: string[]): Promise<number> {
  const spec: FlagSpec = { output: { type: 'string', short: 'o' } };
  const { values, positionals } = parseFlags(args, spec, 'report');
  if (positionals.length !== 1)
    throw new UsageError('report: give one run id: subagents report <run-id> [-o report.html]');
  const [runId] = positionals;
  const configFile = stringFlag(values, 'config');
  const settings = await requireServer('report', loadCommandConfig(values));
  const { client, connection } = await connectClient(settings);
  try {
    const uiBase = await uiBaseUrl(settings);
    const context: ReadContext = {
      client,
      namespace: settings.namespace,
      address: settings.address,
      ...(uiBase && { uiBase }),
      ...(configFile !== undefined && { configFile }),
    };
    const { kind } = await identify(client, runId);
    if (kind.kind === 'unknown') throw new UsageError(`report: no run ${runId} on ${settings.address}`);
    // A batch's or a subagent's page would be a lead's page of the wrong thing: name what it is instead.
    if (kind.kind !== 'lead') throw new UsageError(notALeadRunMessage('report', kind));
    let report: RunReport;
    try {
      report = await readRunReport(context, runId);
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        throw new UsageError(`report: no run ${runId} on ${settings.address}`);
      if (err instanceof ReportError) {
        process.stderr.write(`subagents: ${err.message}\n`);
        return 1;
      }
      throw err;
    }
    const path = resolve(stringFlag(values, 'output') ?? defaultReportPath(runId));
    try {
      writeFileSync(path, renderReport(report));
    } catch (err) {
      process.stderr.write(`subagents: report: cannot write ${path}: ${(err as Error).message}\n`);
      return 1;
    }
    if (values.json) process.stdout.write(`${JSON.stringify({ path })}\n`);
    else process.stdout.write(`${path}\n`);
    return 0;
  } finally {
    await connection.close();
  }
}
