/**
 * `leadRunWorkflow`: one execution per run (workflow id = run id). The lead runs on the same agent loop as
 * every subagent; delegation plugs in. Its ledger and event log live in workflow state, rebuilt from history
 * on replay, and are read by queries.
 */
import {
  ActivityFailure,
  CancellationScope,
  continueAsNew,
  isCancellation,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import {
  leadEventsQuery,
  leadLedgerQuery,
  leadStatusQuery,
  type LeadRunInput,
  type LeadRunResult,
  type LeadRunStatus,
} from '../contracts/lead';
import { failOnInvalidLeadRunInput } from '../contracts/inputs';
import type { ChatMessage } from '../contracts/messages';
import { subagentProgressSignal } from '../contracts/queries';
import type { RunStopReason } from '../contracts/status';
import { builtinToolSpecs } from '../contracts/tool-specs';
import {
  initialLoopState,
  loopCarry,
  restoreLoopState,
  runAgentLoop,
  type AgentLoopState,
} from './agent-loop';
import { Delegator } from './delegation';
import { DEFAULT_GUARDS, type GuardStates } from './guards';
import { eventsAfter } from './lead/events';
import { countByStatus, leadTokenUsage } from './lead/ledger';
import { historyWantsContinueAsNew } from './pure/compaction';
import { lastAssistantText } from './pure/final-result';

export const LEAD_SYSTEM_PROMPT = [
  'You are the lead agent. Do the work directly by default; delegate with the `task` tool only when a',
  'subagent clearly pays for itself: independent parts that can run in parallel, a specialist, or a context',
  'you want kept apart. Give each subagent a self-contained task, then combine their results into one answer',
  'for the user. Work happens in the shared workspace; answer with a concise final result.',
].join(' ');

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
    { role: 'system', content: LEAD_SYSTEM_PROMPT },
    { role: 'user', content: input.prompt },
  ];
  const state = initialLoopState({ tail: messages }, 1, DEFAULT_GUARDS);
  if (carry) {
    // A carry written before transcripts were stored by reference.
    state.turns = carry.turns;
    if (carry.usage) state.usage = carry.usage;
    state.guard_states = carry.guard_states as GuardStates;
    state.last_text = lastAssistantText(messages);
  }
  return state;
}

export async function leadRunWorkflow(input: LeadRunInput): Promise<LeadRunResult> {
  failOnInvalidLeadRunInput(input);
  const runId = input.run_id ?? workflowInfo().workflowId;
  const state = startingState(input);
  // The wall clock counts from when the server started the run (its chain), as the hard backstop
  // (workflowExecutionTimeout) does: time spent waiting for a worker counts against both alike.
  const startedAtMs = workflowInfo().startTime.getTime();
  const delegator = new Delegator({
    runId,
    depth: input.depth,
    agents: input.agents,
    limits: input.limits,
    workspace: input.workspace,
    sandbox: input.sandbox,
    loopDetection: input.loop_detection,
    transcript: () => state.transcript,
    ledger: input.ledger,
    ...(input.summarization && { summarization: input.summarization }),
  });
  delegator.events = input.carry?.events ?? [];
  let finished = false;
  setHandler(subagentProgressSignal, (update) => delegator.recordProgress(update));
  setHandler(leadLedgerQuery, () => delegator.ledger);
  setHandler(leadEventsQuery, (afterSeq = 0) => eventsAfter(delegator.events, afterSeq));
  setHandler(leadStatusQuery, () => ({
    state: finished ? 'finished' : 'running',
    turns: state.turns,
    token_usage: leadTokenUsage(delegator.ledger, runId, state.usage),
    counts: countByStatus(delegator.ledger, runId),
    last_seq: delegator.events.length,
  }));

  // At the depth cap the tool stays visible and its calls are refused with an explanation.
  const toolSpecs = builtinToolSpecs(input.tools);
  if (input.agents.length > 0) toolSpecs.push(delegator.toolSpec());

  let status: LeadRunStatus = 'completed';
  let stopReason: RunStopReason | undefined;
  let error: string | undefined;
  const loopScope = new CancellationScope();
  const clockScope = new CancellationScope();
  try {
    const loop = loopScope.run(() =>
      runAgentLoop(
        state,
        {
          agentName: 'lead',
          model: input.model,
          toolSpecs,
          allowedTools: input.tools,
          maxTurns: input.max_turns,
          tokenBudget: input.token_budget,
          loopDetection: input.loop_detection,
          guards: DEFAULT_GUARDS,
          workspace: input.workspace,
          sandbox: input.sandbox,
          ...(input.summarization && { summarization: input.summarization }),
        },
        // Between turns no delegation is in flight: when history grows long, the run continues as new there.
        { ...delegator.hooks(), shouldPause: () => historyWantsContinueAsNew(workflowInfo()) },
      ),
    );
    // The lead's own wall clock, when it has one, spans every execution of the run.
    const timeoutSeconds = input.timeout_seconds;
    const clock =
      timeoutSeconds === undefined
        ? undefined
        : clockScope.run(() => sleep(Math.max(0, startedAtMs + timeoutSeconds * 1000 - Date.now())));
    const end = await (clock ? Promise.race([loop, clock.then(() => 'timed_out' as const)]) : loop);
    if (end === 'timed_out') {
      // Graceful: running activities and children are cancelled, the partial answer is kept.
      loopScope.cancel();
      await loop.catch(() => undefined);
      status = 'timed_out';
      error = `Run timed out after ${input.timeout_seconds} seconds`;
    } else if (end.kind === 'paused') {
      clockScope.cancel();
      await CancellationScope.nonCancellable(() => delegator.settle());
      return await continueAsNew<typeof leadRunWorkflow>({
        ...input,
        run_id: runId,
        ledger: delegator.ledger,
        carry: {
          ...loopCarry(state, (input.carry?.continued ?? 0) + 1),
          events: delegator.events,
        },
      });
    } else if (end.kind === 'stopped') stopReason = end.stopReason;
    else if (end.kind === 'error_fallback') {
      status = 'failed';
      error = end.error.message;
    } else if (end.finishReason === 'length') stopReason = 'model_length_capped';
  } catch (err) {
    if (isCancellation(err)) {
      status = 'cancelled';
      error = 'Run cancelled by user';
    } else if (err instanceof ActivityFailure) {
      status = 'failed';
      error = err.cause?.message ?? err.message;
    } else throw err;
  } finally {
    clockScope.cancel();
    // Cancelled children report back before the run ends: no ledger entry stays `in_progress`.
    await CancellationScope.nonCancellable(() => delegator.settle());
  }
  finished = true;
  return {
    run_id: runId,
    status,
    ...(stopReason && { stop_reason: stopReason }),
    final_output: state.last_text ?? '',
    ledger: delegator.ledger,
    token_usage: leadTokenUsage(delegator.ledger, runId, state.usage),
    turns: state.turns,
    ...(error !== undefined && { error }),
  };
}
