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
import { blobKey, type BlobStore } from '../payloads/store';

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

/** Resolved transcripts kept in memory: the most recently used up to a count and a size. */
const CACHE_MAX_ENTRIES = 64;
const CACHE_MAX_CHARS = 64 * 1024 * 1024;

export interface TranscriptParts {
  transcript_ref?: TranscriptRef;
  fork_from?: TranscriptRef;
  messages: ChatMessage[];
}

/**
 * A worker's transcripts and tool specs in its payload store, with what it has resolved kept in memory. A
 * worker usually serves the same agent's next turn (sticky queues), so the common case reads nothing from the
 * store; the bound keeps memory flat under load.
 */
export class Transcripts {
  private readonly cache = new Map<string, { messages: ChatMessage[]; chars: number }>();
  private cachedChars = 0;
  private readonly toolSpecsByKey = new Map<string, ToolSpec[]>();

  /** `store`: the worker's store for what is kept without the codecs (encrypted at rest with keys). */
  constructor(readonly store: BlobStore) {}

  /** Forgets every resolved transcript (tests use it to make a worker read the store). */
  clearCache(): void {
    this.cache.clear();
    this.cachedChars = 0;
  }

  /** The tool specs of a call: as sent, or read back by their key (stored by the execution's first call). */
  async toolSpecsOf(input: { tools: ToolSpec[]; tools_key?: string }): Promise<ToolSpec[]> {
    const key = input.tools_key;
    if (key === undefined || input.tools.length > 0) return input.tools;
    const known = this.toolSpecsByKey.get(key);
    if (known) return known;
    const specs = JSON.parse(Buffer.from(await this.read('tool specs', key)).toString('utf8')) as ToolSpec[];
    this.toolSpecsByKey.set(key, specs);
    return specs;
  }

  /** Stores the specs sent with their key; answers the key once they are stored under it (else undefined). */
  async storeToolSpecs(input: { tools: ToolSpec[]; tools_key?: string }): Promise<string | undefined> {
    const key = input.tools_key;
    if (key === undefined || input.tools.length === 0) return undefined;
    if (this.toolSpecsByKey.has(key)) return key;
    const bytes = Buffer.from(JSON.stringify(input.tools), 'utf8');
    // The workflow's key is over the same JSON text; a mismatch (a different serializer) keeps sending specs.
    if (blobKey(bytes) !== key) return undefined;
    await this.store.put(key, bytes);
    this.toolSpecsByKey.set(key, input.tools);
    return key;
  }

  /** Every message of a stored prefix, oldest first. */
  async resolve(ref: TranscriptRef): Promise<ChatMessage[]> {
    const cached = this.recall(ref.key);
    if (cached) return cached;
    const chain: Segment[] = [];
    let base: ChatMessage[] = [];
    for (let key: string | null = ref.key; key !== null;) {
      const hit = this.recall(key);
      if (hit) {
        base = hit;
        break;
      }
      const segment = JSON.parse(
        Buffer.from(await this.read('transcript segment', key)).toString('utf8'),
      ) as Segment;
      chain.push(segment);
      key = segment.parent;
    }
    let messages = base;
    for (let i = chain.length - 1; i >= 0; i--) messages = messages.concat(chain[i].messages);
    this.remember(ref.key, messages, ref.chars);
    return messages;
  }

  /** Stores `messages` after `parent` (a new transcript when absent) and answers with the reference to it all. */
  async append(
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
    await this.store.put(key, bytes);
    const ref = { key, count: segment.count, chars: segment.chars };
    if (resolved) this.remember(key, resolved, ref.chars);
    return ref;
  }

  /** The whole transcript a call stands for: the stored prefix (or a fork's source) and the messages after it. */
  async full(parts: TranscriptParts): Promise<ChatMessage[]> {
    if (parts.transcript_ref) return (await this.resolve(parts.transcript_ref)).concat(parts.messages);
    if (parts.fork_from) {
      // The child's system message, then the lead's completed turns, then what the child was given.
      const [system, ...rest] = parts.messages;
      const lead = forkMessages(await this.resolve(parts.fork_from));
      return system ? [system, ...lead, ...rest] : [...lead, ...rest];
    }
    return parts.messages;
  }

  /** Stores the transcript a call was sent; the reference covers all of it. */
  async storeSent(parts: TranscriptParts, all: ChatMessage[]): Promise<TranscriptRef> {
    // A fork's first call stores the composed transcript whole: from then on the child has its own prefix.
    if (parts.transcript_ref) return this.append(parts.transcript_ref, parts.messages, all);
    return this.append(undefined, all, all);
  }

  /** The blob under `key`, checked against its hash. */
  private async read(what: string, key: string): Promise<Uint8Array> {
    const bytes = await this.store.get(key);
    if (bytes === undefined) throw missingBlob(what, key, this.store);
    if (blobKey(bytes) !== key) throw alteredBlob(what, key, this.store);
    return bytes;
  }

  private remember(key: string, messages: ChatMessage[], chars: number): void {
    if (this.cache.has(key) || chars > CACHE_MAX_CHARS / 4) return;
    this.cache.set(key, { messages, chars });
    this.cachedChars += chars;
    for (const [oldest, entry] of this.cache) {
      if (this.cache.size <= CACHE_MAX_ENTRIES && this.cachedChars <= CACHE_MAX_CHARS) break;
      this.cache.delete(oldest);
      this.cachedChars -= entry.chars;
    }
  }

  private recall(key: string): ChatMessage[] | undefined {
    const entry = this.cache.get(key);
    if (!entry) return undefined;
    // Most recently used last: the oldest entries go first.
    this.cache.delete(key);
    this.cache.set(key, entry);
    return entry.messages;
  }
}

/**
 * Retryable: a worker whose local store lacks the blob may share its task queue with one that has it (the
 * retry can land there), and an object store may answer late. The message says what to fix.
 */
function missingBlob(what: string, key: string, store: BlobStore): ApplicationFailure {
  return ApplicationFailure.retryable(
    `${what} ${key} is missing from ${store.description}: every worker of a deployment must share ` +
      `one payload store (payloads.store: s3, or payloads.path on a shared disk), kept as long as the runs ` +
      `that refer to it`,
    TRANSCRIPT_MISSING_ERROR_TYPE,
  );
}

/**
 * Retryable, like the codec's check of a blob: an altered blob is refused, never used, and the call goes on
 * once the blob is restored (from a backup, or by the process that wrote it) instead of failing its agent.
 */
function alteredBlob(what: string, key: string, store: BlobStore): ApplicationFailure {
  return ApplicationFailure.retryable(
    `${what} ${key} in ${store.description} does not match its hash (tampered or corrupted): ` +
      'refusing to use it; the call is retried and goes on once it is restored',
    TRANSCRIPT_ALTERED_ERROR_TYPE,
  );
}

/** The system context (summary, ledger block) added to the first system message, for one call. */
export function withSystemContext(messages: ChatMessage[], context: string | undefined): ChatMessage[] {
  if (!context) return messages;
  const [first, ...rest] = messages;
  // One leading system message: strict providers refuse a second one.
  if (first?.role !== 'system') return [{ role: 'system', content: context }, ...messages];
  return [{ role: 'system', content: `${first.content}\n\n${context}` }, ...rest];
}
