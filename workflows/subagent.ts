/**
 * `subagentWorkflow`: one delegated task, run on the shared agent loop (`runAgent`). Its outcome is always a
 * result (`failed`, `timed_out`, `cancelled` included); only infrastructure faults throw.
 */
import { continueAsNew, getExternalWorkflowHandle, setHandler, workflowInfo } from '@temporalio/workflow';
import { failOnInvalidSubagentInput } from '../contracts/inputs';
import type { ChatMessage } from '../contracts/messages';
import {
  recordsAfter,
  subagentProgressQuery,
  subagentProgressSignal,
  subagentStepsQuery,
} from '../contracts/queries';
import type { SubagentInput, SubagentResult } from '../contracts/subagent';
import {
  initialLoopState,
  loopCarry,
  restoreLoopState,
  type AgentLoopState,
  type LoopPlugins,
} from './agent-loop';
import { createDelegator, runAgent, runContext, type AgentRunEnd } from './agent-run';
import { finishSubagent, type FinishSubagentInput } from './subagent-result';

/** A child reports progress to its parent after its first turn, then at most this often (history stays small). */
export const PROGRESS_REPORT_INTERVAL_MS = 15_000;

/** Sends `task_running` snapshots to the parent workflow, when there is one. */
function progressReporter(input: SubagentInput): LoopPlugins['onTurn'] {
  const parent = workflowInfo().parent;
  if (!parent) return undefined;
  const handle = getExternalWorkflowHandle(parent.workflowId, parent.runId);
  let lastReport: number | undefined;
  return (state) => {
    const now = Date.now();
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
    case 'answered':
      return { status: 'completed' };
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

export async function subagentWorkflow(input: SubagentInput): Promise<SubagentResult> {
  failOnInvalidSubagentInput(input);
  const { agent } = input;
  const context = runContext(input, input.run_id);
  const state = startingState(input);
  let finished = false;
  setHandler(subagentStepsQuery, (afterSeq = 0) => recordsAfter(state.steps, afterSeq));
  setHandler(subagentProgressQuery, () => ({
    state: finished ? 'finished' : 'running',
    turns: state.turns,
    ...(state.usage && { token_usage: state.usage }),
    ...(state.model_name && { model_name: state.model_name }),
    last_seq: state.step_seq,
  }));
  // An agent that may delegate in turn runs the same delegation as the lead, one level deeper.
  const delegator = input.delegation && createDelegator(context, input.delegation, () => state);

  const end = await runAgent({
    context,
    agent: {
      name: agent.name,
      model: agent.model,
      tools: agent.tools,
      maxTurns: agent.max_turns,
      tokenBudget: agent.token_budget,
      // The wall clock spans every execution of the run: a continued one waits only for what is left of it.
      timeoutSeconds: agent.timeout_seconds,
    },
    state,
    ...(delegator && { delegator }),
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
    });
  }
  finished = true;
  return finishSubagent({
    ...subagentOutcome(end),
    finalText: state.last_text,
    timeoutSeconds: agent.timeout_seconds,
    modelName: state.model_name,
    tokenUsage: state.usage,
    turns: state.turns,
  });
}
