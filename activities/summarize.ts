/**
 * The summarize activity (compaction): the older turns of a transcript become a summary written by a model;
 * the system message, the agent's task and the most recent messages are kept and stored as a new transcript.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../contracts/messages';
import {
  DEFAULT_SUMMARY_PROMPT,
  type SummarizeInput,
  type SummarizeResult,
} from '../contracts/summarization';
import { truncateHeadTail as clip } from '../contracts/text';
import type { ModelProviders } from './model';
import { whileHeartbeating } from './activity-context';
import type { Transcripts } from './transcripts';

/** Characters of one message, and of the whole text, that the summarizer is shown (head and tail kept). */
const MESSAGE_CHARS = 4000;
const TEXT_CHARS = 200_000;

export const SUMMARY_FAILED_ERROR_TYPE = 'SummaryFailed';

/** Where the kept recent messages start: never a tool result cut from the call that asked for it. */
export function keptFrom(messages: readonly ChatMessage[], firstAllowed: number, keep: number): number {
  let start = Math.max(firstAllowed, messages.length - keep);
  while (start > firstAllowed && messages[start]?.role === 'tool') start -= 1;
  return start;
}

/** The summarize activity of a worker, over its transcripts. */
export function createSummaryActivities(deps: { transcripts: Transcripts; providers: ModelProviders }) {
  return {
    summarizeTranscript: (input: SummarizeInput) => summarizeTranscript(deps, input),
  };
}

async function summarizeTranscript(
  { transcripts, providers }: { transcripts: Transcripts; providers: ModelProviders },
  input: SummarizeInput,
): Promise<SummarizeResult> {
  const all = await whileHeartbeating(() => transcripts.full(input));
  const system = all[0]?.role === 'system' ? all[0] : undefined;
  const task = all[input.task_index];
  const start = keptFrom(all, input.task_index + 1, input.keep_messages);
  const dropped = all
    .slice(system ? 1 : 0, start)
    .filter((_, i) => i + (system ? 1 : 0) !== input.task_index);
  if (dropped.length === 0) return {};

  const reply = await providers.call({
    model: input.model,
    agent_name: input.agent_name,
    messages: [
      { role: 'system', content: input.summary_prompt ?? DEFAULT_SUMMARY_PROMPT },
      { role: 'user', content: summarizerText(task, dropped, input.previous_summary) },
    ],
    tools: [],
  });
  if (reply.error_fallback || reply.content.trim() === '') {
    throw ApplicationFailure.nonRetryable(
      `summary by model ${input.model.name} failed: ${reply.error_fallback?.message ?? 'empty answer'}`,
      SUMMARY_FAILED_ERROR_TYPE,
    );
  }
  const kept = [...(system ? [system] : []), ...(task ? [task] : []), ...all.slice(start)];
  const ref = await whileHeartbeating(() => transcripts.append(undefined, kept, kept));
  return {
    compacted: { summary: reply.content.trim(), transcript_ref: ref, dropped: dropped.length },
    ...(reply.usage && { usage: reply.usage }),
  };
}

function summarizerText(
  task: ChatMessage | undefined,
  dropped: readonly ChatMessage[],
  previous: string | undefined,
): string {
  const parts: string[] = [];
  if (task) parts.push(`The agent's task:\n${clip(task.content, MESSAGE_CHARS)}`);
  if (previous) parts.push(`Summary of still earlier turns:\n${previous}`);
  parts.push(`Turns to summarize:\n${dropped.map(renderMessage).join('\n\n')}`);
  return clip(parts.join('\n\n'), TEXT_CHARS);
}

function renderMessage(message: ChatMessage): string {
  switch (message.role) {
    case 'assistant': {
      const calls = (message.tool_calls ?? []).map((call) => `  -> ${call.name}(${clip(call.args, 500)})`);
      return [`[assistant] ${clip(message.content, MESSAGE_CHARS)}`, ...calls].join('\n');
    }
    case 'tool':
      return `[tool ${message.name}${message.is_error ? ', error' : ''}] ${clip(message.content, MESSAGE_CHARS)}`;
    default:
      return `[${message.role}] ${clip(message.content, MESSAGE_CHARS)}`;
  }
}
