/**
 * A transcript as workflows hold it: a stored prefix, by reference, and the messages after it.
 *
 * History must not grow with the square of a run's length. A model call would otherwise carry the whole
 * transcript in its input at every turn; here it carries a reference to what earlier calls already stored
 * (content-addressed segments in the payload store, each naming its parent) and only the messages that are
 * new since. The model activity answers with a reference that covers everything it was sent, so turn N
 * costs history only turn N's own messages, and workflow memory holds only the tail.
 *
 * Plain data, no Node APIs: workflows import this file.
 */
import type { ChatMessage } from './messages';
import type { TranscriptRef } from './input-schemas';

export type { TranscriptRef } from './input-schemas';

export interface Transcript {
  /** Messages [0, stored.count), in the payload store. Absent until a model call has stored them. */
  stored?: TranscriptRef;
  /**
   * A `fork` child's starting point: the lead's stored prefix, whose completed turns go after the child's
   * system message (the first message of `tail`). Only while `stored` is absent.
   */
  fork_from?: TranscriptRef;
  /** Messages after the stored prefix, in order. */
  tail: ChatMessage[];
}

export function transcriptLength(transcript: Transcript): number {
  return (transcript.stored?.count ?? 0) + transcript.tail.length;
}

export function messageChars(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += message.content.length;
    if (message.role === 'assistant') for (const call of message.tool_calls ?? []) chars += call.args.length;
  }
  return chars;
}

/** Characters of content in the whole transcript, stored prefix included (a fork's source is not counted). */
export function transcriptChars(transcript: Transcript): number {
  return (transcript.stored?.chars ?? 0) + messageChars(transcript.tail);
}

/** After a model call stored everything it was sent: the reference covers it all, the tail starts empty. */
export function storedUpTo(ref: TranscriptRef): Transcript {
  return { stored: ref, tail: [] };
}
