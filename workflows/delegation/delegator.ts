/**
 * `task` delegation, plugged into the agent loop: each call becomes a child `subagentWorkflow` with the
 * deterministic id `<owner workflow id>/task/<delegation id>` (the model's tool_call_id when it is plain and new in
 * the ledger, else `d<n>`: delegation-ids.ts), so a replay or a retry can never start it twice.
 * Limits are applied before any child starts; the ledger and the event log live in workflow state.
 * The lead uses it, and so does a subagent whose agent may delegate in turn (nested, up to `max_depth`).
 */
import {
  ActivityFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  startChild,
  TerminatedFailure,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { ProjectActivities } from '../../activities';
import type { BatchToolActivities } from '../../activities/batch-tools';
import {
  BATCH_TASK_TOOL_NAME,
  BATCH_STATUS_TOOL_NAME,
  CANCEL_BATCH_TOOL_NAME,
  isBatchToolName,
  leadBatchWorkflowId,
  READ_BATCH_RESULT_TOOL_NAME,
  type BatchInput,
  type BatchItem,
  type BatchPageAnswer,
  type BatchResult,
  type BatchToolName,
  type BatchToolSettings,
} from '../../contracts/batch';
import { promptDetails, summaryLine } from '../../contracts/text';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  delegationToolMessage,
  depthRefusalText,
  refusedTaskMessage,
} from '../../contracts/delegation-result';
import {
  admissionWorkflowId,
  DEFAULT_QUEUE_TIMEOUT_SECONDS,
  releaseSlotSignal,
  type SubagentAdmissionUpdate,
} from '../../contracts/admission';
import type { ClarificationSettings } from '../../contracts/clarification';
import type { NewTaskEvent, TaskEvent } from '../../contracts/events';
import { forkMessages } from '../../contracts/fork';
import type { DelegationLimitSettings } from '../../contracts/lead';
import type { LedgerEntry } from '../../contracts/ledger';
import {
  toolMessageFor,
  type AssistantMessage,
  type ToolCall,
  type ToolMessage,
  type ToolSpec,
} from '../../contracts/messages';
import type { SubagentProgressUpdate } from '../../contracts/queries';
import { runSearchAttributes } from '../../contracts/search-attributes';
import {
  failedSubagentResult,
  SUBAGENT_TIMEOUT_GRACE_SECONDS,
  type LoopDetectionSettings,
  type ResolvedAgent,
  type SubagentInput,
  type SubagentResult,
} from '../../contracts/subagent';
import type { SummarizationRuntime } from '../../contracts/summarization';
import { TASK_TOOL_NAME, type SandboxSettings } from '../../contracts/tools';
import type { Transcript } from '../../contracts/transcript';
import type { LoopPlugins } from '../agent-loop';
// Type only: the child is started by its workflow type name, so this module and the subagent's don't cycle.
import type { subagentWorkflow } from '../subagent';
import type { batchWorkflow } from '../batch';
import { decidedBatchItemsProblems } from '../batch-validation';
import { buildBatchToolSpecs, parseBatchRefArgs, parseBatchTaskArgs } from './batch-tools';
import { recordDelegationEnd } from '../metrics';
import { assignDelegationIds } from './delegation-ids';
import { appendEvent, terminalEvent } from './events';
import {
  applyAdmission,
  applyBatchEnd,
  applyProgress,
  applyResult,
  countForRun,
  isTerminal,
  renderLedgerForPrompt,
  startBatchEntry,
  startEntry,
  type BatchEnd,
} from './ledger';
import { applyDelegationLimits, delegationDepthAllows } from './limits';
import { buildTaskToolSpec, parseTaskArgs } from './task-tool';

/** Characters of the "work already delegated" block shown to the model each turn. */
export const LEDGER_PROMPT_BUDGET_CHARS = 4000;

/**
 * A child's first progress report waits until it has run this long (then at a turn's end): a child done sooner
 * sends its parent only its result, one signal and up to one parent task fewer (bench/load.ts); a model turn
 * of a real provider takes seconds, so a long child still shows its turns in the live tree early.
 */
export const FIRST_PROGRESS_REPORT_MS = 5_000;

export interface DelegatorOptions {
  /** The lead run every entry belongs to (only its entries count toward the per-run total). */
  runId: string;
  /** Depth of the agent that delegates: the lead is 0, its children 1. */
  depth: number;
  agents: ResolvedAgent[];
  limits: DelegationLimitSettings;
  workspace: string;
  sandbox: SandboxSettings;
  loopDetection: LoopDetectionSettings;
  /** The delegating agent's transcript, for the `fork` provider. */
  transcript: () => Transcript;
  /** Compaction settings handed to every child (the same switch for lead and subagents). */
  summarization?: SummarizationRuntime;
  /** Entries carried in (continue-as-new, or earlier runs of the same conversation). */
  ledger?: LedgerEntry[];
  /** The event log so far (continue-as-new). */
  events?: TaskEvent[];
  /** Present when the agent may start durable batches (`batch_task`; the lead, when the config enables it). */
  batch?: BatchToolSettings;
  /** The run's `ask_clarification` settings, handed to every child (its agent's tools decide if it may ask). */
  clarification?: ClarificationSettings;
}

// Reading a workspace items file: a regular activity (it may be large), retried on a worker's fault.
const { loadBatchItemsFile } = proxyActivities<BatchToolActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 3 },
});

// A batch's status or a page of its answers, read through the worker's client: quick, local.
const { describeBatchPage, readBatchResultsPage } = proxyLocalActivities<BatchToolActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

// A cancelled child's result, read from its memo through the worker's client: one quick call, retried.
const { readCancelledResult } = proxyLocalActivities<ProjectActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

/** While a `batch_status` call waits, a batch this run no longer watches (continued as new) is asked this often. */
const BATCH_WAIT_POLL_MS = 60_000;

export class Delegator {
  ledger: LedgerEntry[];
  events: TaskEvent[];
  private readonly running = new Set<Promise<ToolMessage>>();
  /** Batches this execution started and hears the end of (their child result). */
  private readonly watched = new Set<string>();

  constructor(private readonly options: DelegatorOptions) {
    this.ledger = options.ledger ?? [];
    this.events = options.events ?? [];
  }

  /**
   * The tools as the model sees them: `task` (wording follows the bound provider, limits match enforcement),
   * and the batch tools when batches are enabled. None when no agent can be started.
   */
  toolSpecs(): ToolSpec[] {
    if (!this.canDelegate) return [];
    const { agents, limits, batch } = this.options;
    const shown = agents.map(({ name, description }) => ({ name, description }));
    const task = buildTaskToolSpec({
      provider: limits.provider,
      agents: shown,
      maxConcurrent: limits.max_concurrent,
      maxTotalPerRun: limits.max_total_per_run,
    });
    return batch ? [task, ...buildBatchToolSpecs(shown, batch)] : [task];
  }

  /** Whether the `task` tool is offered at all (some agent can be started). */
  get canDelegate(): boolean {
    return this.options.agents.length > 0;
  }

  /** Delegation as the agent loop takes it: the ledger block, the limits, and the `task` calls it runs. */
  plugins(): Pick<LoopPlugins, 'systemContext' | 'applyDelegationLimits' | 'claimedCalls'> {
    return {
      systemContext: () => renderLedgerForPrompt(this.ledger, LEDGER_PROMPT_BUDGET_CHARS),
      applyDelegationLimits: (message) => this.applyLimits(message),
      claimedCalls: {
        claims: (call) =>
          call.name === TASK_TOOL_NAME || (this.options.batch !== undefined && isBatchToolName(call.name)),
        run: (calls) => {
          // Ids are settled before any child starts, in the model's order: deterministic on replay.
          const starts = calls.filter(
            (call) => call.name === TASK_TOOL_NAME || call.name === BATCH_TASK_TOOL_NAME,
          );
          const ids = assignDelegationIds(
            starts.map((call) => call.id),
            this.ledger.map((entry) => entry.id),
          );
          return Promise.all(
            calls.map((call) => {
              if (call.name === TASK_TOOL_NAME)
                return this.track(this.delegate(call, ids[starts.indexOf(call)]));
              if (call.name === BATCH_TASK_TOOL_NAME) return this.startBatch(call, ids[starts.indexOf(call)]);
              return this.followBatch(call, call.name as BatchToolName);
            }),
          );
        },
      },
    };
  }

  /** A child's progress report (signal): a `task_running` event and the entry's running usage. */
  recordProgress(update: SubagentProgressUpdate): void {
    const entry = this.ledger.find((candidate) => candidate.id === update.task_id);
    if (!entry || entry.status !== 'in_progress') return;
    this.ledger = applyProgress(
      this.ledger,
      update.task_id,
      { modelName: update.model_name, tokenUsage: update.token_usage },
      now(),
    );
    this.events = appendEvent(this.events, {
      type: 'task_running',
      task_id: update.task_id,
      at: now(),
      turns: update.turns,
      ...(update.token_usage && { token_usage: update.token_usage }),
      ...(update.model_name && { model_name: update.model_name }),
    });
  }

  /**
   * A child's notice about its execution slot (a signal; only a child that had to wait sends one): `queued`
   * marks its entry and logs `task_queued`, `admitted` marks it running from now.
   */
  recordAdmission(update: SubagentAdmissionUpdate): void {
    const entry = this.ledger.find((candidate) => candidate.id === update.task_id);
    if (!entry || (entry.status !== 'in_progress' && entry.status !== 'queued')) return;
    if (update.state === 'admitted') {
      this.ledger = applyAdmission(this.ledger, update.task_id, 'in_progress', now());
      return;
    }
    this.ledger = applyAdmission(this.ledger, update.task_id, 'queued', now());
    this.events = appendEvent(this.events, {
      type: 'task_queued',
      task_id: update.task_id,
      at: now(),
      description: entry.description,
      subagent_type: entry.subagent_type,
      running: update.running,
      queued: update.queued,
    });
  }

  /** Appends to the run's event log (a question asked, answered or timed out). */
  recordEvent(event: NewTaskEvent): void {
    this.events = appendEvent(this.events, event);
  }

  /** Whether the delegation `id` has ended (a child's open questions end with it). */
  hasEnded(id: string): boolean {
    const entry = this.ledger.find((candidate) => candidate.id === id);
    return entry !== undefined && isTerminal(entry.status);
  }

  /** Waits for every delegation still in flight (after a cancel, so that no entry stays `in_progress`). */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  private track(delegation: Promise<ToolMessage>): Promise<ToolMessage> {
    this.running.add(delegation);
    void delegation.finally(() => this.running.delete(delegation)).catch(() => undefined);
    return delegation;
  }

  private applyLimits(message: AssistantMessage): { message: AssistantMessage; capped: boolean } {
    const outcome = applyDelegationLimits(message, {
      maxConcurrent: this.options.limits.max_concurrent,
      maxTotalPerRun: this.options.limits.max_total_per_run,
      usedThisRun: countForRun(this.ledger, this.options.runId),
    });
    // As in the seeds: calls the limits drop are only logged (the workflow logger skips lines on replay).
    for (const line of outcome.log) log.info(line, { run_id: this.options.runId });
    return { message: outcome.message, capped: outcome.capped };
  }

  /** What a `fork` child starts from: the stored prefix by reference, the completed turns after it as they are. */
  private forkSource(): Pick<SubagentInput, 'fork_messages' | 'fork_from'> {
    const transcript = this.options.transcript();
    const source = transcript.stored ?? transcript.fork_from;
    return {
      fork_messages: forkMessages(transcript.tail),
      ...(source && { fork_from: source }),
    };
  }

  /**
   * Runs one `batch_task` call: its items (inline, or read from a workspace file) checked, then a
   * `batchWorkflow` started as `<owner id>/batch/<id>` and left to run (its parent may close before it ends:
   * ABANDON). The call answers as soon as the batch has started; the batch's end updates its ledger entry.
   */
  private async startBatch(call: ToolCall, id: string): Promise<ToolMessage> {
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
      const loaded = await loadBatchItemsFile({
        workspace: this.options.workspace,
        path: args.items_file,
        max_items: settings.max_items,
      });
      if ('problems' in loaded) return refuse(batchRefusal(loaded.problems));
      items = loaded.items;
    } else {
      items = args.items ?? [];
      const problems = decidedBatchItemsProblems(items);
      if (problems.length === 0 && items.length > settings.max_items) {
        problems.push(`items: ${items.length} items, above the ${settings.max_items} a batch may hold`);
      }
      if (problems.length > 0) return refuse(batchRefusal(problems));
    }
    const workflowId = leadBatchWorkflowId(workflowInfo().workflowId, id);
    const input: BatchInput = {
      run_id: runId,
      description: args.description,
      subagent_type: agent.name,
      agent,
      items,
      limits: args.limits,
      loop_detection: this.options.loopDetection,
      workspace: this.options.workspace,
      sandbox: this.options.sandbox,
      ...(this.options.summarization && { summarization: this.options.summarization }),
      depth: depth + 1,
      fairness_key: limits.fairness_key ?? runId,
      honest_close: true,
    };
    this.ledger = startBatchEntry(
      this.ledger,
      { id, runId, description: args.description, subagentType: agent.name, workflowId, items: items.length },
      now(),
    );
    try {
      // Not bound to the agent's cancellation scopes: the batch outlives this call and this run's answer; a
      // cancel of the run reaches it through `cancelBatches`.
      const child = await CancellationScope.nonCancellable(() =>
        startChild<typeof batchWorkflow>('batchWorkflow', {
          workflowId,
          args: [input],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          cancellationType: ChildWorkflowCancellationType.ABANDON,
          staticSummary: summaryLine(`batch: ${agent.name}: ${args.description} (${items.length} items)`),
          typedSearchAttributes: runSearchAttributes(runId, 'batch', depth),
        }),
      );
      this.watched.add(id);
      void child.result().then(
        (result) => this.endBatch(id, batchEnd(result)),
        // A cancelled batch ends Canceled (its counts in its memo, out of a workflow's reach).
        (err: unknown) =>
          this.endBatch(
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
      this.endBatch(id, { status: 'failed', counts: { total: items.length }, error });
      return refuse(`Batch refused: ${error}.`);
    }
    this.events = appendEvent(this.events, {
      type: 'batch_started',
      task_id: id,
      at: now(),
      description: args.description,
      subagent_type: agent.name,
      workflow_id: workflowId,
      items: items.length,
    });
    const { max_running_items: running, max_attempts: attempts } = args.limits;
    const lowered = args.lowered.length > 0 ? ` Lowered: ${args.lowered.join('; ')}.` : '';
    return toolMessageFor(
      call,
      `Batch started: batch_id ${id}, ${items.length} ${agent.name} items, at most ${running} running at once, ` +
        `up to ${attempts} attempts an item (workflow ${workflowId}).${lowered} It runs on its own and does not ` +
        `count toward the delegation limit. Follow it with ${BATCH_STATUS_TOOL_NAME} (wait_seconds waits for its ` +
        `end), read the answers with ${READ_BATCH_RESULT_TOOL_NAME}, stop it with ${CANCEL_BATCH_TOOL_NAME}. It ` +
        'keeps running if you answer before it ends.',
      false,
    );
  }

  /** `batch_status`, `read_batch_result`, `cancel_batch`: on a batch this run (or its conversation) started. */
  private async followBatch(call: ToolCall, tool: BatchToolName): Promise<ToolMessage> {
    const parsed = parseBatchRefArgs(tool, call.args);
    if (!parsed.ok) return toolMessageFor(call, parsed.error, true);
    const args = parsed.args;
    const entry = this.ledger.find(
      (candidate) =>
        candidate.kind === 'batch' &&
        (candidate.id === args.batch_id || candidate.workflow_id === args.batch_id),
    );
    if (!entry) {
      const known = this.ledger
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
      await this.waitForBatch(entry.id, args.wait_seconds);
    const page =
      tool === READ_BATCH_RESULT_TOOL_NAME
        ? await readBatchResultsPage({ ...request, max_chars: args.max_chars })
        : await describeBatchPage(request);
    this.notePage(entry.id, page);
    return toolMessageFor(call, page.text, false);
  }

  /** Waits durably until the batch ends or `seconds` pass; a batch not watched here is asked now and then. */
  private async waitForBatch(id: string, seconds: number): Promise<void> {
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
        const entry = this.ledger.find((candidate) => candidate.id === id)!;
        this.notePage(
          id,
          await describeBatchPage({ workflow_id: entry.workflow_id, batch_id: id, offset: 0, limit: 0 }),
        );
      }
    }
  }

  private entryStatus(id: string) {
    return this.ledger.find((entry) => entry.id === id)?.status ?? 'failed';
  }

  /** A page that shows the batch ended records its end (a run that continued as new hears it this way). */
  private notePage(id: string, page: BatchPageAnswer): void {
    if (page.status === 'running') return;
    const { completed, failed, cancelled } = page.counts;
    this.endBatch(id, { status: page.status, counts: { total: page.total, completed, failed, cancelled } });
  }

  private endBatch(id: string, end: BatchEnd): void {
    if (isTerminal(this.entryStatus(id))) return;
    this.ledger = applyBatchEnd(this.ledger, id, end, now());
    this.events = appendEvent(this.events, {
      type: 'batch_finished',
      task_id: id,
      at: now(),
      status: end.status,
      counts: end.counts,
      ...(end.error !== undefined && { error: end.error }),
    });
  }

  /**
   * Cancels the batches of this run still running (the run itself was cancelled): a batch outlives its run's
   * answer, not a cancel of the run.
   */
  async cancelBatches(): Promise<void> {
    const open = this.ledger.filter(
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

  /** Runs one `task` call as the delegation `id` (the model's call id, or one the workflow chose). */
  private async delegate(call: ToolCall, id: string): Promise<ToolMessage> {
    const { agents, limits, depth, runId } = this.options;
    // Refuse before anything exists: a refusal leaves no half-made child behind.
    const parsed = parseTaskArgs(call.args, agents);
    if (!parsed.ok) return refusedTaskMessage(call.id, parsed.error);
    if (!delegationDepthAllows(depth, limits.max_depth)) {
      return refusedTaskMessage(call.id, depthRefusalText(limits.max_depth));
    }
    const { agent } = parsed;
    const { description, prompt, subagent_type: subagentType } = parsed.args;
    const workflowId = `${workflowInfo().workflowId}/task/${id}`;
    const input: SubagentInput = {
      run_id: runId,
      task_id: id,
      description,
      prompt,
      subagent_type: subagentType,
      agent,
      loop_detection: this.options.loopDetection,
      workspace: this.options.workspace,
      sandbox: this.options.sandbox,
      depth: depth + 1,
      ...(limits.provider === 'fork' && this.forkSource()),
      ...(agent.tools.includes(TASK_TOOL_NAME) && { delegation: { agents, limits } }),
      ...(this.options.summarization && { summarization: this.options.summarization }),
      ...(this.options.clarification && {
        clarification: { timeout_seconds: this.options.clarification.timeout_seconds },
      }),
      // Its turn at admission: the run's (or its tenant's), at every depth.
      fairness_key: limits.fairness_key ?? runId,
      first_report_after_ms: FIRST_PROGRESS_REPORT_MS,
      asks_slot: true,
      honest_close: true,
    };
    // The hard backstop covers the child's own clock and a wait for a slot before it starts.
    const queueTimeoutSeconds = limits.queue_timeout_seconds ?? DEFAULT_QUEUE_TIMEOUT_SECONDS;

    // Recorded before the first await: entries keep the order in which the model issued the calls.
    this.ledger = startEntry(
      this.ledger,
      { id, runId, description, subagentType, workflowId, modelName: agent.model.name },
      now(),
    );
    let result: SubagentResult;
    try {
      const child = await startChild<typeof subagentWorkflow>('subagentWorkflow', {
        workflowId,
        args: [input],
        workflowExecutionTimeout: `${agent.timeout_seconds + SUBAGENT_TIMEOUT_GRACE_SECONDS + queueTimeoutSeconds} seconds`,
        staticSummary: summaryLine(`${subagentType}: ${description}`),
        staticDetails: promptDetails(prompt),
        memo: { description, subagent_type: subagentType, model: agent.model.name },
        typedSearchAttributes: runSearchAttributes(runId, subagentType, depth + 1),
      });
      this.events = appendEvent(this.events, {
        type: 'task_started',
        task_id: id,
        at: now(),
        description,
        subagent_type: subagentType,
        model_name: agent.model.name,
        workflow_id: workflowId,
      });
      result = await child.result();
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        return refusedTaskMessage(
          call.id,
          `Task refused: a delegation with the id ${id} already exists in this run.`,
        );
      }
      result =
        failedSubagentResult(err) ??
        (await cancelledChildResult(err, workflowId)) ??
        failedDelegation(err, agent.timeout_seconds);
      await releaseForClosedChild(err, workflowId);
    }
    this.ledger = applyResult(this.ledger, id, result, now());
    recordDelegationEnd(result, subagentType);
    this.events = appendEvent(this.events, terminalEvent(id, result, now()));
    return delegationToolMessage(call.id, result, agent.timeout_seconds);
  }
}

/**
 * A child terminated (from the UI) or cut by its hard backstop ran none of its own code at the end: its slot is
 * given back here at once rather than by the admission workflow's sweep. Awaited: the server drops the signals
 * of a workflow that has closed, and this one may be about to.
 */
async function releaseForClosedChild(err: unknown, slot: string): Promise<void> {
  const closed =
    err instanceof ChildWorkflowFailure &&
    (err.cause instanceof TerminatedFailure || err.cause instanceof TimeoutFailure);
  if (!closed || !patched(CLOSED_CHILD_RELEASE_PATCH)) return;
  await CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(admissionWorkflowId(workflowInfo().taskQueue))
      .signal(releaseSlotSignal, { slot })
      .catch(() => undefined),
  );
}

/** Histories recorded before admission sent no release for a terminated child. */
const CLOSED_CHILD_RELEASE_PATCH = 'admission-release-closed-child';

/**
 * The result a child that ended Canceled recorded in its memo (its partial text, its usage): Temporal hands the
 * parent no details with a cancellation. Read by a local activity, so its answer is in history and a replay
 * reads it there. Not cancellable: the child was often cancelled with this workflow, and its result belongs in
 * the ledger all the same. Undefined when there is none to read, or it could not be read (the entry then says
 * only that the child was cancelled).
 */
async function cancelledChildResult(err: unknown, workflowId: string): Promise<SubagentResult | undefined> {
  const cancelled = err instanceof ChildWorkflowFailure && err.cause instanceof CancelledFailure;
  if (!cancelled || !patched(CANCELLED_CHILD_RESULT_PATCH)) return undefined;
  try {
    const answer = await CancellationScope.nonCancellable(() =>
      readCancelledResult({ workflow_id: workflowId }),
    );
    return answer.result;
  } catch (readErr) {
    log.warn('the result of a cancelled child could not be read', {
      workflow_id: workflowId,
      error:
        readErr instanceof ActivityFailure && readErr.cause ? readErr.cause.message : failureText(readErr),
    });
    return undefined;
  }
}

/** Histories recorded before a parent read a cancelled child's result from its memo. */
const CANCELLED_CHILD_RESULT_PATCH = 'cancelled-child-result';

/** A child that ended without returning its result: cancelled, cut by its hard backstop, or lost. */
function failedDelegation(err: unknown, timeoutSeconds: number): SubagentResult {
  if (isCancellation(err)) return { status: 'cancelled', error: 'Task cancelled by user', turns: 0 };
  if (err instanceof ChildWorkflowFailure && err.cause instanceof TimeoutFailure) {
    return { status: 'timed_out', error: `Execution timed out after ${timeoutSeconds} seconds`, turns: 0 };
  }
  const message = err instanceof ChildWorkflowFailure && err.cause ? err.cause.message : String(err);
  return { status: 'failed', error: message, turns: 0 };
}

function now(): string {
  // The workflow clock: deterministic on replay.
  return new Date().toISOString();
}

function batchRefusal(problems: readonly string[]): string {
  return [`Batch refused, nothing started:`, ...problems.map((problem) => `- ${problem}`)].join('\n');
}

function batchEnd(result: BatchResult): BatchEnd {
  const { completed, failed, cancelled } = result.counts;
  return { status: result.status, counts: { total: result.total, completed, failed, cancelled } };
}

function failureText(err: unknown): string {
  if (err instanceof ChildWorkflowFailure && err.cause) return err.cause.message;
  return err instanceof Error ? err.message : String(err);
}
