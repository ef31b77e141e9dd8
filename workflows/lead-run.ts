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
import type { ChatMessage } from '../contracts/messages';
import { subagentProgressSignal } from '../contracts/queries';
import type { RunStopReason } from '../contracts/status';
import { builtinToolSpecs } from '../contracts/tool-specs';
import { initialLoopState, runAgentLoop, type AgentLoopState, type LoopEnd } from './agent-loop';
import { Delegator } from './delegation';
import { DEFAULT_GUARDS, type GuardStates } from './guards';
import { eventsAfter } from './lead/events';
import { countByStatus, leadTokenUsage } from './lead/ledger';
import { lastAssistantText } from './pure/final-result';

export const LEAD_SYSTEM_PROMPT = [
  'You are the lead agent. Do the work directly by default; delegate with the `task` tool only when a',
  'subagent clearly pays for itself: independent parts that can run in parallel, a specialist, or a context',
  'you want kept apart. Give each subagent a self-contained task, then combine their results into one answer',
  'for the user. Work happens in the shared workspace; answer with a concise final result.',
].join(' ');

function initialMessages(input: LeadRunInput): ChatMessage[] {
  return [
    { role: 'system', content: LEAD_SYSTEM_PROMPT },
    { role: 'user', content: input.prompt },
  ];
}

/** A new run, or the previous execution's state when this one continues it. */
function restoreState(input: LeadRunInput): AgentLoopState {
  const { carry } = input;
  if (!carry) return initialLoopState(initialMessages(input), DEFAULT_GUARDS);
  return {
    messages: carry.messages,
    turns: carry.turns,
    ...(carry.usage && { usage: carry.usage }),
    guard_states: carry.guard_states as GuardStates,
    steps: [],
  };
}

export async function leadRunWorkflow(input: LeadRunInput): Promise<LeadRunResult> {
  const runId = input.run_id ?? workflowInfo().workflowId;
  const state = restoreState(input);
  const delegator = new Delegator({
    runId,
    depth: input.depth,
    agents: input.agents,
    limits: input.limits,
    workspace: input.workspace,
    sandbox: input.sandbox,
    loopDetection: input.loop_detection,
    transcript: () => state.messages,
    ledger: input.ledger,
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
  try {
    const end: LoopEnd = await runAgentLoop(
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
      },
      // Between turns no delegation is in flight: when history grows long, the run continues as new there.
      { ...delegator.hooks(), shouldPause: () => workflowInfo().continueAsNewSuggested },
    );
    if (end.kind === 'paused') {
      return await continueAsNew<typeof leadRunWorkflow>({
        ...input,
        run_id: runId,
        ledger: delegator.ledger,
        carry: {
          messages: state.messages,
          turns: state.turns,
          ...(state.usage && { usage: state.usage }),
          guard_states: state.guard_states,
          events: delegator.events,
          continued: (input.carry?.continued ?? 0) + 1,
        },
      });
    }
    if (end.kind === 'stopped') stopReason = end.stopReason;
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
    // Cancelled children report back before the run ends: no ledger entry stays `in_progress`.
    await CancellationScope.nonCancellable(() => delegator.settle());
  }
  finished = true;
  return {
    run_id: runId,
    status,
    ...(stopReason && { stop_reason: stopReason }),
    final_output: lastAssistantText(state.messages) ?? '',
    ledger: delegator.ledger,
    token_usage: leadTokenUsage(delegator.ledger, runId, state.usage),
    turns: state.turns,
    ...(error !== undefined && { error }),
  };
}
