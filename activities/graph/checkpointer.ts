/**
 * A LangGraph checkpointer whose checkpoints outlive the worker: LangGraph's in-memory saver, with every
 * checkpoint and pending write also written to the project's payload store (content-addressed blobs, the
 * same durable store every worker reads: a local folder or an S3 bucket) after each put. A small "head" blob
 * lists them; its key is what the activity heartbeats, so a retried attempt on any worker finds the last
 * completed super-step (and the finished tasks of an interrupted one) from Temporal itself.
 *
 * Why not heartbeat details alone: they are capped in size (a graph's state grows with its messages) and
 * every beat would carry the whole state. Why not the store alone: its keys are the blobs' hashes, so it has
 * no mutable "latest" entry; the heartbeat holds that pointer, and it belongs to this activity's attempts only.
 */
import { MemorySaver } from '@langchain/langgraph-checkpoint';
import type { Checkpoint, CheckpointMetadata, PendingWrite } from '@langchain/langgraph-checkpoint';
import type { RunnableConfig } from '@langchain/core/runnables';
import { blobKey, type BlobStore } from '../../payloads/store';

/** What the head blob lists: MemorySaver's own records, each value by its blob key. */
interface StoredHead {
  v: 1;
  /** [thread, namespace, checkpoint id, checkpoint blob, metadata blob, parent checkpoint id]. */
  checkpoints: [string, string, string, string, string, string | null][];
  /** [MemorySaver's outer key, inner key, task id, channel, value blob, task path]. */
  writes: [string, string, string, string, string, string][];
}

type StoredCheckpoint = [Uint8Array, Uint8Array, string | undefined];
type StoredWrite = [string, string, Uint8Array, string];

export class StoredCheckpointSaver extends MemorySaver {
  /** Blobs this process knows are stored: written once. */
  private readonly stored = new Set<string>();
  /** Each record's key, by its bytes (MemorySaver keeps a record's bytes as they are). */
  private readonly keys = new WeakMap<Uint8Array, string>();
  /** Persists run one after another, each writing the whole current state's head. */
  private persisting: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: BlobStore,
    /** Called with each new head's key once its blobs are stored. */
    private readonly onHead: (key: string) => void,
  ) {
    super();
  }

  /** Loads what a head (from a previous attempt's heartbeat) lists. */
  async restore(headKey: string): Promise<void> {
    const head = JSON.parse(new TextDecoder().decode(await this.blob(headKey))) as StoredHead;
    const storage = this.storage as Record<string, Record<string, Record<string, StoredCheckpoint>>>;
    const writes = this.writes as Record<string, Record<string, StoredWrite>>;
    await Promise.all([
      ...head.checkpoints.map(async ([thread, ns, id, checkpointKey, metadataKey, parent]) => {
        const [checkpoint, metadata] = await Promise.all([this.blob(checkpointKey), this.blob(metadataKey)]);
        ((storage[thread] ??= Object.create(null) as Record<string, Record<string, StoredCheckpoint>>)[ns] ??=
          Object.create(null) as Record<string, StoredCheckpoint>)[id] = [
          checkpoint,
          metadata,
          parent ?? undefined,
        ];
      }),
      ...head.writes.map(async ([outer, inner, taskId, channel, valueKey, taskPath]) => {
        (writes[outer] ??= Object.create(null) as Record<string, StoredWrite>)[inner] = [
          taskId,
          channel,
          await this.blob(valueKey),
          taskPath,
        ];
      }),
    ]);
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    const saved = await super.put(config, checkpoint, metadata);
    await this.persist();
    return saved;
  }

  override async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    await super.putWrites(config, writes, taskId, taskPath);
    await this.persist();
  }

  /** Writes the blobs not stored yet, then the head listing them all; resolves once the head is stored. */
  private persist(): Promise<void> {
    const next = this.persisting.then(() => this.persistNow());
    this.persisting = next.catch(() => undefined);
    return next;
  }

  private async persistNow(): Promise<void> {
    const head: StoredHead = { v: 1, checkpoints: [], writes: [] };
    const pending: Promise<string>[] = [];
    const storage = this.storage as Record<string, Record<string, Record<string, StoredCheckpoint>>>;
    for (const [thread, namespaces] of Object.entries(storage)) {
      for (const [ns, checkpoints] of Object.entries(namespaces)) {
        for (const [id, [checkpoint, metadata, parent]] of Object.entries(checkpoints)) {
          const keys = [this.put_(checkpoint), this.put_(metadata)];
          pending.push(...keys);
          const [checkpointKey, metadataKey] = await Promise.all(keys);
          head.checkpoints.push([thread, ns, id, checkpointKey, metadataKey, parent ?? null]);
        }
      }
    }
    const writes = this.writes as Record<string, Record<string, StoredWrite>>;
    for (const [outer, inner] of Object.entries(writes)) {
      for (const [innerKey, [taskId, channel, value, taskPath]] of Object.entries(inner)) {
        const key = this.put_(value);
        pending.push(key);
        head.writes.push([outer, innerKey, taskId, channel, await key, taskPath ?? '']);
      }
    }
    await Promise.all(pending);
    this.onHead(await this.put_(new TextEncoder().encode(JSON.stringify(head))));
  }

  /** Stores `bytes` (once) and gives their key. */
  private async put_(bytes: Uint8Array): Promise<string> {
    // Every persist lists every record: each is hashed once, not at every super-step.
    let key = this.keys.get(bytes);
    if (key === undefined) {
      key = blobKey(bytes);
      this.keys.set(bytes, key);
    }
    if (!this.stored.has(key)) {
      await this.store.put(key, bytes);
      this.stored.add(key);
    }
    return key;
  }

  private async blob(key: string): Promise<Uint8Array> {
    const bytes = await this.store.get(key);
    if (bytes === undefined) {
      throw new Error(
        `graph checkpoint blob ${key} is missing from the payload store (${this.store.description})`,
      );
    }
    this.stored.add(key);
    return bytes;
  }
}
