/**
 * `leadRunWorkflow`: one execution per run (workflow id = run id). The lead runs on the same agent loop as
 * every subagent (`runAgent`), with delegation plugged in. Its ledger and event log live in workflow state,
 * rebuilt from history on replay, and are read by queries.
 */
import {
  CancellationScope,
  continueAsNew,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  LEAD_RUN_FAILED_PREFIX,
  LEAD_RUN_TIMED_OUT_PREFIX,
  leadEventsQuery,
  leadLedgerQuery,
  leadStatusQuery,
  type LeadRunInput,
  type LeadRunResult,
  type LeadRunStatus,
} from '../contracts/lead';
import { CLOSING_FAILURE_TYPES } from '../contracts/closing';
import { failOnInvalidLeadRunInput } from '../contracts/inputs';
import type { PendingQuestion } from '../contracts/clarification';
import type { ChatMessage } from '../contracts/messages';
import { unfinishedAnswer } from '../contracts/model';
import { recordsAfter } from '../contracts/queries';
import { DELEGATION_LIMIT_STOP_REASON, type RunStopReason } from '../contracts/status';
import { initialLoopState, loopCarry, restoreLoopState, type AgentLoopState } from './agent-loop';
import { createClarifications, createDelegator, runAgent, runContext, type AgentRunEnd } from './agent-run';
import { countByStatus, leadTokenUsage } from './delegation/ledger';
import { leadSystemPrompt } from './lead-prompt';
import { lastAssistantText } from './subagent-result';
import { admit, releaseSlot, type QueuedAt } from './admission-client';
import { closeWith, reportOutcome, reportState } from './outcome';
import { recordLeadRunEnd } from './metrics';

/** Histories recorded before a lead run took a slot of its own (`lead_runtime`) start the loop at once. */
const LEAD_ADMISSION_PATCH = 'lead-admission';

/** The run's slot in the lead-run pool: when it was granted, or why the run ends without one. */
async function takeRunSlot(
  input: LeadRunInput,
  runId: string,
  onQueued: (queued: QueuedAt | undefined) => void,
): Promise<{ admittedAt: string } | { refused: string; cancelled?: true }> {
  const { workflowId } = workflowInfo();
  const prompt = input.prompt.replace(/\s+/g, ' ');
  const request = {
    slot: workflowId,
    owner: workflowId,
    fairness_key: input.limits.fairness_key ?? runId,
    label: `lead: ${prompt.length > 100 ? `${prompt.slice(0, 99)}…` : prompt}`,
    pool: 'runs' as const,
  };
  try {
    const admission = await admit(request, undefined, onQueued);
    if (!admission.admitted) return { refused: admission.error };
    // The run's wall clock counts from the grant: the wait for a slot, short or long, is not the run's own time
    // (a run has no execution timeout for it to run into, unlike a subagent's backstop).
    return { admittedAt: new Date().toISOString() };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    return { refused: 'Run cancelled by user', cancelled: true };
  }
}

/** A new run, or the previous execution's state when this one continues it. */
function startingState(input: LeadRunInput): AgentLoopState {
  const { carry } = input;
  if (carry?.transcript && carry.task_index !== undefined && carry.step_seq !== undefined) {
    // The event log goes to the delegator; the loop takes the rest.
    const { events: _events, messages: _messages, ...loop } = carry;
    return restoreLoopState({
      ...loop,
      transcript: carry.transcript,
      task_index: carry.task_index,
      step_seq: carry.step_seq,
    });
  }
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

/** How the run ended, as its result says it. */
function leadOutcome(
  end: Exclude<AgentRunEnd, { kind: 'continue_as_new' }>,
  input: LeadRunInput,
): { status: LeadRunStatus; stopReason?: RunStopReason; error?: string } {
  switch (end.kind) {
    case 'answered': {
      // Cut off at the output limit or refused: failed, whatever text there is kept as the partial output.
      const unfinished = unfinishedAnswer(end.finishReason);
      if (!unfinished) return { status: 'completed' };
      return {
        status: 'failed',
        error: unfinished.error,
        ...(unfinished.cause === 'cut_off' && { stopReason: 'model_length_capped' as const }),
      };
    }
    case 'guard_stopped':
      return { status: 'completed', stopReason: end.stopReason };
    case 'delegation_capped':
      return { status: 'completed', stopReason: DELEGATION_LIMIT_STOP_REASON };
    case 'error_fallback':
      return { status: 'failed', error: end.error.message };
    case 'activity_failed':
      return { status: 'failed', error: end.message };
    case 'timed_out':
      return { status: 'timed_out', error: `Run timed out after ${input.timeout_seconds} seconds` };
    case 'cancelled':
      return { status: 'cancelled', error: 'Run cancelled by user' };
  }
}

export async function leadRunWorkflow(input: LeadRunInput): Promise<LeadRunResult> {
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
    },
    () => state,
  );
  // Offered when the run's input carries the settings (runs from before it existed see no new tool).
  const clarifications = createClarifications(
    context,
    { name: 'lead', offered: input.clarification !== undefined, leadWorkflowId: workflowInfo().workflowId },
    () => state,
    delegator,
  );
  let finished = false;
  let queuedAt: QueuedAt | undefined;
  setHandler(leadLedgerQuery, () => delegator.ledger);
  setHandler(leadEventsQuery, (afterSeq = 0) => recordsAfter(delegator.events, afterSeq));
  setHandler(leadStatusQuery, () => ({
    state: finished ? 'finished' : queuedAt ? 'queued' : 'running',
    ...(queuedAt && !finished && { admission: queuedAt }),
    turns: state.turns,
    token_usage: leadTokenUsage(delegator.ledger, runId, state.usage),
    counts: countByStatus(delegator.ledger, runId),
    last_seq: delegator.events.length,
    ...(!finished && questionsOf(clarifications.pending())),
  }));

  // Its slot first (a continued execution holds it already): before any model call.
  // The input says so (the patch, checked only for inputs from before, would cost a marker and an upsert).
  const holdsSlot =
    input.asks_slot === true || input.admitted_at !== undefined || patched(LEAD_ADMISSION_PATCH);
  let admittedAt = input.admitted_at;
  if (holdsSlot && admittedAt === undefined) {
    const slot = await takeRunSlot(input, runId, (queued) => {
      queuedAt = queued;
      reportState(queued ? 'queued' : 'running');
    });
    if ('refused' in slot) {
      finished = true;
      reportOutcome({ status: slot.cancelled ? 'cancelled' : 'failed' });
      recordLeadRunEnd({ status: slot.cancelled ? 'cancelled' : 'failed' });
      return closeLead(
        {
          run_id: runId,
          status: slot.cancelled ? 'cancelled' : 'failed',
          final_output: '',
          ledger: delegator.ledger,
          token_usage: leadTokenUsage(delegator.ledger, runId, state.usage),
          turns: 0,
          error: slot.refused,
          ...(!slot.cancelled && { admission_failure: true as const }),
        },
        input,
      );
    }
    admittedAt = slot.admittedAt;
  }

  const end = await runAgent({
    context,
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
    },
    state,
    delegator,
    clarifications,
    recordSteps: false,
  });
  if (end.kind === 'continue_as_new') {
    return await continueAsNew<typeof leadRunWorkflow>({
      ...input,
      run_id: runId,
      ledger: delegator.ledger,
      carry: { ...loopCarry(state, (input.carry?.continued ?? 0) + 1), events: delegator.events },
      ...(input.clarification && {
        clarification: { ...input.clarification, questions_asked: clarifications.asked },
      }),
      // The slot stays held across executions.
      ...(admittedAt !== undefined && { admitted_at: admittedAt }),
    });
  }
  const { status, stopReason, error } = leadOutcome(end, input);
  // A batch outlives the run's answer, not a cancel of the run.
  if (end.kind === 'cancelled') await CancellationScope.nonCancellable(() => delegator.cancelBatches());
  finished = true;
  if (holdsSlot) await releaseSlot(workflowInfo().workflowId, 'runs');
  const tokenUsage = leadTokenUsage(delegator.ledger, runId, state.usage);
  reportOutcome({
    status,
    ...(stopReason && { stopReason }),
    ...(tokenUsage.total && { tokens: tokenUsage.total }),
  });
  recordLeadRunEnd({ status, ...(stopReason && { stop_reason: stopReason }) });
  return closeLead(
    {
      run_id: runId,
      status,
      ...(stopReason && { stop_reason: stopReason }),
      final_output: state.last_text ?? '',
      ledger: delegator.ledger,
      token_usage: tokenUsage,
      turns: state.turns,
      ...(error !== undefined && { error }),
    },
    input,
  );
}

/**
 * The run's ending as Temporal shows it (contracts/closing.ts): a failed or timed-out run fails its workflow,
 * its result in the failure's details; a cancelled one ends Canceled, its result in its memo. The client's
 * `runResult` reads it from there.
 */
function closeLead(result: LeadRunResult, input: LeadRunInput): LeadRunResult {
  const timedOut = result.status === 'timed_out';
  return closeWith(result, {
    agent: 'lead',
    declared: input.honest_close === true,
    status: result.status,
    ...(result.stop_reason && { stopReason: result.stop_reason }),
    ...(result.error !== undefined && { error: result.error }),
    turns: result.turns,
    ...(result.token_usage.total && { tokens: result.token_usage.total }),
    failure: timedOut
      ? { type: CLOSING_FAILURE_TYPES.leadTimedOut, prefix: LEAD_RUN_TIMED_OUT_PREFIX }
      : { type: CLOSING_FAILURE_TYPES.leadFailed, prefix: LEAD_RUN_FAILED_PREFIX },
  });
}
