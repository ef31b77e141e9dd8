/**
 * `subagentWorkflow`: one delegated task, run on the shared agent loop (`runAgent`) once it has an execution
 * slot (admission). Its outcome is always a result (`failed`, `timed_out`, `cancelled` and refusals at admission
 * included); only infrastructure faults throw.
 */
import {
  ApplicationFailure,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { CLARIFICATION_TOOL_NAME } from '../contracts/clarification';
import { failOnInvalidSubagentInput } from '../contracts/inputs';
import type { ChatMessage } from '../contracts/messages';
import { unfinishedAnswer } from '../contracts/model';
import {
  recordsAfter,
  subagentProgressQuery,
  subagentProgressSignal,
  subagentStepsQuery,
} from '../contracts/queries';
import {
  SUBAGENT_FAILED_PREFIX,
  SUBAGENT_FAILED_TYPE,
  SUBAGENT_TIMED_OUT_PREFIX,
  SUBAGENT_TIMED_OUT_TYPE,
  type SubagentInput,
  type SubagentResult,
} from '../contracts/subagent';
import {
  initialLoopState,
  loopCarry,
  restoreLoopState,
  type AgentLoopState,
  type LoopPlugins,
} from './agent-loop';
import { createClarifications, createDelegator, runContext, type AgentRunEnd } from './agent-run';
import { runSubagentAgent } from './graph-subagent';
import { admit, releaseSlot } from './admission-client';
import { finishSubagent, type FinishSubagentInput } from './subagent-result';
import { closeWith, reportOutcome, reportsOutcome, reportState } from './outcome';

/** Histories recorded before admission started the loop at once. */
const ADMISSION_PATCH = 'subagent-admission';

/** The slot's label in the admission workflow's state (and its longest). */
function slotLabel(input: SubagentInput): string {
  const label = `${input.subagent_type}: ${input.description}`;
  return label.length > 120 ? `${label.slice(0, 119)}…` : label;
}

/** A child reports progress to its parent at most this often (history stays small). */
export const PROGRESS_REPORT_INTERVAL_MS = 15_000;

/** Sends `task_running` snapshots to the parent workflow, when there is one. */
function progressReporter(input: SubagentInput): LoopPlugins['onTurn'] {
  const parent = workflowInfo().parent;
  if (!parent) return undefined;
  const handle = getExternalWorkflowHandle(parent.workflowId, parent.runId);
  // The first report waits for the child to have run a while (from the input: older children report after
  // their first turn, and replay as they ran): most short children then send the parent nothing but a result.
  const firstAfterMs = input.first_report_after_ms ?? 0;
  const startedMs = workflowInfo().runStartTime.getTime();
  let lastReport: number | undefined;
  return (state) => {
    const now = Date.now();
    if (lastReport === undefined && now - startedMs < firstAfterMs) return;
    if (lastReport !== undefined && now - lastReport < PROGRESS_REPORT_INTERVAL_MS) return;
    lastReport = now;
    // A parent that has finished cannot take the report; the child's own result is what counts.
    void handle
      .signal(subagentProgressSignal, {
        task_id: input.task_id,
        turns: state.turns,
        ...(state.usage && { token_usage: state.usage }),
        ...(state.model_name && { model_name: state.model_name }),
      })
      .catch(() => undefined);
  };
}

/** A new subagent's state, or the previous execution's when this one continues it. */
function startingState(input: SubagentInput): AgentLoopState {
  if (input.carry) return restoreLoopState(input.carry);
  // A fork child starts from the lead's completed turns (stored ones by reference); its prompt states only
  // what is new.
  const messages: ChatMessage[] = [
    { role: 'system', content: input.agent.system_prompt },
    ...(input.fork_messages ?? []).filter((m) => m.role !== 'system'),
    { role: 'user', content: input.prompt },
  ];
  return initialLoopState(
    { tail: messages, ...(input.fork_from && { fork_from: input.fork_from }) },
    messages.length - 1,
  );
}

type SubagentOutcome = Pick<FinishSubagentInput, 'status' | 'stopReason' | 'errorFallback' | 'error'>;

/** How the run ended, as the subagent's result says it. */
function subagentOutcome(end: Exclude<AgentRunEnd, { kind: 'continue_as_new' }>): SubagentOutcome {
  switch (end.kind) {
    case 'answered': {
      // Cut off at the output limit or refused: failed, its text handed back as partial.
      const unfinished = unfinishedAnswer(end.finishReason);
      return unfinished ? { status: 'failed', error: unfinished.error } : { status: 'completed' };
    }
    case 'guard_stopped':
      return { status: 'completed', stopReason: end.stopReason };
    case 'delegation_capped':
      // Not a guard's cap: the agent finished with what its children returned, and its text carries the
      // limit note. A subagent's stop reasons are the guards' (the status contract), so none is set.
      return { status: 'completed' };
    case 'error_fallback':
      return { status: 'failed', errorFallback: end.error };
    case 'activity_failed':
      // The model activity ran out of retries (a provider that kept answering 429/5xx, or never answered).
      return { status: 'failed', errorFallback: { message: end.message } };
    case 'timed_out':
      return { status: 'timed_out' };
    case 'cancelled':
      return { status: 'cancelled', error: 'Task cancelled by user' };
  }
}

/** The subagent's execution slot: when it was granted, or the result that ends the subagent without one. */
async function takeSlot(
  input: SubagentInput,
  workflowId: string,
): Promise<{ admittedAt: string } | { refused: SubagentResult }> {
  const request = {
    slot: workflowId,
    owner: workflowId,
    fairness_key: input.fairness_key ?? input.run_id,
    label: slotLabel(input),
  };
  try {
    const admission = await admit(request, input.task_id, (queued) =>
      reportState(queued ? 'queued' : 'running'),
    );
    // The wall clock counts from the server's start (a wait for a worker counts, as for the hard backstop),
    // unless the subagent waited in the queue: then from the grant.
    if (admission.admitted) {
      return { admittedAt: (admission.queued ? new Date() : workflowInfo().startTime).toISOString() };
    }
    // Refused before any model call: the result says so, so a batch can tell it from a failed run.
    return { refused: { status: 'failed', error: admission.error, admission_failure: true, turns: 0 } };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    return { refused: { status: 'cancelled', error: 'Task cancelled by user', turns: 0 } };
  }
}

export async function subagentWorkflow(input: SubagentInput): Promise<SubagentResult> {
  failOnInvalidSubagentInput(input);
  const { agent } = input;
  const context = runContext(input, input.run_id);
  const state = startingState(input);
  let finished = false;
  const { workflowId } = workflowInfo();
  // Its execution slot first (a continued execution holds it already): before any model call.
  // The input says so (the patch, checked only for inputs from before, would cost a marker and an upsert).
  const holdsSlot = input.asks_slot === true || input.admitted_at !== undefined || patched(ADMISSION_PATCH);
  let admittedAt = input.admitted_at;
  setHandler(subagentStepsQuery, (afterSeq = 0) => recordsAfter(state.steps, afterSeq));
  setHandler(subagentProgressQuery, () => ({
    state: finished ? 'finished' : holdsSlot && admittedAt === undefined ? 'queued' : 'running',
    turns: state.turns,
    ...(state.usage && { token_usage: state.usage }),
    ...(state.model_name && { model_name: state.model_name }),
    last_seq: state.step_seq,
  }));
  if (admittedAt === undefined && holdsSlot) {
    const slot = await takeSlot(input, workflowId);
    if ('refused' in slot) {
      reportOutcome({ status: slot.refused.status });
      return closeSubagent(slot.refused, input);
    }
    admittedAt = slot.admittedAt;
  }
  // An agent that may delegate in turn runs the same delegation as the lead, one level deeper.
  const delegator = input.delegation && createDelegator(context, input.delegation, () => state);
  const clarifications = createClarifications(
    context,
    {
      name: agent.name,
      offered: input.clarification !== undefined && agent.tools.includes(CLARIFICATION_TOOL_NAME),
      // The lead's workflow id is its run id (every starter of this project sets it so).
      leadWorkflowId: input.run_id,
    },
    () => state,
    delegator,
  );

  const end = await runSubagentAgent(input, {
    context,
    agent: {
      name: agent.name,
      model: agent.model,
      tools: agent.tools,
      ...(agent.mcp && { mcp: agent.mcp }),
      maxTurns: agent.max_turns,
      tokenBudget: agent.token_budget,
      // The wall clock spans every execution of the run: a continued one waits only for what is left of it.
      timeoutSeconds: agent.timeout_seconds,
      // From the slot's grant: a wait in the queue is not the subagent's own time.
      ...(admittedAt !== undefined && { clockStartMs: Date.parse(admittedAt) }),
    },
    state,
    ...(delegator && { delegator }),
    clarifications,
    recordSteps: true,
    onTurn: progressReporter(input),
  });
  if (end.kind === 'continue_as_new') {
    return await continueAsNew<typeof subagentWorkflow>({
      ...input,
      // The transcript carries the fork's turns from here on.
      fork_messages: undefined,
      fork_from: undefined,
      ...(input.delegation && delegator && { delegation: { ...input.delegation, ledger: delegator.ledger } }),
      carry: loopCarry(state, (input.carry?.continued ?? 0) + 1),
      ...(input.clarification && {
        clarification: { ...input.clarification, questions_asked: clarifications.asked },
      }),
      // The slot stays held across executions.
      ...(admittedAt !== undefined && { admitted_at: admittedAt }),
    });
  }
  finished = true;
  if (holdsSlot) await releaseSlot(workflowId);
  const result = finishSubagent({
    ...subagentOutcome(end),
    finalText: state.last_text,
    timeoutSeconds: agent.timeout_seconds,
    modelName: state.model_name,
    tokenUsage: state.usage,
    turns: state.turns,
  });
  reportOutcome({
    status: result.status,
    ...(result.stop_reason && { stopReason: result.stop_reason }),
    ...(result.token_usage && { tokens: result.token_usage }),
  });
  return closeSubagent(result, input);
}

/**
 * The subagent's ending as Temporal shows it (contracts/closing.ts): a failed or timed-out subagent fails its
 * workflow, its result in the failure's details; a cancelled one ends Canceled, its result in its memo. Its
 * readers (`failedSubagentResult`, the client's `subagentResult`) take it from there.
 */
function closeSubagent(result: SubagentResult, input: SubagentInput): SubagentResult {
  const timedOut = result.status === 'timed_out';
  return closeWith(
    result,
    {
      agent: input.subagent_type,
      declared: input.honest_close === true,
      status: result.status,
      ...(result.stop_reason && { stopReason: result.stop_reason }),
      ...(result.error !== undefined && { error: result.error }),
      turns: result.turns,
      ...(result.token_usage && { tokens: result.token_usage }),
      failure: timedOut
        ? { type: SUBAGENT_TIMED_OUT_TYPE, prefix: SUBAGENT_TIMED_OUT_PREFIX }
        : { type: SUBAGENT_FAILED_TYPE, prefix: SUBAGENT_FAILED_PREFIX },
    },
    () => failIfFailed(result),
  );
}

/**
 * How a subagent closed before `closeWith`: a failed one failed its workflow, its result in the failure's
 * details; workflows started before outcomes were reported returned it. Kept so their histories replay.
 */
function failIfFailed(result: SubagentResult): SubagentResult {
  if (result.status !== 'failed' || !reportsOutcome()) return result;
  throw ApplicationFailure.create({
    type: SUBAGENT_FAILED_TYPE,
    message: `${SUBAGENT_FAILED_PREFIX}${result.error ?? 'no error given'}`,
    nonRetryable: true,
    details: [result],
  });
}
