/**
 * `leadRunWorkflow`: one execution per run (workflow id = run id). The lead runs on the same agent loop and
 * the same run lifecycle as every subagent (`runAgent`, `runLifecycle`), with delegation plugged in. Its ledger
 * and event log live in workflow state, rebuilt from history on replay, and are read by queries.
 */
import { CancellationScope, isCancellation, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  LEAD_RUN_FAILED_PREFIX,
  LEAD_RUN_TIMED_OUT_PREFIX,
  leadEventsQuery,
  leadLedgerQuery,
  leadStatusQuery,
  type LeadCostUsd,
  type LeadRunInput,
  type LeadRunResult,
  type LeadStatus,
} from '../contracts/lead';
import { CLOSING_FAILURE_TYPES } from '../contracts/closing';
import { isToolDecisionEvent, type TaskEvent, type ToolDecisionEvent } from '../contracts/events';
import { failOnInvalidLeadRunInput } from '../contracts/inputs';
import { scoped, type UnscopedInput } from '../contracts/run-scope';
import type { PendingApproval } from '../contracts/approvals';
import type { PendingQuestion } from '../contracts/clarification';
import type { LoopCarry } from '../contracts/loop-carry';
import type { ChatMessage } from '../contracts/messages';
import { recordsAfter, workspaceNoticeSignal } from '../contracts/queries';
import type { RunStopReason } from '../contracts/status';
import { initialLoopState, restoreLoopState, type AgentLoopState } from './agent-loop';
import {
  createApprovals,
  createClarifications,
  createDelegator,
  runAgent,
  runContext,
  type RunContext,
} from './agent-run';
import type { Approvals } from './approvals';
import type { Clarifications } from './clarification';
import type { Delegator } from './delegation/delegator';
import { countByStatus, leadCostUsd, leadTokenUsage } from './delegation/ledger';
import { leadSystemPrompt } from './lead-prompt';
import { recordLeadRunEnd } from './metrics';
import {
  runLifecycle,
  slotLabel,
  type ExecutionEnd,
  type RunOutcome,
  type RunStanding,
} from './run-lifecycle';
import { withActiveSkills } from './skills';
import { lastAssistantText } from './subagent-result';
import { workspaceStatus } from './workspace-notices';
import { completeLeadRunInput } from './minimal-lead-input';
import { treeBudgetReport } from './budget/tree-ledger';
import { AgentMemory } from './memory/agent-memory';
import { admitToday, reportToday } from './budget/daily-admission';
import { forkedState, forkOriginOf } from './fork-state';

/** Histories recorded before a lead run took a slot of its own (`lead_runtime`) start the loop at once. */
const LEAD_ADMISSION_PATCH = 'lead-admission';

/** A lead run's words for a cancel, while it waited for its slot or while it ran. */
const CANCELLED = 'Run cancelled by user';

/** One execution of a lead run: what its queries, its run and its result are made of. */
interface LeadRun {
  input: LeadRunInput;
  runId: string;
  context: RunContext;
  state: AgentLoopState;
  delegator: Delegator;
  clarifications: Clarifications;
  approvals: Approvals;
}

/** A new run, or the previous execution's state when this one continues it. */
function startingState(input: LeadRunInput): AgentLoopState {
  const { carry } = input;
  if (carry?.transcript && carry.task_index !== undefined && carry.step_seq !== undefined) {
    // The event log and the providers' probe go to the delegator; the loop takes the rest.
    const { events: _events, messages: _messages, provider_probe: _probe, ...loop } = carry;
    return restoreLoopState({
      ...loop,
      transcript: carry.transcript,
      task_index: carry.task_index,
      step_seq: carry.step_seq,
    });
  }
  // A fork's first execution: the original's kept turns, read from its history (workflows/fork-run.ts).
  if (!carry && input.fork) return forkedState(input.fork);
  const messages: ChatMessage[] = carry?.messages ?? [
    {
      role: 'system',
      // The limits the delegator enforces; no policy when it offers no `task` tool (no agent to start).
      content: leadSystemPrompt(
        input.agents.length > 0
          ? { maxConcurrent: input.limits.max_concurrent, maxTotalPerRun: input.limits.max_total_per_run }
          : undefined,
      ),
    },
    { role: 'user', content: input.prompt },
  ];
  const state = initialLoopState({ tail: messages }, 1);
  if (carry) {
    // A carry written before transcripts were stored by reference.
    state.turns = carry.turns;
    if (carry.usage) state.usage = carry.usage;
    state.guard_states = carry.guard_states;
    state.last_text = lastAssistantText(messages);
  }
  return state;
}

/** The status's `questions`: present only while some wait (older clients and tests see the shape they knew). */
function questionsOf(questions: PendingQuestion[]): { questions?: PendingQuestion[] } {
  return questions.length > 0 ? { questions } : {};
}

/** The status's `approvals`: present only while some call waits (older clients see the shape they knew). */
function approvalsOf(approvals: PendingApproval[]): { approvals?: PendingApproval[] } {
  return approvals.length > 0 ? { approvals } : {};
}

/** The run's `cost_usd`: present only when some call was priced (no pricing: no cost field, not 0). */
function costOf({ delegator, runId, state }: LeadRun): { cost_usd?: LeadCostUsd } {
  const cost = leadCostUsd(delegator.ledger, runId, state.cost_usd);
  return cost ? { cost_usd: cost } : {};
}

/** What the status query answers: where the run stands, its turns, tokens, delegations and questions. */
function leadStatus(run: LeadRun, { queuedAt, finished }: RunStanding): LeadStatus {
  const { runId, state, delegator } = run;
  return {
    state: finished ? 'finished' : queuedAt ? 'queued' : 'running',
    ...(queuedAt && !finished && { admission: queuedAt }),
    turns: state.turns,
    token_usage: leadTokenUsage(delegator.ledger, runId, state.usage),
    ...costOf(run),
    ...treeBudgetReport(state.tree_budget),
    counts: countByStatus(delegator.ledger, runId),
    last_seq: delegator.events.length,
    ...(!finished && questionsOf(run.clarifications.pending())),
    ...(!finished && approvalsOf(run.approvals.pending())),
    ...withActiveSkills(state),
    ...workspaceOf(run),
    ...forkOriginOf(run.input.fork, delegator.ledger),
  };
}

/** The status's `workspace`: present only for a run with a home host (older clients see the shape they knew). */
function workspaceOf(run: LeadRun): { workspace?: NonNullable<LeadStatus['workspace']> } {
  const workspace = workspaceStatus(run.context.route, run.delegator.events);
  return workspace ? { workspace } : {};
}

/** The lead's turns on the agent loop, its wall clock counted from `admittedAt`. */
async function runLead(run: LeadRun, admittedAt: string | undefined): Promise<ExecutionEnd<LeadRunInput>> {
  const { input, runId, delegator, clarifications, approvals } = run;
  const next = (carry: LoopCarry): LeadRunInput => ({
    ...input,
    scope: { ...input.scope, ...run.context.route.inputField() },
    run_id: runId,
    ledger: delegator.ledger,
    carry: {
      ...carry,
      events: delegator.events,
      ...(delegator.loads.probe && { provider_probe: delegator.loads.probe }),
    },
  });
  // The run's tools are fixed now, from the providers available as it starts. A run without remote loads
  // (every run from before the registry) awaits nothing here: its commands come as they always did.
  if (delegator.loads.probePending) {
    try {
      await delegator.loads.probeProviders();
    } catch (err) {
      if (!isCancellation(err)) throw err;
      return { end: { kind: 'cancelled' }, clarifications, next };
    }
  }
  const end = await runAgent({
    context: run.context,
    agent: {
      name: 'lead',
      model: input.model,
      tools: input.tools,
      ...(input.mcp && { mcp: input.mcp }),
      maxTurns: input.max_turns,
      tokenBudget: input.token_budget,
      // The lead's own wall clock, when it has one, spans every execution of the run, from its slot's grant.
      ...(input.timeout_seconds !== undefined && { timeoutSeconds: input.timeout_seconds }),
      ...(admittedAt !== undefined && { clockStartMs: Date.parse(admittedAt) }),
      skills: { ...(input.scope.skills?.lead && { list: input.scope.skills.lead }), prompt: input.prompt },
    },
    state: run.state,
    delegator,
    clarifications,
    approvals,
    recordSteps: false,
    followsDate: true,
    // The user's memory, when the run's config enables it (runs from before it carry none: nothing is read).
    ...(input.scope.memory && {
      memory: new AgentMemory(input.scope.memory, input.scope.user_id, runId),
    }),
  });
  // A batch outlives the run's answer, not a cancel of the run.
  if (end.kind === 'cancelled') await CancellationScope.nonCancellable(() => delegator.cancelBatches());
  // The event log and the probe go on in the next execution, beside the loop's carry.
  return { end, clarifications, next };
}

/** How the run ended, in the words its result uses. */
interface LeadEnding {
  status: LeadRunResult['status'];
  stopReason?: RunStopReason;
  error?: string;
  admissionFailure?: boolean;
}

function leadEnding(outcome: RunOutcome, input: LeadRunInput): LeadEnding {
  return {
    status: outcome.status,
    stopReason: outcome.stopReason ?? outcome.runStopReason,
    error:
      outcome.status === 'timed_out' ? `Run timed out after ${input.timeout_seconds} seconds` : outcome.error,
  };
}

/** The run's result; `ran` is false when it ended before its slot was granted. */
function leadResult(run: LeadRun, ending: LeadEnding, ran: boolean): LeadRunResult {
  const { runId, state, delegator } = run;
  // The tree budget stopped agents of this run (its children, or the lead's own next call): the answer is a
  // capped one even when the lead's last call still fitted.
  const treeStop = ending.status === 'completed' ? state.tree_budget?.ledger?.stopped : undefined;
  const stopReason = ending.stopReason ?? treeStop;
  return {
    run_id: runId,
    status: ending.status,
    ...(stopReason && { stop_reason: stopReason }),
    final_output: ran ? (state.last_text ?? '') : '',
    ledger: delegator.ledger,
    token_usage: leadTokenUsage(delegator.ledger, runId, state.usage),
    ...costOf(run),
    turns: ran ? state.turns : 0,
    ...(ending.error !== undefined && { error: ending.error }),
    ...(ending.admissionFailure && { admission_failure: true as const }),
    ...decisionsOf(delegator.events),
    ...treeBudgetReport(state.tree_budget),
    ...forkOriginOf(run.input.fork, delegator.ledger),
  };
}

/** The most decisions a result keeps (the latest): a run's result stays small whatever it held. */
const RESULT_DECISIONS_MAX = 200;

/** The result's `decisions`: present only when the run decided on some call (older clients see the shape they knew). */
function decisionsOf(events: readonly TaskEvent[]): { decisions?: ToolDecisionEvent[] } {
  const decisions = events.filter(isToolDecisionEvent).slice(-RESULT_DECISIONS_MAX);
  return decisions.length > 0 ? { decisions } : {};
}

/** Histories recorded before `memory.mode: middleware` queued a run's conversation when it ended. */
const MEMORY_MIDDLEWARE_PATCH = 'memory-middleware';

/**
 * `memory.mode: middleware`: a run that completed hands its conversation to its user's memory, which extracts
 * facts from it (debounced) as DeerFlow's MemoryMiddleware does after each run. Checked only for such runs.
 */
async function rememberRun(input: LeadRunInput, runId: string, result: LeadRunResult): Promise<void> {
  const memory = input.scope.memory;
  if (memory?.mode !== 'middleware' || result.status !== 'completed') return;
  if (!patched(MEMORY_MIDDLEWARE_PATCH)) return;
  await new AgentMemory(memory, input.scope.user_id, runId).remember(
    input.prompt,
    result.final_output,
    input.model,
  );
}

/**
 * `started`: the full input (its run's settings in `scope`, or at its top level when recorded before the
 * scope), or (from another client) `{prompt}` alone, filled from the worker's config.
 */
export async function leadRunWorkflow(
  started: LeadRunInput | UnscopedInput<LeadRunInput>,
): Promise<LeadRunResult> {
  const input = scoped<LeadRunInput>(await completeLeadRunInput(started));
  failOnInvalidLeadRunInput(input);
  const runId = input.run_id ?? workflowInfo().workflowId;
  const context = runContext(input, runId);
  const state = startingState(input);
  const delegator = createDelegator(
    context,
    {
      agents: input.agents,
      limits: input.limits,
      ...(input.ledger && { ledger: input.ledger }),
      ...(input.carry && { events: input.carry.events }),
      ...(input.batch && { batch: input.batch }),
      ...(input.subagent_tools && { loads: input.subagent_tools }),
      ...(input.carry?.provider_probe && { providerProbe: input.carry.provider_probe }),
    },
    () => state,
  );
  // Offered when the run's input carries the settings (runs from before it existed see no new tool).
  const clarifications = createClarifications(
    context,
    {
      name: 'lead',
      offered: input.scope.clarification !== undefined,
      leadWorkflowId: workflowInfo().workflowId,
    },
    () => state,
    delegator,
  );
  const approvals = createApprovals(
    context,
    { name: 'lead', leadWorkflowId: workflowInfo().workflowId, recordSteps: false },
    () => state,
    delegator,
  );
  const run: LeadRun = { input, runId, context, state, delegator, clarifications, approvals };
  setHandler(leadLedgerQuery, () => delegator.ledger);
  setHandler(leadEventsQuery, (afterSeq = 0) => recordsAfter(delegator.events, afterSeq));
  setHandler(workspaceNoticeSignal, (notice) => delegator.recordWorkspaceNotice(notice));

  return runLifecycle({
    input,
    state,
    agent: 'lead',
    slot: {
      patch: LEAD_ADMISSION_PATCH,
      request: {
        fairness_key: input.scope.fairness_key ?? runId,
        label: slotLabel('lead', input.prompt),
        pool: 'runs',
      },
      // The run's wall clock counts from the grant: the wait for a slot, short or long, is not the run's own
      // time (a run has no execution timeout for it to run into, unlike a subagent's backstop).
      clockFromStart: false,
    },
    status: { query: leadStatusQuery, answer: (standing) => leadStatus(run, standing) },
    // The user's daily budget, when the run has one: asked before its slot and any model call.
    admit: () => admitToday(input.scope),
    run: (admittedAt) => runLead(run, admittedAt),
    cancelled: CANCELLED,
    // Refused its slot (capacity full, queue timeout) or by its user's day, or cancelled while it waited: no turn
    // of its own. Only a slot's refusal is an admission failure.
    refused: ({ beforeSlot, ...refusal }) =>
      leadResult(run, { ...refusal, admissionFailure: refusal.status === 'failed' && !beforeSlot }, false),
    ended: (outcome) => leadResult(run, leadEnding(outcome, input), true),
    tokens: (result) => result.token_usage.total,
    settle: async (result) => {
      await reportToday(input.scope, runId, state.tree_budget);
      if (result) await rememberRun(input, runId, result);
    },
    costUsd: (result) => result.cost_usd?.total,
    onEnd: (result) => recordLeadRunEnd(result),
    failures: {
      failed: { type: CLOSING_FAILURE_TYPES.leadFailed, prefix: LEAD_RUN_FAILED_PREFIX },
      timedOut: { type: CLOSING_FAILURE_TYPES.leadTimedOut, prefix: LEAD_RUN_TIMED_OUT_PREFIX },
    },
  });
}
