/**
 * `subagentWorkflow`: one delegated task, run on the shared agent loop. Its outcome is always a result
 * (`failed`, `timed_out`, `cancelled` included); only infrastructure faults throw.
 */
import {
  ActivityFailure,
  CancellationScope,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { failOnInvalidSubagentInput } from '../contracts/inputs';
import type { ChatMessage } from '../contracts/messages';
import { subagentProgressQuery, subagentProgressSignal, subagentStepsQuery } from '../contracts/queries';
import type { SubagentStopReason } from '../contracts/status';
import type { SubagentInput, SubagentResult } from '../contracts/subagent';
import { builtinToolSpecs } from '../contracts/tool-specs';
import {
  initialLoopState,
  loopCarry,
  restoreLoopState,
  runAgentLoop,
  type AgentLoopState,
  type LoopEnd,
  type LoopHooks,
} from './agent-loop';
import { Delegator } from './delegation';
import { DEFAULT_GUARDS } from './guards';
import { historyWantsContinueAsNew } from './pure/compaction';
import { finishSubagent, type FinishSubagentInput } from './pure/final-result';
import { stepsAfter } from './pure/steps';

/** Above `timeout_seconds`, the workflow execution timeout a starter sets as a hard backstop. */
export const SUBAGENT_TIMEOUT_GRACE_SECONDS = 60;

/** A child reports progress to its parent after its first turn, then at most this often (history stays small). */
export const PROGRESS_REPORT_INTERVAL_MS = 15_000;

/** Sends `task_running` snapshots to the parent workflow, when there is one. */
function progressReporter(input: SubagentInput): LoopHooks['onTurn'] {
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
    DEFAULT_GUARDS,
  );
}

export async function subagentWorkflow(input: SubagentInput): Promise<SubagentResult> {
  failOnInvalidSubagentInput(input);
  const { agent } = input;
  const state = startingState(input);
  // The wall clock counts from when the server started the run (its chain), as the hard backstop
  // (workflowExecutionTimeout) does: time spent waiting for a worker counts against both alike.
  const startedAtMs = workflowInfo().startTime.getTime();
  let finished = false;
  setHandler(subagentStepsQuery, (afterSeq = 0) => stepsAfter(state.steps, afterSeq));
  setHandler(subagentProgressQuery, () => ({
    state: finished ? 'finished' : 'running',
    turns: state.turns,
    ...(state.usage && { token_usage: state.usage }),
    ...(state.model_name && { model_name: state.model_name }),
    last_seq: state.step_seq,
  }));

  // An agent that may delegate in turn runs the same delegation as the lead, one level deeper.
  const delegator = input.delegation
    ? new Delegator({
        runId: input.run_id,
        depth: input.depth,
        agents: input.delegation.agents,
        limits: input.delegation.limits,
        workspace: input.workspace,
        sandbox: input.sandbox,
        loopDetection: input.loop_detection,
        transcript: () => state.transcript,
        ledger: input.delegation.ledger,
        ...(input.summarization && { summarization: input.summarization }),
      })
    : undefined;
  if (delegator) setHandler(subagentProgressSignal, (update) => delegator.recordProgress(update));
  const hooks: LoopHooks = {
    ...delegator?.hooks(),
    onTurn: progressReporter(input),
    // Between turns nothing is in flight: a long subagent continues as new there, under the same workflow id.
    shouldPause: () => historyWantsContinueAsNew(workflowInfo()),
  };
  const toolSpecs = builtinToolSpecs(agent.tools);
  if (delegator) toolSpecs.push(delegator.toolSpec());

  const loopScope = new CancellationScope();
  const clockScope = new CancellationScope();
  const loop = loopScope.run(() =>
    runAgentLoop(
      state,
      {
        agentName: agent.name,
        model: agent.model,
        toolSpecs,
        allowedTools: agent.tools,
        maxTurns: agent.max_turns,
        tokenBudget: agent.token_budget,
        loopDetection: input.loop_detection,
        guards: DEFAULT_GUARDS,
        workspace: input.workspace,
        sandbox: input.sandbox,
        ...(input.summarization && { summarization: input.summarization }),
      },
      hooks,
    ),
  );
  // The wall clock spans every execution of the run: a continued one waits only for what is left of it.
  const remainingMs = Math.max(0, startedAtMs + agent.timeout_seconds * 1000 - Date.now());
  const clock = clockScope.run(() => sleep(remainingMs));

  let outcome: Pick<FinishSubagentInput, 'status' | 'stopReason' | 'errorFallback' | 'error'> | undefined;
  try {
    const first = await Promise.race([loop, clock.then(() => 'timed_out' as const)]);
    if (first !== 'timed_out' && first.kind === 'paused') outcome = undefined;
    else if (first === 'timed_out') {
      // Graceful wall clock: running activities are cancelled (they heartbeat), the partial text is kept.
      loopScope.cancel();
      await loop.catch(() => undefined);
      outcome = { status: 'timed_out' };
    } else {
      outcome = fromLoopEnd(first);
    }
  } catch (err) {
    if (isCancellation(err)) outcome = { status: 'cancelled', error: 'Task cancelled by user' };
    else if (err instanceof ActivityFailure) {
      // The model activity ran out of retries (a provider that kept answering 429/5xx, or never answered).
      outcome = { status: 'failed', errorFallback: { message: err.cause?.message ?? err.message } };
    } else throw err;
  } finally {
    clockScope.cancel();
    await clock.catch(() => undefined);
    if (delegator) await CancellationScope.nonCancellable(() => delegator.settle());
  }
  if (outcome === undefined) {
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
    ...outcome,
    finalText: state.last_text,
    timeoutSeconds: agent.timeout_seconds,
    modelName: state.model_name,
    tokenUsage: state.usage,
    turns: state.turns,
  });
}

function fromLoopEnd(end: LoopEnd): Pick<FinishSubagentInput, 'status' | 'stopReason' | 'errorFallback'> {
  switch (end.kind) {
    case 'answered':
      return { status: 'completed' };
    case 'stopped':
      // A subagent's loop has no hooks, so only guard reasons reach here.
      return { status: 'completed', stopReason: end.stopReason as SubagentStopReason };
    case 'error_fallback':
      return { status: 'failed', errorFallback: end.error };
    case 'paused':
      throw new Error('a paused loop continues as new; it has no outcome');
  }
}
