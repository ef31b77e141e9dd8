/**
 * A graph agent's messages as its subagent's steps take them: from the graph's state when its run ends (the
 * activity's result), and from the latest checkpoint in the payload store while it runs, so a reader sees the
 * steps of the super-steps done so far without asking the worker that runs it.
 */
import type { BaseMessage } from '@langchain/core/messages';
import type { AssistantMessage, ToolMessage } from '../../contracts/messages';
import type { BlobStore } from '../../payloads/store';
import { toChatMessage } from './chat-model';
import { StoredCheckpointSaver } from './checkpointer';

/** The graph's messages after the task prompt, AI and tool ones, in the project's transcript shape. */
export function graphStepMessages(messages: readonly BaseMessage[]): (AssistantMessage | ToolMessage)[] {
  return messages
    .filter((m) => m.getType() === 'ai' || m.getType() === 'tool')
    .map((m) => toChatMessage(m) as AssistantMessage | ToolMessage);
}

/**
 * The messages of the last checkpoint `head` lists (the key a running attempt heartbeats) for `threadId`:
 * what the graph's completed super-steps hold. Empty before the first checkpoint has messages.
 */
export async function checkpointStepMessages(
  store: BlobStore,
  head: string,
  threadId: string,
): Promise<(AssistantMessage | ToolMessage)[]> {
  // A reader's own saver: it loads what the head lists and never writes.
  const saver = new StoredCheckpointSaver(store, () => undefined);
  await saver.restore(head);
  const tuple = await saver.getTuple({ configurable: { thread_id: threadId } });
  const messages = (tuple?.checkpoint.channel_values as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? graphStepMessages(messages as BaseMessage[]) : [];
}
