/**
 * What an id names: the commands that take a run id are given every id a user sees (in the Web UI, the
 * ledger, `batch start`, a schedule's runs) and tell a lead run from a subagent, a batch, a batch's item or
 * the admission workflow by the workflow's type, then say what it is and which command reads it.
 */
import {
  ApplicationFailure,
  WorkflowFailedError,
  WorkflowNotFoundError,
  type Client,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import { ADMISSION_WORKFLOW_TYPE } from '../contracts/admission';
import { isCancelledFailure, RESULT_MEMO } from '../contracts/closing';
import { FORK_WORKFLOW_TYPES } from '../contracts/run-fork';
import { FORKED_FROM, LEAD_RUN_ID } from '../contracts/search-attributes';

/** What a workflow id names, as far as these commands care. */
export type IdKind =
  | { kind: 'lead'; id: string }
  /** A delegation: `<parent>/task/<task>`, its parent the lead or (nested) another subagent. */
  | { kind: 'subagent'; id: string; leadId: string; parentId: string; taskId: string }
  /** A fork of one subagent (`subagents fork <subagent-id>`): a run of its own, `forkedFrom` the original. */
  | { kind: 'subagent_fork'; id: string; forkedFrom: string }
  /** A batch: a lead's (`<lead>/batch/<id>`, leadId set) or one `batch start` or a schedule started. */
  | { kind: 'batch'; id: string; leadId?: string }
  /** One attempt of one item of a batch: `<batch>/item/<key>/<attempt>`. */
  | { kind: 'batch_item'; id: string; batchId: string; key: string; attempt: number; leadId?: string }
  /** The semaphore of a task queue (`subagents-admission/<queue>`, `subagents-run-admission/<queue>`). */
  | { kind: 'admission'; id: string; taskQueue: string; pool: 'subagents' | 'runs' }
  | { kind: 'other'; id: string; workflowType: string }
  | { kind: 'unknown'; id: string };

const SUBAGENT = /^(.+)\/task\/([^/]+)$/;
const BATCH_ITEM = /^(.+)\/item\/([A-Za-z0-9._-]+)\/(\d+)$/;
const LEAD_BATCH = /^(.+?)\/batch\/[^/]+$/;
const ADMISSION = /^subagents-(run-)?admission\/(.+)$/;

/**
 * The kind of workflow `id` names, from its type (and its `LeadRunId` search attribute, `leadRunId`, which
 * a batch that belongs to no lead run sets to its own id; its `ForkedFrom`, `forkedFrom`, set on a fork).
 */
export function kindOf(id: string, workflowType: string, leadRunId?: string, forkedFrom?: string): IdKind {
  const lead = leadRunId !== undefined && leadRunId !== id ? leadRunId : undefined;
  switch (workflowType) {
    case 'leadRunWorkflow':
      return { kind: 'lead', id };
    case 'batchWorkflow': {
      const leadId = lead ?? LEAD_BATCH.exec(id)?.[1];
      return { kind: 'batch', id, ...(leadId !== undefined && { leadId }) };
    }
    case 'subagentWorkflow': {
      const item = BATCH_ITEM.exec(id);
      if (item) {
        const batchLead = lead ?? LEAD_BATCH.exec(item[1])?.[1];
        return {
          kind: 'batch_item',
          id,
          batchId: item[1],
          key: item[2],
          attempt: Number(item[3]),
          ...(batchLead !== undefined && batchLead !== item[1] && { leadId: batchLead }),
        };
      }
      const task = SUBAGENT.exec(id);
      if (task) {
        const leadId = lead ?? id.slice(0, id.indexOf('/task/'));
        return { kind: 'subagent', id, leadId, parentId: task[1], taskId: task[2] };
      }
      // A subagent's fork: its first execution reads the original (below), then it continues as this type.
      if (forkedFrom !== undefined && lead === undefined) return { kind: 'subagent_fork', id, forkedFrom };
      return { kind: 'other', id, workflowType };
    }
    case FORK_WORKFLOW_TYPES.subagent:
      if (forkedFrom !== undefined) return { kind: 'subagent_fork', id, forkedFrom };
      return { kind: 'other', id, workflowType };
    case ADMISSION_WORKFLOW_TYPE: {
      const admission = ADMISSION.exec(id);
      if (admission)
        return {
          kind: 'admission',
          id,
          taskQueue: admission[2],
          pool: admission[1] === undefined ? 'subagents' : 'runs',
        };
      return { kind: 'other', id, workflowType };
    }
    default:
      return { kind: 'other', id, workflowType };
  }
}

export interface Identified {
  kind: IdKind;
  /** The server's description of the workflow; absent when there is none of that id. */
  description?: WorkflowExecutionDescription;
}

/** Asks the server what `id` names (one DescribeWorkflowExecution). */
export async function identify(client: Client, id: string): Promise<Identified> {
  let description: WorkflowExecutionDescription;
  try {
    description = await client.workflow.getHandle(id).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { kind: { kind: 'unknown', id } };
    throw err;
  }
  const attributes = description.typedSearchAttributes;
  const kind = kindOf(id, description.type, attributes.get(LEAD_RUN_ID), attributes.get(FORKED_FROM));
  return { kind, description };
}

/** `a subagent of run L`, `a batch`, …: what the id is, as the rest of a sentence. */
export function kindText(kind: IdKind): string {
  switch (kind.kind) {
    case 'lead':
      return 'a lead run';
    case 'subagent':
      return kind.parentId === kind.leadId
        ? `a subagent of run ${kind.leadId}`
        : `a subagent of ${kind.parentId} (run ${kind.leadId})`;
    case 'subagent_fork':
      return `a fork of subagent ${kind.forkedFrom}, a run of its own`;
    case 'batch':
      return kind.leadId === undefined ? 'a batch' : `a batch of run ${kind.leadId}`;
    case 'batch_item':
      return `attempt ${kind.attempt} of item ${kind.key} of batch ${kind.batchId}`;
    case 'admission':
      return (
        `the admission workflow of task queue "${kind.taskQueue}" (it grants ` +
        `${kind.pool === 'runs' ? 'lead runs' : 'subagents'} their slots; the Web UI shows its state)`
      );
    case 'other':
      return `a workflow of type ${kind.workflowType}, not one of subagents' runs`;
    case 'unknown':
      return 'not known';
  }
}

/** What each command reads of a lead run, to say what the other kinds do not have. */
const WHAT_IT_READS: Readonly<Record<string, string>> = {
  ledger: 'delegation ledger',
  events: 'events',
  report: 'report',
  cancel: 'cancellation',
  answer: 'questions',
};

/** The commands that read what `command` would have read, for an id that is not a lead run. */
export function insteadLines(command: string, kind: IdKind): string[] {
  const noun = WHAT_IT_READS[command] ?? command;
  switch (kind.kind) {
    case 'subagent': {
      const ref = kind.id.slice(kind.leadId.length + '/task/'.length).replace(/\/task\//g, '/');
      const run =
        command === 'cancel'
          ? `a subagent is cancelled with its run: subagents cancel ${kind.leadId}`
          : command === 'answer'
            ? `its questions are answered through its run: subagents answer ${kind.leadId} "<answer>" --question ${ref}/q1`
            : `the run's ${noun}: subagents ${command} ${kind.leadId}`;
      return [
        `its status: subagents status ${kind.id}`,
        `its steps: subagents steps ${kind.parentId} ${kind.taskId}`,
        run,
      ];
    }
    case 'batch':
      return [
        `its items: subagents batch status ${kind.id}`,
        `their results: subagents batch results ${kind.id}`,
        ...(command === 'cancel' ? [`to cancel it: subagents batch cancel ${kind.id}`] : []),
        ...(kind.leadId !== undefined && command !== 'cancel'
          ? [`its run's ${noun}: subagents ${command} ${kind.leadId}`]
          : []),
      ];
    case 'subagent_fork':
      return [
        `its status: subagents status ${kind.id}`,
        `its steps: subagents steps ${kind.id}`,
        `the subagent it was forked from: subagents status ${kind.forkedFrom}`,
      ];
    case 'batch_item':
      return [
        `its status: subagents status ${kind.id}`,
        `its steps: subagents steps ${kind.id}`,
        `its batch: subagents batch status ${kind.batchId}`,
        ...(command === 'cancel' ? [`to cancel the batch: subagents batch cancel ${kind.batchId}`] : []),
      ];
    case 'admission':
    case 'other':
      return ['lead runs: subagents list'];
    default:
      return [];
  }
}

/** One line for a command given an id that is not a lead run: what it is, and what to run instead. */
export function notALeadRunMessage(command: string, kind: IdKind): string {
  const instead = insteadLines(command, kind);
  return `${command}: ${kind.id} is ${kindText(kind)}, not a lead run${instead.length > 0 ? `; ${instead.join('; ')}` : ''}`;
}

/** The first line of a failure and of each cause, as far as they add something. */
export function failureText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    const line = e.message.split('\n')[0];
    if (line && !parts.includes(line)) parts.push(line);
  }
  return parts.join(': ') || String(err);
}

/** How a closed workflow ended: its result, returned or carried in its failure's details, or why there is none. */
export interface ClosedOutcome<T> {
  execution_status: string;
  result?: T;
  /** What the failure, cancellation, termination or timeout said, when the workflow returned no result. */
  error?: string;
}

/**
 * A closed workflow's result, whether it completed with it or failed with it as its failure's first detail
 * (a failed subagent, lead or batch); `looksRight` tells a result from another detail.
 */
export async function closedOutcome<T>(
  handle: WorkflowHandle,
  executionStatus: string,
  looksRight: (value: object) => boolean,
): Promise<ClosedOutcome<T>> {
  try {
    return { execution_status: executionStatus, result: (await handle.result()) as T };
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    for (let at: unknown = err.cause; at instanceof Error; at = (at as { cause?: unknown }).cause) {
      if (at instanceof ApplicationFailure) {
        const [detail] = at.details ?? [];
        if (typeof detail === 'object' && detail !== null && looksRight(detail))
          return { execution_status: executionStatus, result: detail as T, error: failureText(err.cause) };
      }
    }
    // A cancelled run, subagent or batch keeps its result in its memo (contracts/closing.ts).
    if (isCancelledFailure(err)) {
      const recorded = (await handle.describe()).memo?.[RESULT_MEMO];
      if (typeof recorded === 'object' && recorded !== null && looksRight(recorded))
        return { execution_status: executionStatus, result: recorded as T, error: failureText(err.cause) };
    }
    return {
      execution_status: executionStatus,
      error: `${executionStatus.toLowerCase().replace('_', ' ')}: ${failureText(err.cause ?? err)}`,
    };
  }
}
