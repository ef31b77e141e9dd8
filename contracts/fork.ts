/**
 * What a `fork` child starts from: the lead's completed turns. Strict providers reject an assistant tool
 * call without its result (and a result without its call), so a turn still in flight is never handed on.
 */
import type { ChatMessage, ToolMessage } from './messages';

/**
 * The lead's completed turns: no system message (the child has its own), and nothing from the first turn
 * whose tool calls are not all answered (the one issuing this `task` call) onwards. A tool result with no
 * call before it is left out too.
 */
export function forkMessages(transcript: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let i = 0;
  while (i < transcript.length) {
    const message = transcript[i];
    i += 1;
    if (message.role === 'system' || message.role === 'tool') continue;
    const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
    if (calls.length === 0) {
      out.push(message);
      continue;
    }
    const results: ToolMessage[] = [];
    for (; i < transcript.length; i++) {
      const next = transcript[i];
      if (next.role !== 'tool') break;
      const answers = calls.some((call) => call.id === next.tool_call_id);
      if (answers && !results.some((result) => result.tool_call_id === next.tool_call_id)) results.push(next);
    }
    if (results.length < calls.length) break;
    out.push(message, ...results);
  }
  return out;
}
