/**
 * Compaction (DeerFlow's summarization): when a transcript passes its trigger, the older turns are replaced
 * by a summary that lives in workflow state and is re-injected each turn, not by a message the model could
 * mistake for its own. The system prompt, the agent's task and the most recent messages are kept.
 */
import type { ChatMessage, TokenUsage } from './messages';
import type { ModelSettings } from './model';
import type { TranscriptRef } from './transcript';

export type { SummarizationRuntime } from './input-schemas';

export interface SummarizeInput {
  model: ModelSettings;
  /** The agent whose transcript this is (the scripted provider answers summaries as `<agent>/summarizer`). */
  agent_name: string;
  transcript_ref?: TranscriptRef;
  fork_from?: TranscriptRef;
  messages: ChatMessage[];
  task_index: number;
  keep_messages: number;
  summary_prompt?: string;
  previous_summary?: string;
}

export interface SummarizeResult {
  /** Absent when there was nothing old enough to compact. */
  compacted?: {
    summary: string;
    transcript_ref: TranscriptRef;
    /** Messages replaced by the summary. */
    dropped: number;
  };
  usage?: TokenUsage;
}

export const SUMMARIZER_AGENT_SUFFIX = '/summarizer';

export const DEFAULT_SUMMARY_PROMPT = [
  'You compact the working memory of an agent. Summarize the conversation below so the agent can carry on',
  'without it: the goal, what was done and found (facts, numbers, file paths), decisions made, what failed,',
  'and what remains. Keep it concise and factual; do not invent anything. Work delegated to subagents is',
  'tracked separately and need not be repeated in detail.',
].join(' ');

/** How the summary is shown to the model each turn (appended to its system message). */
export function summaryBlock(summary: string): string {
  return `<conversation_summary>\nEarlier turns of this conversation were compacted. Summary of them:\n${summary}\n</conversation_summary>`;
}
