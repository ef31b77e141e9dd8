/**
 * A subagent's step log, read from a client: an open subagent answers its `subagent_steps` query (a worker
 * needed), a running graph's steps so far are its latest checkpoint's messages; a closed one is rebuilt from
 * its history, which keeps every model call's and tool call's result (a graph's messages in its run's): what
 * a step log holds, short of a delegation's text.
 */
import {
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowExecutionStatusName,
  type WorkflowHandle,
} from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type * as GraphMessages from '../activities/graph/graph-messages';
import { approveToolCallUpdate, denyToolCallUpdate, type RecordedDecision } from '../contracts/approvals';
import { batchItemWorkflowId } from '../contracts/batch';
import { CLARIFICATION_TOOL_NAME } from '../contracts/clarification';
import type { GraphProgress, GraphRunResult } from '../contracts/graph';
import { deniedToolText, personDeniedReason } from '../contracts/guardrails';
import type { AssistantMessage, ToolCall, ToolMessage } from '../contracts/messages';
import type { ModelCallResult } from '../contracts/model';
import {
  recordsAfter,
  subagentProgressQuery,
  subagentStepsQuery,
  type SubagentProgress,
} from '../contracts/queries';
import {
  screenCalls,
  type ActiveSkill,
  type RunSkillsSnapshot,
  type SnapshotSkill,
} from '../contracts/run-skills';
import { approvalStep, buildStep, type SubagentStep } from '../contracts/steps';
import type { SubagentResult } from '../contracts/subagent';
import type { ToolSearchResult } from '../contracts/tool-search';
import type { ToolCallInput, ToolCallResult } from '../contracts/tools';
import { payloadStore, type BlobStore } from '../payloads/store';
import { workflowResult } from './results';

/**
 * What these readers need of a client: its workflow client (handles, and the data converter with the codec
 * that decodes history). A Client is one; so is `{ workflow: handle.client }` of a workflow handle.
 */
export type WorkflowReader = Pick<Client, 'workflow'>;

/**
 * A subagent's result, from a client: a failed or timed-out subagent fails its workflow with its result in the
 * failure's details, a cancelled one records it in its memo (workflows/subagent.ts); other failures throw.
 */
export function subagentResult(handle: WorkflowHandle): Promise<SubagentResult> {
  return workflowResult(handle) as Promise<SubagentResult>;
}

/** The subagent workflow of a lead run's delegation (`<run-id>/task/<task-id>`, nested ones the same way). */
export function subagentWorkflowId(runId: string, taskId: string): string {
  return `${runId}/task/${taskId}`;
}

/**
 * What a subagent's history says, in order: its model calls and its tool calls' outcomes, or (a graph agent)
 * the graph's messages its run returned.
 */
export type HistoryRecord =
  | { kind: 'model'; result: ModelCallResult }
  | { kind: 'tool'; result: ToolCallResult }
  /** A tool activity that failed (its call known from when it was scheduled). */
  | { kind: 'tool_failed'; call: ToolCall; message: string }
  /** A graph agent's run (one activity): its AI and tool messages, as the workflow made steps of them. */
  | { kind: 'graph'; messages: (AssistantMessage | ToolMessage)[] }
  /** A graph agent's run that returned nothing: why. */
  | { kind: 'graph_unfinished'; reason: string }
  /** The agent's skills, as its run's snapshot found them (`loadRunSkills`). */
  | { kind: 'skills'; skills: SnapshotSkill[] }
  /** A person's decision on a held call (an `approve_tool_call` / `deny_tool_call` Update that was recorded). */
  | { kind: 'decision'; decision: RecordedDecision };

export interface RebuiltSteps {
  steps: SubagentStep[];
  /** What the history does not hold, one sentence each. */
  missing: string[];
}

/**
 * The step log as the workflow kept it, rebuilt from its history's records: an assistant step per model call
 * (a provider's error fallback records none), then its tool calls' results in the order the model issued
 * them; a graph's messages one step each, as they came. `guardStopped`: the run ended on a guard's cap, whose
 * last turn's tool calls were dropped unrun (a graph's messages are its state's: kept as they are).
 */
export function stepsFromHistory(
  records: readonly HistoryRecord[],
  options: { guardStopped: boolean },
): RebuiltSteps {
  const steps: SubagentStep[] = [];
  const missing: string[] = [];
  let pending: ToolCall[] = [];
  let outcomes = new Map<string, HistoryRecord[]>();
  // The skills' policy, replayed from the snapshot as the workflow applied it: which read activated a skill,
  // which call it refused (a refused call ran nowhere: its result is the refusal).
  let skills: SnapshotSkill[] = [];
  let active: ActiveSkill[] = [];
  let screened = new Map<string, { refusal?: ToolMessage; activated?: string }>();
  const push = (message: Parameters<typeof buildStep>[1], promoted?: string[], activated?: string) =>
    steps.push(buildStep(steps.length + 1, message, promoted, activated));
  /** The decisions on held calls, by tool_call_id: their steps come before the turn's results, as they did live. */
  let decided = new Map<string, RecordedDecision>();
  const flush = () => {
    for (const call of pending) {
      const decision = decided.get(call.id);
      if (decision) steps.push({ seq: steps.length + 1, ...approvalStep({ ...decision, call_id: call.id }) });
    }
    for (const call of pending) {
      const outcome = outcomes.get(call.id)?.shift();
      const policy = screened.get(call.id);
      const decision = decided.get(call.id);
      // A call the history shows running was not refused (tool_search under a skill runs since issue 46).
      if (policy?.refusal && outcome?.kind !== 'tool') {
        push(policy.refusal);
      } else if (decision?.decision === 'denied' && decision.policy_id !== undefined) {
        push({
          role: 'tool',
          tool_call_id: call.id,
          name: call.name,
          content: deniedToolText(
            call.name,
            personDeniedReason(decision.by, decision.note),
            decision.policy_id,
          ),
          is_error: true,
        });
      } else if (outcome?.kind === 'tool') {
        const { result } = outcome;
        push(
          {
            role: 'tool',
            tool_call_id: result.tool_call_id,
            name: result.name,
            content: result.content,
            is_error: result.is_error,
          },
          (result as Partial<ToolSearchResult>).promoted,
          policy?.activated,
        );
      } else if (outcome?.kind === 'tool_failed') {
        push({
          role: 'tool',
          tool_call_id: call.id,
          name: call.name,
          content: `Tool "${call.name}" failed: ${outcome.message}`,
          is_error: true,
        });
      } else {
        missing.push(
          call.name === 'task'
            ? `the result of delegation ${call.id} (its text is built from the child's result: see the child's own steps)`
            : call.name === CLARIFICATION_TOOL_NAME
              ? `the answer to question ${call.id} (the workflow waited for it: see the run's clarification events)`
              : `the result of tool call ${call.id} (${call.name}): not in history`,
        );
      }
    }
    pending = [];
    outcomes = new Map();
    screened = new Map();
    decided = new Map();
  };
  const lastModel = records.reduce((last, record, i) => (record.kind === 'model' ? i : last), -1);
  records.forEach((record, i) => {
    if (record.kind === 'skills') {
      skills = record.skills;
      return;
    }
    if (record.kind === 'decision') {
      const id = record.decision.tool_call_id;
      if (id !== undefined) decided.set(id, record.decision);
      return;
    }
    if (record.kind === 'graph' || record.kind === 'graph_unfinished') {
      flush();
      if (record.kind === 'graph') for (const message of record.messages) push(message);
      else missing.push(`the graph's messages: ${record.reason}`);
      return;
    }
    if (record.kind !== 'model') {
      const id = record.kind === 'tool' ? record.result.tool_call_id : record.call.id;
      outcomes.set(id, [...(outcomes.get(id) ?? []), record]);
      return;
    }
    flush();
    const { result } = record;
    if (result.error_fallback) return;
    const dropped = i === lastModel && options.guardStopped;
    const calls = dropped ? [] : result.tool_calls;
    push({ role: 'assistant', content: result.content, ...(calls.length > 0 && { tool_calls: calls }) });
    pending = calls;
    if (skills.length > 0 && calls.length > 0) {
      const decided = screenCalls(calls, active, skills, undefined);
      active = decided.active;
      calls.forEach((call, k) => screened.set(call.id, decided.screened[k]));
    }
  });
  flush();
  return { steps, missing };
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The activities that run one tool call (input `{call, …}`, result a ToolCallResult). */
const TOOL_ACTIVITIES: ReadonlySet<string> = new Set([
  'executeToolCall',
  'executeMcpToolCall',
  'searchMcpTools',
]);

/** The Updates that record a person's decision on a held call. */
const DECISION_UPDATES: ReadonlySet<string> = new Set([approveToolCallUpdate.name, denyToolCallUpdate.name]);

/** The local activity that takes an agent's skills snapshot (activities/skills/run-skills.ts). */
const SKILLS_ACTIVITY = 'loadRunSkills';

/** The activity that runs a graph agent's whole run and returns its messages (activities/graph/run-graph.ts). */
const GRAPH_ACTIVITY = 'runGraphSubagent';

/** The records of one execution's history, payloads decoded with the client's converter (and codec). */
async function historyRecords(
  client: WorkflowReader,
  events: readonly HistoryEvent[],
): Promise<HistoryRecord[]> {
  const converter = client.workflow.options.loadedDataConverter;
  const decode = <T>(payloads: temporal.api.common.v1.IPayloads | null | undefined) =>
    decodeFromPayloadsAtIndex<T>(converter, 0, payloads?.payloads);
  const scheduled = new Map<string, { type: string; input: temporal.api.common.v1.IPayloads | null }>();
  /** Graph runs scheduled and not closed yet, by their scheduled event's id. */
  const openGraphRuns = new Set<string>();
  const records: HistoryRecord[] = [];
  const failed = async (scheduledEventId: unknown, message: string) => {
    const id = String(scheduledEventId);
    const activity = scheduled.get(id);
    if (activity?.type === GRAPH_ACTIVITY && openGraphRuns.delete(id))
      records.push({ kind: 'graph_unfinished', reason: `its run failed: ${message}` });
    if (!activity || !TOOL_ACTIVITIES.has(activity.type)) return;
    const input = await decode<ToolCallInput>(activity.input);
    records.push({ kind: 'tool_failed', call: input.call, message });
  };
  /** Accepted Updates by id: their name (a decision's result is read when the Update completes). */
  const updates = new Map<string, string>();
  for (const event of events) {
    const accepted = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest;
    if (accepted?.meta?.updateId && accepted.input?.name) {
      updates.set(accepted.meta.updateId, accepted.input.name);
      continue;
    }
    const updated = event.workflowExecutionUpdateCompletedEventAttributes;
    if (updated) {
      const name = updates.get(updated.meta?.updateId ?? '');
      if (DECISION_UPDATES.has(name ?? '') && updated.outcome?.success)
        records.push({ kind: 'decision', decision: await decode<RecordedDecision>(updated.outcome.success) });
      continue;
    }
    const started = event.activityTaskScheduledEventAttributes;
    if (started) {
      const type = started.activityType?.name ?? '';
      scheduled.set(String(event.eventId), { type, input: started.input ?? null });
      if (type === GRAPH_ACTIVITY) openGraphRuns.add(String(event.eventId));
      continue;
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed) {
      const type = scheduled.get(String(completed.scheduledEventId))?.type;
      if (type === 'callModel')
        records.push({ kind: 'model', result: await decode<ModelCallResult>(completed.result) });
      if (type !== undefined && TOOL_ACTIVITIES.has(type))
        records.push({ kind: 'tool', result: await decode<ToolCallResult>(completed.result) });
      if (type === GRAPH_ACTIVITY) {
        openGraphRuns.delete(String(completed.scheduledEventId));
        const result = await decode<GraphRunResult>(completed.result);
        records.push({ kind: 'graph', messages: result.messages });
      }
      continue;
    }
    const failure = event.activityTaskFailedEventAttributes;
    if (failure) await failed(failure.scheduledEventId, failure.failure?.message ?? 'failed');
    const timedOut = event.activityTaskTimedOutEventAttributes;
    if (timedOut) await failed(timedOut.scheduledEventId, timedOut.failure?.message ?? 'timed out');
    // Idempotent tools run as local activities: a marker holds each one's result.
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName === 'core_local_activity' && marker.details?.result) {
      const data = await decode<{ activity_type?: string }>(marker.details.data);
      if (data.activity_type !== undefined && TOOL_ACTIVITIES.has(data.activity_type))
        records.push({ kind: 'tool', result: await decode<ToolCallResult>(marker.details.result) });
      if (data.activity_type === SKILLS_ACTIVITY) {
        const snapshot = await decode<RunSkillsSnapshot>(marker.details.result);
        records.push({ kind: 'skills', skills: snapshot.skills });
      }
    }
  }
  // The workflow stopped waiting (a cancel, its wall clock): the run's messages never reached history.
  if (openGraphRuns.size > 0)
    records.push({
      kind: 'graph_unfinished',
      reason: 'the subagent ended before its run returned them (it was cancelled, or its wall clock ran out)',
    });
  return records;
}

/** What a running graph subagent's latest checkpoint holds: its steps so far and its run's last heartbeat. */
export type RunningGraphSteps = { steps: SubagentStep[]; progress: GraphProgress } | { unavailable: string };

/**
 * A running graph subagent's steps so far: the messages of the checkpoint its run's last heartbeat names, read
 * from the payload store (its workflow gets them only when the run ends). Undefined when no graph run is in
 * flight, or it has stored no checkpoint yet.
 */
export async function runningGraphSteps(
  client: WorkflowReader,
  description: WorkflowExecutionDescription,
  store: BlobStore = payloadStore(),
): Promise<RunningGraphSteps | undefined> {
  const run = description.raw.pendingActivities?.find((a) => a.activityType?.name === GRAPH_ACTIVITY);
  if (!run?.heartbeatDetails?.payloads?.length) return undefined;
  const progress = await decodeFromPayloadsAtIndex<GraphProgress | undefined>(
    client.workflow.options.loadedDataConverter,
    0,
    run.heartbeatDetails.payloads,
  );
  if (progress?.head === undefined) return undefined;
  try {
    // The graph's thread is its subagent's workflow id (workflows/graph-subagent.ts).
    // LangChain reads the checkpoint: loaded here, for a running graph's steps alone, not by every `steps`.
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest
    const { checkpointStepMessages } = require('../activities/graph/graph-messages') as typeof GraphMessages;
    const messages = await checkpointStepMessages(store, progress.head, description.workflowId);
    return { steps: messages.map((message, i) => buildStep(i + 1, message)), progress };
  } catch (err) {
    const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return { unavailable: `its graph's steps so far could not be read from its checkpoint: ${message}` };
  }
}

/** Every execution's history of a workflow, first to last, walking back through continue-as-new. */
export async function executionHistories(
  client: WorkflowReader,
  workflowId: string,
): Promise<HistoryEvent[][]> {
  const histories: HistoryEvent[][] = [];
  for (let runId: string | undefined = undefined; ;) {
    const history: temporal.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    histories.unshift(events);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) return histories;
  }
}

/** A closed subagent's steps and result, from the server alone (its histories, when the caller has them). */
export async function closedSubagentSteps(
  client: WorkflowReader,
  handle: WorkflowHandle,
  histories?: HistoryEvent[][],
): Promise<ClosedSubagentSteps> {
  let result: SubagentResult | undefined;
  let error: string | undefined;
  try {
    result = await subagentResult(handle);
  } catch (err) {
    error = err instanceof Error ? err.message.split('\n')[0] : String(err);
  }
  const records: HistoryRecord[] = [];
  for (const events of histories ?? (await executionHistories(client, handle.workflowId)))
    records.push(...(await historyRecords(client, events)));
  const guardStopped = result?.stop_reason !== undefined;
  return {
    ...stepsFromHistory(records, { guardStopped }),
    ...(result && { result }),
    ...(error && { error }),
  };
}

/** A closed subagent's steps, with its result (or why it has none). */
export type ClosedSubagentSteps = RebuiltSteps & { result?: SubagentResult; error?: string };

/** An open subagent's steps after a cursor, and its progress. */
export interface OpenSubagentSteps {
  /** `graph_checkpoint`: a graph's run is in flight, and its latest checkpoint holds its steps so far. */
  source: 'query' | 'graph_checkpoint';
  progress: SubagentProgress;
  steps: SubagentStep[];
  /** Why a running graph's steps so far could not be read from its checkpoint. */
  unavailable?: string;
}

/**
 * An open subagent's steps with `seq > afterSeq` and its progress: its queries, read through `ask` (the
 * caller's worker liveness check; a plain read by default), or while a graph's run is in flight, that run's
 * latest checkpoint (a graph's run hands its messages to the workflow when it ends).
 */
export async function openSubagentSteps(
  client: WorkflowReader,
  handle: WorkflowHandle,
  afterSeq: number,
  ask: <T>(read: () => Promise<T>) => Promise<T> = (read) => read(),
): Promise<OpenSubagentSteps> {
  const [progress, steps] = await ask(() =>
    Promise.all([handle.query(subagentProgressQuery), handle.query(subagentStepsQuery, afterSeq)]),
  );
  if (progress.state === 'running' && progress.last_seq === 0) {
    const graph = await runningGraphSteps(client, await handle.describe());
    if (graph && 'steps' in graph)
      return { source: 'graph_checkpoint', progress, steps: recordsAfter(graph.steps, afterSeq) };
    if (graph) return { source: 'query', progress, steps, unavailable: graph.unavailable };
  }
  return { source: 'query', progress, steps };
}

/** A subagent's steps, open (`open: true`, read from it) or closed (rebuilt from its history). */
export type SubagentSteps =
  | ({ open: true } & OpenSubagentSteps)
  | ({ open: false; execution_status: WorkflowExecutionStatusName } & ClosedSubagentSteps);

/**
 * The steps with `seq > afterSeq` of the subagent workflow `workflowId` (a delegation's, a nested one's, a
 * batch item's): from its queries while it runs (a worker needed), from its history once it has closed.
 * Throws WorkflowNotFoundError when there is no such workflow.
 */
export async function subagentSteps(
  client: WorkflowReader,
  workflowId: string,
  afterSeq = 0,
): Promise<SubagentSteps> {
  const handle = client.workflow.getHandle(workflowId);
  const status = (await handle.describe()).status.name;
  if (status === 'RUNNING' || status === 'CONTINUED_AS_NEW')
    return { open: true, ...(await openSubagentSteps(client, handle, afterSeq)) };
  const closed = await closedSubagentSteps(client, handle);
  return { open: false, execution_status: status, ...closed, steps: recordsAfter(closed.steps, afterSeq) };
}

/** The most attempts a batch item has (contracts: max_attempts 1–10). */
const MAX_ITEM_ATTEMPTS = 10;

/** The workflow id of the latest attempt of batch `batchId`'s item `key` that has started; none, undefined. */
export async function latestBatchItemAttempt(
  client: WorkflowReader,
  batchId: string,
  key: string,
): Promise<string | undefined> {
  let latest: string | undefined;
  for (let attempt = 1; attempt <= MAX_ITEM_ATTEMPTS; attempt += 1) {
    const id = batchItemWorkflowId(batchId, key, attempt);
    const found = await client.workflow
      .getHandle(id)
      .describe()
      .then(
        () => true,
        (err: unknown) => {
          if (err instanceof WorkflowNotFoundError) return false;
          throw err;
        },
      );
    if (!found) break;
    latest = id;
  }
  return latest;
}
