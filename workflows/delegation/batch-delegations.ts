/**
 * The lead's durable batches, as its `Delegator` offers them: `batch_task` starts a `batchWorkflow` child that
 * outlives the call (and may outlive the run), `batch_status` / `read_batch_result` / `cancel_batch` follow one
 * this run or its conversation started, and a cancelled run cancels its batches still open. Each batch is one
 * entry in the delegator's ledger and events (`DelegationBook`), so the model sees it beside its `task` calls.
 */
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  proxyActivities,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { localActivities } from '../local-activities';
import { WorkflowExecutionAlreadyStartedError, type ActivityOptions } from '@temporalio/common';
import type { BatchToolActivities } from '../../activities/batch-tools';
import {
  BATCH_STATUS_TOOL_NAME,
  CANCEL_BATCH_TOOL_NAME,
  leadBatchWorkflowId,
  READ_BATCH_RESULT_TOOL_NAME,
  type BatchInput,
  type BatchItem,
  type BatchPageAnswer,
  type BatchResult,
  type BatchToolName,
} from '../../contracts/batch';
import { depthRefusalText } from '../../contracts/delegation-result';
import { childScope } from '../../contracts/run-scope';
import type { TaskEvent } from '../../contracts/events';
import type { LedgerEntry } from '../../contracts/ledger';
import { toolMessageFor, type ToolCall, type ToolMessage, type ToolSpec } from '../../contracts/messages';
import { runSearchAttributes } from '../../contracts/search-attributes';
import type { ResolvedAgent } from '../../contracts/subagent';
import { summaryLine } from '../../contracts/text';
// Type only: the batch is started by its workflow type name.
import type { batchWorkflow } from '../batch';
import { decidedBatchItemsProblems } from '../batch-validation';
import {
  buildBatchToolSpecs,
  parseBatchRefArgs,
  parseBatchTaskArgs,
  type BatchTaskArgs,
} from './batch-tools';
import type { DelegatorOptions } from './delegator';
import { appendEvent } from './events';
import { applyBatchEnd, isTerminal, startBatchEntry, type BatchEnd } from './ledger';
import { delegationDepthAllows } from './limits';

// Reading a workspace items file: a regular activity (it may be large), retried on a worker's fault; where the
// workspace is (workflows/workspace-route.ts).
const ITEMS_FILE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3 },
};
const { loadBatchItemsFile } = proxyActivities<BatchToolActivities>(ITEMS_FILE_OPTIONS);

// A batch's status or a page of its answers, read through the worker's client: quick, local.
const { describeBatchPage, readBatchResultsPage } = localActivities<BatchToolActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

/** While a `batch_status` call waits, a batch this run no longer watches (continued as new) is asked this often. */
const BATCH_WAIT_POLL_MS = 60_000;

/** What the delegator records, shared with its batches: replaced on each change, never edited in place. */
export interface DelegationBook {
  ledger: LedgerEntry[];
  events: TaskEvent[];
}

export class BatchDelegations {
  /** Batches this execution started and hears the end of (their child result). */
  private readonly watched = new Set<string>();

  constructor(
    private readonly options: DelegatorOptions,
    private readonly book: DelegationBook,
  ) {}

  /** The batch tools as the model sees them; none when batches are not enabled. */
  toolSpecs(agents: { name: string; description: string }[]): ToolSpec[] {
    return this.options.batch ? buildBatchToolSpecs(agents, this.options.batch) : [];
  }

  /**
   * Runs one `batch_task` call: its items (inline, or read from a workspace file) checked, then a
   * `batchWorkflow` started as `<owner id>/batch/<id>` and left to run (its parent may close before it ends:
   * ABANDON). The call answers as soon as the batch has started; the batch's end updates its ledger entry.
   */
  async start(call: ToolCall, id: string): Promise<ToolMessage> {
    const { agents, limits, depth, runId } = this.options;
    const settings = this.options.batch!;
    const refuse = (text: string) => toolMessageFor(call, text, true);
    const parsed = parseBatchTaskArgs(
      call.args,
      agents.map((agent) => agent.name),
      settings,
    );
    if (!parsed.ok) return refuse(parsed.error);
    if (!delegationDepthAllows(depth, limits.max_depth)) return refuse(depthRefusalText(limits.max_depth));
    const args = parsed.args;
    const agent = agents.find((candidate) => candidate.name === args.subagent_type)!;
    let items: BatchItem[];
    if (args.items_file !== undefined) {
      const path = args.items_file;
      const loaded = await this.options.route.run(
        (place) =>
          loadBatchItemsFile.executeWithOptions({ ...ITEMS_FILE_OPTIONS, ...place.home }, [
            {
              workspace: this.options.scope.workspace,
              placement: place.placement,
              path,
              max_items: settings.max_items,
            },
          ]),
        true,
      );
      if ('problems' in loaded) return refuse(batchRefusal(loaded.problems));
      items = loaded.items;
    } else {
      items = args.items ?? [];
      const problems = inlineItemsProblems(items, settings.max_items);
      if (problems.length > 0) return refuse(batchRefusal(problems));
    }
    const workflowId = leadBatchWorkflowId(workflowInfo().workflowId, id);
    const input = this.batchInput(args, agent, items);
    this.book.ledger = startBatchEntry(
      this.book.ledger,
      { id, runId, description: args.description, subagentType: agent.name, workflowId, items: items.length },
      now(),
    );
    try {
      // Not bound to the agent's cancellation scopes: the batch outlives this call and this run's answer; a
      // cancel of the run reaches it through `cancelOpen`.
      const child = await CancellationScope.nonCancellable(() =>
        startChild<typeof batchWorkflow>('batchWorkflow', {
          workflowId,
          args: [input],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          cancellationType: ChildWorkflowCancellationType.ABANDON,
          staticSummary: summaryLine(`batch: ${agent.name}: ${args.description} (${items.length} items)`),
          typedSearchAttributes: runSearchAttributes(runId, 'batch', depth, this.options.scope.user_id),
        }),
      );
      this.watched.add(id);
      void child.result().then(
        (result) => this.end(id, batchEnd(result)),
        // A cancelled batch ends Canceled (its counts in its memo, out of a workflow's reach).
        (err: unknown) =>
          this.end(
            id,
            isCancellation(err)
              ? { status: 'cancelled', counts: { total: items.length }, error: 'Batch cancelled' }
              : { status: 'failed', counts: { total: items.length }, error: failureText(err) },
          ),
      );
    } catch (err) {
      const error =
        err instanceof WorkflowExecutionAlreadyStartedError
          ? `a batch with the id ${id} already exists in this run`
          : failureText(err);
      this.end(id, { status: 'failed', counts: { total: items.length }, error });
      return refuse(`Batch refused: ${error}.`);
    }
    this.book.events = appendEvent(this.book.events, {
      type: 'batch_started',
      task_id: id,
      at: now(),
      description: args.description,
      subagent_type: agent.name,
      workflow_id: workflowId,
      items: items.length,
    });
    return toolMessageFor(call, startedText(id, args, agent.name, items.length, workflowId), false);
  }

  /** The batch's workflow input: the delegating agent's settings, one level deeper. */
  private batchInput(args: BatchTaskArgs, agent: ResolvedAgent, items: BatchItem[]): BatchInput {
    const { depth, runId } = this.options;
    return {
      run_id: runId,
      description: args.description,
      subagent_type: agent.name,
      agent,
      items,
      limits: args.limits,
      scope: childScope(this.options.scope, runId, this.options.route.inputField()),
      depth: depth + 1,
      honest_close: true,
    };
  }

  /** `batch_status`, `read_batch_result`, `cancel_batch`: on a batch this run (or its conversation) started. */
  async follow(call: ToolCall, tool: BatchToolName): Promise<ToolMessage> {
    const parsed = parseBatchRefArgs(tool, call.args);
    if (!parsed.ok) return toolMessageFor(call, parsed.error, true);
    const args = parsed.args;
    const entry = this.book.ledger.find(
      (candidate) =>
        candidate.kind === 'batch' &&
        (candidate.id === args.batch_id || candidate.workflow_id === args.batch_id),
    );
    if (!entry) {
      const known = this.book.ledger
        .filter((candidate) => candidate.kind === 'batch')
        .map((candidate) => candidate.id);
      return toolMessageFor(
        call,
        `No batch ${JSON.stringify(args.batch_id)} in this run (batches: ${known.join(', ') || 'none'}).`,
        true,
      );
    }
    const request = {
      workflow_id: entry.workflow_id,
      batch_id: entry.id,
      offset: args.offset,
      limit: args.limit,
    };
    if (tool === CANCEL_BATCH_TOOL_NAME) {
      if (isTerminal(this.entryStatus(entry.id))) {
        return toolMessageFor(call, `Batch ${entry.id} has already ended (${entry.status}).`, false);
      }
      await getExternalWorkflowHandle(entry.workflow_id).cancel();
      return toolMessageFor(
        call,
        `Cancellation requested for batch ${entry.id}: running items are cancelled, finished ones keep their ` +
          `answers, the rest never run. ${BATCH_STATUS_TOOL_NAME} shows the final counts.`,
        false,
      );
    }
    if (tool === BATCH_STATUS_TOOL_NAME && args.wait_seconds > 0)
      await this.waitFor(entry.id, args.wait_seconds);
    const page =
      tool === READ_BATCH_RESULT_TOOL_NAME
        ? await readBatchResultsPage({ ...request, max_chars: args.max_chars })
        : await describeBatchPage(request);
    this.notePage(entry.id, page);
    return toolMessageFor(call, page.text, false);
  }

  /** Waits durably until the batch ends or `seconds` pass; a batch not watched here is asked now and then. */
  private async waitFor(id: string, seconds: number): Promise<void> {
    const deadline = Date.now() + seconds * 1000;
    const ended = () => isTerminal(this.entryStatus(id));
    while (!ended()) {
      const left = deadline - Date.now();
      if (left <= 0) return;
      const watched = this.watched.has(id);
      await condition(ended, watched ? left : Math.min(left, BATCH_WAIT_POLL_MS), {
        summary: `batch_status: waiting for batch ${id}`,
      });
      if (!ended() && !watched) {
        const entry = this.book.ledger.find((candidate) => candidate.id === id)!;
        this.notePage(
          id,
          await describeBatchPage({ workflow_id: entry.workflow_id, batch_id: id, offset: 0, limit: 0 }),
        );
      }
    }
  }

  private entryStatus(id: string) {
    return this.book.ledger.find((entry) => entry.id === id)?.status ?? 'failed';
  }

  /** A page that shows the batch ended records its end (a run that continued as new hears it this way). */
  private notePage(id: string, page: BatchPageAnswer): void {
    if (page.status === 'running') return;
    const { completed, failed, cancelled } = page.counts;
    this.end(id, { status: page.status, counts: { total: page.total, completed, failed, cancelled } });
  }

  private end(id: string, end: BatchEnd): void {
    if (isTerminal(this.entryStatus(id))) return;
    this.book.ledger = applyBatchEnd(this.book.ledger, id, end, now());
    this.book.events = appendEvent(this.book.events, {
      type: 'batch_finished',
      task_id: id,
      at: now(),
      status: end.status,
      counts: end.counts,
      ...(end.error !== undefined && { error: end.error }),
    });
  }

  /** Cancels the batches of this run still running (the run itself was cancelled). */
  async cancelOpen(): Promise<void> {
    const open = this.book.ledger.filter(
      (entry) => entry.kind === 'batch' && entry.run_id === this.options.runId && !isTerminal(entry.status),
    );
    await Promise.all(
      open.map((entry) =>
        getExternalWorkflowHandle(entry.workflow_id)
          .cancel()
          .catch(() => undefined),
      ),
    );
  }
}

function now(): string {
  // The workflow clock: deterministic on replay.
  return new Date().toISOString();
}

/** What is wrong with items given inline (a file's are checked as it is read). */
function inlineItemsProblems(items: BatchItem[], maxItems: number): string[] {
  const problems = decidedBatchItemsProblems(items);
  if (problems.length === 0 && items.length > maxItems) {
    problems.push(`items: ${items.length} items, above the ${maxItems} a batch may hold`);
  }
  return problems;
}

/** The `batch_task` call's answer once its batch has started. */
function startedText(
  id: string,
  args: BatchTaskArgs,
  agent: string,
  items: number,
  workflowId: string,
): string {
  const { max_running_items: running, max_attempts: attempts } = args.limits;
  const lowered = args.lowered.length > 0 ? ` Lowered: ${args.lowered.join('; ')}.` : '';
  return (
    `Batch started: batch_id ${id}, ${items} ${agent} items, at most ${running} running at once, ` +
    `up to ${attempts} attempts an item (workflow ${workflowId}).${lowered} It runs on its own and does not ` +
    `count toward the delegation limit. Follow it with ${BATCH_STATUS_TOOL_NAME} (wait_seconds waits for its ` +
    `end), read the answers with ${READ_BATCH_RESULT_TOOL_NAME}, stop it with ${CANCEL_BATCH_TOOL_NAME}. It ` +
    'keeps running if you answer before it ends.'
  );
}

function batchRefusal(problems: readonly string[]): string {
  return [`Batch refused, nothing started:`, ...problems.map((problem) => `- ${problem}`)].join('\n');
}

function batchEnd(result: BatchResult): BatchEnd {
  const { completed, failed, cancelled } = result.counts;
  return { status: result.status, counts: { total: result.total, completed, failed, cancelled } };
}

export function failureText(err: unknown): string {
  if (err instanceof ChildWorkflowFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}
