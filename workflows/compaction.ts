/** When to compact a transcript: pure decisions over workflow state (the loop calls the summary activity). */
import type { SummarizationRuntime } from '../contracts/summarization';
import { messageChars, transcriptChars, type Transcript } from '../contracts/transcript';

/** A rough tokens-from-characters ratio, for transcripts no provider has counted yet. */
export const CHARS_PER_TOKEN = 4;

/** Turns to wait before trying again after a summary failed. */
export const COMPACTION_RETRY_TURNS = 5;

/**
 * After a compaction the prompt must grow by this fraction of the trigger before the next one: when what is
 * kept (system prompt, task, recent messages, summary, ledger) is itself near the trigger, compacting again
 * at every turn would cost a summary call a turn and gain nothing.
 */
export const COMPACTION_REGROWTH = 0.25;

export interface CompactionState {
  transcript: Transcript;
  turns: number;
  last_prompt_tokens?: number;
  compaction_retry_turn?: number;
  compaction_floor?: number;
}

/** The next prompt's size: what the provider counted last time plus what was added since, or an estimate. */
export function estimatedPromptTokens(state: CompactionState): number {
  if (state.last_prompt_tokens !== undefined) {
    return state.last_prompt_tokens + Math.ceil(messageChars(state.transcript.tail) / CHARS_PER_TOKEN);
  }
  return Math.ceil(transcriptChars(state.transcript) / CHARS_PER_TOKEN);
}

export function needsCompaction(state: CompactionState, settings: SummarizationRuntime | undefined): boolean {
  if (!settings) return false;
  if (state.compaction_retry_turn !== undefined && state.turns < state.compaction_retry_turn) return false;
  const estimate = estimatedPromptTokens(state);
  if (estimate < settings.trigger_tokens) return false;
  const floor = state.compaction_floor;
  return floor === undefined || estimate - floor >= settings.trigger_tokens * COMPACTION_REGROWTH;
}
