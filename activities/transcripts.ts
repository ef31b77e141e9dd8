/**
 * Transcript segments in the payload store (contracts/transcript.ts): a model call stores what it was sent as
 * one segment that names its parent, and answers with the reference; the next call sends that reference and
 * only the messages that are new. A segment is content-addressed and immutable, so any worker can resolve any
 * reference, and a retried or replayed call stores nothing twice.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage, ToolSpec } from '../contracts/messages';
import { messageChars, type TranscriptRef } from '../contracts/transcript';
import { forkMessages } from '../contracts/fork';
import { blobKey, payloadStore } from '../payloads/store';

/** The failure type of a reference whose segment is not in the store (retried: it may be restored). */
export const TRANSCRIPT_MISSING_ERROR_TYPE = 'TranscriptSegmentMissing';
/** The failure type of a segment whose bytes do not hash to its key (retried, as the codec's own check is). */
export const TRANSCRIPT_ALTERED_ERROR_TYPE = 'TranscriptSegmentAltered';

interface Segment {
  v: 1;
  parent: string | null;
  count: number;
  chars: number;
  messages: ChatMessage[];
}

// Resolved transcripts by the key of their last segment. A worker usually serves the same agent's next turn
// (sticky queues), so the common case reads nothing from the store; the bound keeps memory flat under load.
const CACHE_MAX_ENTRIES = 64;
const CACHE_MAX_CHARS = 64 * 1024 * 1024;
const cache = new Map<string, { messages: ChatMessage[]; chars: number }>();
let cachedChars = 0;

function remember(key: string, messages: ChatMessage[], chars: number): void {
  if (cache.has(key) || chars > CACHE_MAX_CHARS / 4) return;
  cache.set(key, { messages, chars });
  cachedChars += chars;
  for (const [oldest, entry] of cache) {
    if (cache.size <= CACHE_MAX_ENTRIES && cachedChars <= CACHE_MAX_CHARS) break;
    cache.delete(oldest);
    cachedChars -= entry.chars;
  }
}

function recall(key: string): ChatMessage[] | undefined {
  const entry = cache.get(key);
  if (!entry) return undefined;
  // Most recently used last: the oldest entries go first.
  cache.delete(key);
  cache.set(key, entry);
  return entry.messages;
}

/** Forgets every resolved transcript (tests use it to make a worker read the store). */
export function clearTranscriptCache(): void {
  cache.clear();
  cachedChars = 0;
}

async function readSegment(key: string): Promise<Segment> {
  const store = payloadStore();
  const bytes = await store.get(key);
  if (bytes === undefined) throw missingBlob('transcript segment', key);
  if (blobKey(bytes) !== key) throw alteredBlob('transcript segment', key);
  return JSON.parse(Buffer.from(bytes).toString('utf8')) as Segment;
}

/**
 * Retryable: a worker whose local store lacks the blob may share its task queue with one that has it (the
 * retry can land there), and an object store may answer late. The message says what to fix.
 */
function missingBlob(what: string, key: string): ApplicationFailure {
  return ApplicationFailure.retryable(
    `${what} ${key} is missing from ${payloadStore().description}: every worker of a deployment must share ` +
      `one payload store (payloads.store: s3, or payloads.path on a shared disk), kept as long as the runs ` +
      `that refer to it`,
    TRANSCRIPT_MISSING_ERROR_TYPE,
  );
}

/**
 * Retryable, like the codec's check of a blob: an altered blob is refused, never used, and the call goes on
 * once the blob is restored (from a backup, or by the process that wrote it) instead of failing its agent.
 */
function alteredBlob(what: string, key: string): ApplicationFailure {
  return ApplicationFailure.retryable(
    `${what} ${key} in ${payloadStore().description} does not match its hash (tampered or corrupted): ` +
      'refusing to use it; the call is retried and goes on once it is restored',
    TRANSCRIPT_ALTERED_ERROR_TYPE,
  );
}

const toolSpecsByKey = new Map<string, ToolSpec[]>();

/** The tool specs of a call: as sent, or read back by their key (stored by the execution's first call). */
export async function toolSpecsOf(input: { tools: ToolSpec[]; tools_key?: string }): Promise<ToolSpec[]> {
  const key = input.tools_key;
  if (key === undefined || input.tools.length > 0) return input.tools;
  const known = toolSpecsByKey.get(key);
  if (known) return known;
  const bytes = await payloadStore().get(key);
  if (bytes === undefined) throw missingBlob('tool specs', key);
  if (blobKey(bytes) !== key) throw alteredBlob('tool specs', key);
  const specs = JSON.parse(Buffer.from(bytes).toString('utf8')) as ToolSpec[];
  toolSpecsByKey.set(key, specs);
  return specs;
}

/** Stores the specs sent with their key; answers the key once they are stored under it (else undefined). */
export async function storeToolSpecs(input: {
  tools: ToolSpec[];
  tools_key?: string;
}): Promise<string | undefined> {
  const key = input.tools_key;
  if (key === undefined || input.tools.length === 0) return undefined;
  if (toolSpecsByKey.has(key)) return key;
  const bytes = Buffer.from(JSON.stringify(input.tools), 'utf8');
  // The workflow's key is over the same JSON text; a mismatch (a different serializer) keeps sending specs.
  if (blobKey(bytes) !== key) return undefined;
  await payloadStore().put(key, bytes);
  toolSpecsByKey.set(key, input.tools);
  return key;
}

/** Every message of a stored prefix, oldest first. */
export async function resolveTranscript(ref: TranscriptRef): Promise<ChatMessage[]> {
  const cached = recall(ref.key);
  if (cached) return cached;
  const chain: Segment[] = [];
  let base: ChatMessage[] = [];
  for (let key: string | null = ref.key; key !== null;) {
    const hit = recall(key);
    if (hit) {
      base = hit;
      break;
    }
    const segment = await readSegment(key);
    chain.push(segment);
    key = segment.parent;
  }
  let messages = base;
  for (let i = chain.length - 1; i >= 0; i--) messages = messages.concat(chain[i].messages);
  remember(ref.key, messages, ref.chars);
  return messages;
}

/** Stores `messages` after `parent` (a new transcript when absent) and answers with the reference to it all. */
export async function appendTranscript(
  parent: TranscriptRef | undefined,
  messages: ChatMessage[],
  resolved?: ChatMessage[],
): Promise<TranscriptRef> {
  if (parent && messages.length === 0) return parent;
  const segment: Segment = {
    v: 1,
    parent: parent?.key ?? null,
    count: (parent?.count ?? 0) + messages.length,
    chars: (parent?.chars ?? 0) + messageChars(messages),
    messages,
  };
  const bytes = Buffer.from(JSON.stringify(segment), 'utf8');
  const key = blobKey(bytes);
  await payloadStore().put(key, bytes);
  const ref = { key, count: segment.count, chars: segment.chars };
  if (resolved) remember(key, resolved, ref.chars);
  return ref;
}

export interface TranscriptParts {
  transcript_ref?: TranscriptRef;
  fork_from?: TranscriptRef;
  messages: ChatMessage[];
}

/** The whole transcript a call stands for: the stored prefix (or a fork's source) and the messages after it. */
export async function fullTranscript(parts: TranscriptParts): Promise<ChatMessage[]> {
  if (parts.transcript_ref) return (await resolveTranscript(parts.transcript_ref)).concat(parts.messages);
  if (parts.fork_from) {
    // The child's system message, then the lead's completed turns, then what the child was given.
    const [system, ...rest] = parts.messages;
    const lead = forkMessages(await resolveTranscript(parts.fork_from));
    return system ? [system, ...lead, ...rest] : [...lead, ...rest];
  }
  return parts.messages;
}

/** Stores the transcript a call was sent; the reference covers all of it. */
export async function storeSentTranscript(
  parts: TranscriptParts,
  all: ChatMessage[],
): Promise<TranscriptRef> {
  // A fork's first call stores the composed transcript whole: from then on the child has its own prefix.
  if (parts.transcript_ref) return appendTranscript(parts.transcript_ref, parts.messages, all);
  return appendTranscript(undefined, all, all);
}

/** The system context (summary, ledger block) added to the first system message, for one call. */
export function withSystemContext(messages: ChatMessage[], context: string | undefined): ChatMessage[] {
  if (!context) return messages;
  const [first, ...rest] = messages;
  // One leading system message: strict providers refuse a second one.
  if (first?.role !== 'system') return [{ role: 'system', content: context }, ...messages];
  return [{ role: 'system', content: `${first.content}\n\n${context}` }, ...rest];
}
