/**
 * `task` delegation, plugged into the agent loop: each call becomes a child `subagentWorkflow` with the
 * deterministic id `<owner workflow id>/task/<delegation id>` (the model's tool_call_id when it is plain and new in
 * the ledger, else `d<n>`: delegation-ids.ts), so a replay or a retry can never start it twice.
 * Limits are applied before any child starts; the ledger and the event log live in workflow state.
 * The lead uses it, and so does a subagent whose agent may delegate in turn (nested, up to `max_depth`).
 * The batch tools, when enabled, are its `BatchDelegations` (batch-delegations.ts), in the same ledger.
 */
import { takesWorkspaceNotice } from '../workspace-notices';
import type { WorkspaceRoute } from '../workspace-route';
import {
  ActivityFailure,
  ChildWorkflowFailure,
  CancellationScope,
  CancelledFailure,
  isCancellation,
  log,
  patched,
  startChild,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { localActivities } from '../local-activities';
import type { ProjectActivities } from '../../activities';
import {
  BATCH_TASK_TOOL_NAME,
  isBatchToolName,
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
import { DEFAULT_QUEUE_TIMEOUT_SECONDS, type SubagentAdmissionUpdate } from '../../contracts/admission';
import { questionRef } from '../../contracts/clarification';
import type { GuardrailNotice, NewTaskEvent, TaskEvent, WorkspaceNotice } from '../../contracts/events';
import { forkMessages } from '../../contracts/fork';
import type { DelegationLimitSettings } from '../../contracts/lead';
import type { LedgerEntry } from '../../contracts/ledger';
import {
  type AssistantMessage,
  type ToolCall,
  type ToolMessage,
  type ToolSpec,
} from '../../contracts/messages';
import { guardrailNoticeSignal, type SubagentProgressUpdate } from '../../contracts/queries';
import { childScope, type RunScope } from '../../contracts/run-scope';
import { runSearchAttributes } from '../../contracts/search-attributes';
import {
  failedSubagentResult,
  SUBAGENT_TIMEOUT_GRACE_SECONDS,
  type ResolvedAgent,
  type SubagentInput,
  type SubagentResult,
} from '../../contracts/subagent';
import {
  isRemoteProvider,
  PROVIDER_CAPABILITIES,
  providerLabel,
  type ProviderProbe,
  type SubagentProviderRef,
  type SubagentToolLoad,
} from '../../contracts/subagent-providers';
import { TASK_TOOL_NAME } from '../../contracts/tools';
import type { Transcript } from '../../contracts/transcript';
import type { LoopPlugins } from '../agent-loop';
// Type only: the child is started by its workflow type name, so this module and the subagent's don't cycle.
import type { subagentWorkflow } from '../subagent';
import { releaseForClosedChild } from '../admission-client';
import { tellParent } from '../held-for-a-person';
import { recordDelegationEnd } from '../metrics';
import { BatchDelegations, failureText } from './batch-delegations';
import { assignDelegationIds } from './delegation-ids';
import { appendEvent, terminalEvent } from './events';
import {
  applyAdmission,
  applyProgress,
  applyResult,
  countForRun,
  isTerminal,
  renderLedgerForPrompt,
  startEntry,
} from './ledger';
import { applyDelegationLimits, delegationDepthAllows } from './limits';
import { buildTaskToolSpec, parseLoadArgs, parseTaskArgs } from './task-tool';
import { ToolLoads } from './tool-loads';

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
  /** The run's settings (contracts/run-scope.ts): each child gets them as `childScope` hands them down. */
  scope: RunScope;
  /** The delegating agent's workspace route: its children start where it knows the workspace is. */
  route: WorkspaceRoute;
  agents: ResolvedAgent[];
  limits: DelegationLimitSettings;
  /** The delegating agent's transcript, for the `fork` provider. */
  transcript: () => Transcript;
  /** Entries carried in (continue-as-new, or earlier runs of the same conversation). */
  ledger?: LedgerEntry[];
  /** The event log so far (continue-as-new). */
  events?: TaskEvent[];
  /** Present when the agent may start durable batches (`batch_task`; the lead, when the config enables it). */
  batch?: BatchToolSettings;
  /** The tools besides `task` that delegate (the lead's `subagent_tools`), each bound to one provider. */
  loads?: SubagentToolLoad[];
  /**
   * What the run's probe of the remote providers found (an earlier execution's, or the parent's for a subagent):
   * no probe again.
   */
  providerProbe?: ProviderProbe;
}

/** A delegation as every delegation tool starts it: who runs it, on what, with which words. */
interface Delegation {
  toolName: string;
  agent: ResolvedAgent;
  /** `task`'s `subagent_type`; a load's tool name. */
  subagentType: string;
  description: string;
  prompt: string;
  maxDepth: number;
  /** The child starts from the conversation's completed turns. */
  fork: boolean;
  /** A load's provider (absent for `task`, whose memo stays as it was). */
  provider?: SubagentProviderRef;
  load?: SubagentToolLoad;
}

// A cancelled child's result, read from its memo through the worker's client: one quick call, retried.
const { readCancelledResult } = localActivities<ProjectActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3, initialInterval: '1 second' },
});

export class Delegator {
  ledger: LedgerEntry[];
  events: TaskEvent[];
  private readonly running = new Set<Promise<ToolMessage>>();
  /** The batch tools' side of delegation; it writes to this delegator's ledger and events. */
  private readonly batches: BatchDelegations;

  /** The run's tool loads besides `task`: which exist in this run, and the probe that decided it. */
  readonly loads: ToolLoads;

  constructor(private readonly options: DelegatorOptions) {
    this.ledger = options.ledger ?? [];
    this.events = options.events ?? [];
    this.batches = new BatchDelegations(options, this);
    this.loads = new ToolLoads({
      runId: options.runId,
      loads: options.loads ?? [],
      ...(options.providerProbe && { probe: options.providerProbe }),
      record: (event) => this.recordEvent(event),
    });
  }

  /**
   * The tools as the model sees them: `task` (wording follows the bound provider, limits match enforcement),
   * each tool load whose provider is available, and the batch tools when batches are enabled. `task` and the
   * batch tools only when some agent can be started.
   */
  toolSpecs(): ToolSpec[] {
    const { agents, limits } = this.options;
    const loads = this.loads.toolSpecs({
      maxConcurrent: limits.max_concurrent,
      maxTotalPerRun: limits.max_total_per_run,
    });
    if (!this.canDelegate) return loads;
    const shown = agents.map(({ name, description }) => ({ name, description }));
    const task = buildTaskToolSpec({
      provider: limits.provider,
      agents: shown,
      maxConcurrent: limits.max_concurrent,
      maxTotalPerRun: limits.max_total_per_run,
    });
    return [task, ...loads, ...this.batches.toolSpecs(shown)];
  }

  /** Whether `call` starts a delegation: `task`, or a tool load of this run. */
  private delegates(call: ToolCall): boolean {
    return call.name === TASK_TOOL_NAME || this.loads.named(call.name) !== undefined;
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
          this.delegates(call) || (this.options.batch !== undefined && isBatchToolName(call.name)),
        run: (calls) => {
          // Ids are settled before any child starts, in the model's order: deterministic on replay.
          const starts = calls.filter((call) => this.delegates(call) || call.name === BATCH_TASK_TOOL_NAME);
          const ids = assignDelegationIds(
            starts.map((call) => call.id),
            this.ledger.map((entry) => entry.id),
          );
          return Promise.all(
            calls.map((call) => {
              const id = ids[starts.indexOf(call)];
              if (call.name === TASK_TOOL_NAME) return this.track(this.delegate(call, id));
              const load = this.loads.named(call.name);
              if (load) return this.track(this.delegateToLoad(call, id, load));
              if (call.name === BATCH_TASK_TOOL_NAME) return this.batches.start(call, id);
              return this.batches.follow(call, call.name as BatchToolName);
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
      { modelName: update.model_name, tokenUsage: update.token_usage, costUsd: update.cost_usd },
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

  /** What an agent of the run found of its workspace: logged once (workflows/workspace-notices.ts). */
  recordWorkspaceNotice(notice: WorkspaceNotice): void {
    if (takesWorkspaceNotice(this.events, notice)) this.recordEvent({ ...notice, task_id: 'workspace' });
  }

  /**
   * A subagent's denied or approved call (a signal from a child): this agent's event log keeps it, and it goes
   * on up.
   */
  recordChildDecision(notice: GuardrailNotice): void {
    const { call_id: callId, workflow_id: workflowId, approved, ...denial } = notice;
    const taskId = questionRef(this.options.runId, workflowId, callId);
    if (approved) {
      const { at, tool, agent, policy_id: policyId } = denial;
      this.recordEvent({
        type: 'tool_approved',
        task_id: taskId,
        at,
        tool,
        agent,
        ...approved,
        policy_id: policyId,
        workflow_id: workflowId,
      });
    } else {
      this.recordEvent({ type: 'tool_denied', ...denial, task_id: taskId, workflow_id: workflowId });
    }
    tellParent(guardrailNoticeSignal, notice, this.options.runId);
  }

  /** Whether the delegation `id` has ended (a child's open questions end with it). */
  hasEnded(id: string): boolean {
    const entry = this.ledger.find((candidate) => candidate.id === id);
    return entry !== undefined && isTerminal(entry.status);
  }

  /**
   * Cancels the batches of this run still running (the run itself was cancelled): a batch outlives its run's
   * answer, not a cancel of the run.
   */
  async cancelBatches(): Promise<void> {
    await this.batches.cancelOpen();
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
      ...((this.options.loads?.length ?? 0) > 0 && {
        isDelegation: (call: ToolCall) => this.delegates(call),
      }),
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

  /** Runs one `task` call as the delegation `id` (the model's call id, or one the workflow chose). */
  private async delegate(call: ToolCall, id: string): Promise<ToolMessage> {
    const { agents, limits } = this.options;
    // Refuse before anything exists: a refusal leaves no half-made child behind.
    const parsed = parseTaskArgs(call.args, agents);
    if (!parsed.ok) return refusedTaskMessage(call.id, parsed.error);
    return this.startDelegation(call, id, {
      toolName: TASK_TOOL_NAME,
      agent: parsed.agent,
      subagentType: parsed.args.subagent_type,
      description: parsed.args.description,
      prompt: parsed.args.prompt,
      maxDepth: limits.max_depth,
      fork: limits.provider === 'fork',
    });
  }

  /** Runs one call of a tool load: its child runs as the load's agent, on the load's provider. */
  private async delegateToLoad(call: ToolCall, id: string, load: SubagentToolLoad): Promise<ToolMessage> {
    const parsed = parseLoadArgs(call.args, load.tool_name);
    if (!parsed.ok) return refusedTaskMessage(call.id, parsed.error, load.tool_name);
    return this.startDelegation(call, id, {
      toolName: load.tool_name,
      agent: load.agent,
      subagentType: load.tool_name,
      description: parsed.args.description,
      prompt: parsed.args.prompt,
      maxDepth: load.max_depth ?? this.options.limits.max_depth,
      fork: PROVIDER_CAPABILITIES[load.provider.type].inherits_parent_context,
      provider: load.provider,
      load,
    });
  }

  /**
   * The run's tool loads for a child that may delegate in turn: the same tools the lead has, each bounded by its
   * own `max_depth`, and the run's probe with them (the child probes nothing: the set of tools is the run's).
   */
  private childLoads(): { loads?: SubagentToolLoad[]; provider_probe?: ProviderProbe } {
    const loads = this.options.loads ?? [];
    if (loads.length === 0) return {};
    return { loads, ...(this.loads.probe && { provider_probe: this.loads.probe }) };
  }

  /** What a remote load's child is given to run its activity with. */
  private remoteChild(load: SubagentToolLoad | undefined): Pick<SubagentInput, 'remote'> {
    if (!load || !isRemoteProvider(load.provider)) return {};
    return {
      remote: {
        provider: load.provider,
        tool_name: load.tool_name,
        ...(load.persona !== undefined && { persona: load.persona }),
        ...(load.model !== undefined && { model: load.model }),
      },
    };
  }

  /** Starts one delegation's child as `id` and waits for its result: the same for every delegation tool. */
  private async startDelegation(call: ToolCall, id: string, delegation: Delegation): Promise<ToolMessage> {
    const { limits, depth, runId } = this.options;
    const { toolName, agent, subagentType, description, prompt, provider, load } = delegation;
    if (!delegationDepthAllows(depth, delegation.maxDepth)) {
      return refusedTaskMessage(call.id, depthRefusalText(delegation.maxDepth), toolName);
    }
    const workflowId = `${workflowInfo().workflowId}/task/${id}`;
    const remote = this.remoteChild(load);
    // A remote agent's model is its own: the ledger names the one the load asks for, else the provider.
    const modelName = remote.remote
      ? (remote.remote.model ?? providerLabel(remote.remote.provider))
      : agent.model.name;
    const input: SubagentInput = {
      run_id: runId,
      task_id: id,
      description,
      prompt,
      subagent_type: subagentType,
      agent,
      scope: childScope(this.options.scope, runId, this.options.route.inputField()),
      depth: depth + 1,
      ...(delegation.fork && this.forkSource()),
      ...remote,
      ...(agent.tools.includes(TASK_TOOL_NAME) && {
        delegation: { agents: this.options.agents, limits, ...this.childLoads() },
      }),
      first_report_at: new Date(Date.now() + FIRST_PROGRESS_REPORT_MS).toISOString(),
      asks_slot: true,
      uncancelled_timers: true,
      honest_close: true,
    };
    // The hard backstop covers the child's own clock and a wait for a slot before it starts.
    const queueTimeoutSeconds = limits.queue_timeout_seconds ?? DEFAULT_QUEUE_TIMEOUT_SECONDS;

    // Recorded before the first await: entries keep the order in which the model issued the calls.
    this.ledger = startEntry(
      this.ledger,
      { id, runId, description, subagentType, workflowId, modelName },
      now(),
    );
    let result: SubagentResult;
    try {
      const child = await startChild<typeof subagentWorkflow>('subagentWorkflow', {
        workflowId,
        args: [input],
        workflowExecutionTimeout: `${agent.timeout_seconds + SUBAGENT_TIMEOUT_GRACE_SECONDS + queueTimeoutSeconds} seconds`,
        // A load's child names its provider, so the Web UI shows a remote delegation as a local one, with it.
        staticSummary: summaryLine(
          provider
            ? `${subagentType} via ${providerLabel(provider)}: ${description}`
            : `${subagentType}: ${description}`,
        ),
        staticDetails: promptDetails(prompt),
        memo: {
          description,
          subagent_type: subagentType,
          model: modelName,
          ...(provider && { provider: provider.name, provider_type: provider.type }),
        },
        typedSearchAttributes: runSearchAttributes(
          runId,
          subagentType,
          depth + 1,
          this.options.scope.user_id,
        ),
      });
      this.events = appendEvent(this.events, {
        type: 'task_started',
        task_id: id,
        at: now(),
        description,
        subagent_type: subagentType,
        model_name: modelName,
        workflow_id: workflowId,
      });
      result = await child.result();
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        return refusedTaskMessage(
          call.id,
          `Task refused: a delegation with the id ${id} already exists in this run.`,
          toolName,
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
    return delegationToolMessage(call.id, result, agent.timeout_seconds, toolName);
  }
}

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
