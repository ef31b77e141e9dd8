/**
 * Starting a fork or a resume of a lead run, or a fork of one subagent (docs/fork.md): a new run whose first
 * execution reads the original's state at a turn and goes on from there (workflows/fork-run.ts,
 * workflows/fork-subagent.ts). What the id names is told by the workflow's type; its search attributes say where
 * the fork came from (`ForkedFrom`, `ForkTurn`), beside a run's own.
 */
import {
  WorkflowNotFoundError,
  type WorkflowClient,
  type WorkflowExecutionDescription,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  FORK_WORKFLOW_TYPES,
  FORKABLE_WORKFLOW_TYPES,
  type ForkRequest,
  type ForkRunInput,
} from '../contracts/run-fork';
import {
  DELEGATION_DEPTH,
  FORK_TURN,
  FORKED_FROM,
  LEAD_RUN_ID,
  runSearchAttributes,
  SUBAGENT_TYPE,
  USER_ID,
} from '../contracts/search-attributes';
import type { SubagentResult } from '../contracts/subagent';
import { promptDetails, summaryLine } from '../contracts/text';
import type * as workflows from '../workflows';
import { kindOf, kindText } from './id-kinds';
import { subagentResult } from './subagent-steps';

type LeadRunWorkflow = typeof workflows.leadRunWorkflow;

export interface ForkOptions {
  /** Turns kept (0: all run again); absent: the last completed one (a resume, of a lead run only). */
  turn?: number;
  /** A user message before the first live turn. */
  message?: string;
  /** Run on this folder instead of the original's snapshot restored into a new one. */
  workspace?: string;
  /** The fork's run id; default a new one. */
  runId: string;
  /** Default: the original's task queue. */
  taskQueue?: string;
}

/** A fork refused before it started: the id names no run or subagent, or one of the other kind. */
export class ForkRefusedError extends Error {
  override name = 'ForkRefusedError';
}

/** What forks: a lead run or a subagent, by its workflow's type; any other id is refused, saying what it is. */
export async function forkableKind(
  client: WorkflowClient,
  id: string,
): Promise<{ kind: 'lead' | 'subagent'; description: WorkflowExecutionDescription }> {
  let description: WorkflowExecutionDescription;
  try {
    description = await client.getHandle(id).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError)
      throw new ForkRefusedError(
        `${id} is no run or subagent in namespace ${client.options.namespace}: give a run id (subagents ` +
          "list) or a subagent's workflow id (<run-id>/task/<task-id>, subagents status <run-id>)",
      );
    throw err;
  }
  const kind = FORKABLE_WORKFLOW_TYPES[description.type];
  if (kind === undefined) {
    const what = kindText(kindOf(id, description.type, description.typedSearchAttributes.get(LEAD_RUN_ID)));
    throw new ForkRefusedError(`${id} is ${what}: only a lead run or a subagent forks`);
  }
  return { kind, description };
}

/** The fork's input and the parts of its start that do not depend on its kind. */
function forkStart(fromId: string, options: ForkOptions): ForkRunInput {
  const request: ForkRequest = {
    from_run_id: fromId,
    ...(options.turn !== undefined && { turn: options.turn }),
    ...(options.message !== undefined && { message: options.message }),
    ...(options.workspace !== undefined && { workspace: options.workspace }),
  };
  return { ...request, run_id: options.runId };
}

/** `ForkedFrom` and (when known at the start) `ForkTurn`. */
function forkAttributes(fromId: string, turn: number | undefined) {
  return [
    { key: FORKED_FROM, value: fromId },
    ...(turn !== undefined ? [{ key: FORK_TURN, value: String(turn) }] : []),
  ];
}

/** Starts the fork of lead run `fromRunId`; its handle is a lead run's (the fork continues as one, same id). */
export async function startFork(
  client: WorkflowClient,
  fromRunId: string,
  options: ForkOptions,
): Promise<WorkflowHandle<LeadRunWorkflow>> {
  const { kind, description: original } = await forkableKind(client, fromRunId);
  if (kind !== 'lead')
    throw new ForkRefusedError(
      `${fromRunId} is a subagent, not a lead run: fork it as a run of its own with ` +
        'SubagentsClient.forkSubagent (subagents fork <subagent-id> --turn N)',
    );
  const userId = original.typedSearchAttributes.get(USER_ID);
  const what =
    options.turn === undefined ? `resume of ${fromRunId}` : `fork of ${fromRunId} at turn ${options.turn}`;
  await client.start(FORK_WORKFLOW_TYPES.lead, {
    taskQueue: options.taskQueue ?? original.taskQueue,
    workflowId: options.runId,
    args: [forkStart(fromRunId, options)],
    staticSummary: summaryLine(`lead: ${what}`),
    staticDetails: promptDetails(options.message ?? what),
    typedSearchAttributes: [
      ...runSearchAttributes(options.runId, 'lead', 0, userId),
      ...forkAttributes(fromRunId, options.turn),
    ],
  });
  return client.getHandle<LeadRunWorkflow>(options.runId);
}

/** A subagent's fork, a run of its own: its id, its result (however it ended), its cancellation. */
export class SubagentForkHandle {
  constructor(
    readonly runId: string,
    private readonly handle: WorkflowHandle,
  ) {}

  /** The fork's result with its own `run_id` and `forked_from`, a failed or timed-out one's too. */
  async result(): Promise<SubagentResult & { run_id: string }> {
    return { ...(await subagentResult(this.handle)), run_id: this.runId };
  }

  async cancel(): Promise<void> {
    await this.handle.cancel();
  }
}

/**
 * Starts the fork of subagent `subagentId` at its turn `options.turn`: a subagent run of its own with the same
 * agent, tools and scope, its first turns read from the original's history.
 */
export async function startSubagentFork(
  client: WorkflowClient,
  subagentId: string,
  options: ForkOptions & { turn: number },
): Promise<SubagentForkHandle> {
  const { kind, description: original } = await forkableKind(client, subagentId);
  if (kind !== 'subagent')
    throw new ForkRefusedError(
      `${subagentId} is a lead run, not a subagent: fork it with RunHandle.fork ` +
        '(subagents fork <run-id> --turn N)',
    );
  const attributes = original.typedSearchAttributes;
  const agentType = attributes.get(SUBAGENT_TYPE) ?? 'subagent';
  const what = `fork of ${subagentId} at turn ${options.turn}`;
  await client.start(FORK_WORKFLOW_TYPES.subagent, {
    taskQueue: options.taskQueue ?? original.taskQueue,
    workflowId: options.runId,
    args: [forkStart(subagentId, options)],
    staticSummary: summaryLine(`${agentType}: ${what}`),
    staticDetails: promptDetails(options.message ?? what),
    typedSearchAttributes: [
      ...runSearchAttributes(
        options.runId,
        agentType,
        attributes.get(DELEGATION_DEPTH) ?? 1,
        attributes.get(USER_ID),
      ),
      ...forkAttributes(subagentId, options.turn),
    ],
  });
  return new SubagentForkHandle(options.runId, client.getHandle(options.runId));
}

/** A fork of a run, as its search attributes say (visibility, which may lag a just-started fork by a moment). */
export interface ForkLink {
  run_id: string;
  /** The lead turns it kept (absent: a resume still reading where to start). */
  turn?: number;
}

/** The forks and resumes of `runId`, newest first, at most `limit`. */
export async function forksOf(client: WorkflowClient, runId: string, limit = 20): Promise<ForkLink[]> {
  // A run id with a quote cannot be named in a list query; no fork was started from such a run by this client.
  if (/['"\\]/.test(runId)) return [];
  const links: ForkLink[] = [];
  for await (const execution of client.list({ query: `ForkedFrom = '${runId}'`, pageSize: limit })) {
    const turn = execution.typedSearchAttributes.get(FORK_TURN);
    links.push({ run_id: execution.workflowId, ...(turn !== undefined && { turn: Number(turn) }) });
    if (links.length >= limit) break;
  }
  return links;
}
