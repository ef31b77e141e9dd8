/**
 * A forked lead run's (or forked subagent's) side of a fork (docs/fork.md): the state it starts in, the original's
 * turns kept, and what its status and result say of its origin. Pure: the state was read from the original's
 * history by the fork's first execution (workflows/fork-run.ts, workflows/fork-subagent.ts), and travels in the
 * input.
 */
import type { LedgerEntry } from '../contracts/ledger';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../contracts/messages';
import type { ForkOrigin, LeadFork } from '../contracts/run-fork';
import { initialLoopState, type AgentLoopState } from './agent-loop';
import { lastAssistantText } from './subagent-result';

/** The loop's state at the end of the kept turns: their transcript, their count; usage starts at nothing. */
export function forkedState(fork: LeadFork): AgentLoopState {
  const state = initialLoopState({ ...fork.transcript, tail: [...fork.transcript.tail] }, fork.task_index);
  state.turns = fork.turn;
  const answer = lastAssistantText(fork.transcript.tail);
  if (answer !== undefined) state.last_text = answer;
  return state;
}

/** The status's and result's `forked_from`: present on a fork only. */
export function forkOriginOf(
  fork: LeadFork | undefined,
  ledger: readonly LedgerEntry[],
): { forked_from?: ForkOrigin } {
  if (!fork) return {};
  const reused = ledger.filter((entry) => entry.reused);
  let usage: TokenUsage | undefined = fork.reused_usage;
  for (const entry of reused) if (entry.token_usage) usage = addUsage(usage ?? ZERO_USAGE, entry.token_usage);
  return {
    forked_from: {
      from_run_id: fork.from_run_id,
      turn: fork.turn,
      ...(usage && { reused_usage: usage }),
      reused_delegations: reused.length,
    },
  };
}
