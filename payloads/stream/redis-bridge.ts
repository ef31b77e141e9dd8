/**
 * The stream bridge over Redis Streams, for workers and readers on several hosts (DeerFlow's
 * `stream_bridge: {type: redis}`): one stream per lead run (`subagents:stream:<run id>`), appended with XADD
 * under an approximate MAXLEN of `queue_maxsize` and an expiry refreshed on each publish; a reader takes the
 * backlog and then blocks in XREAD on a connection of its own. An entry's id is Redis's.
 */
import type { StreamBridgeSettings } from '../../contracts/config/stream-bridge';
import type { StreamEntry, StreamEvent } from '../../contracts/stream';
import type { StreamBridge, StreamReadOptions } from './bridge';
import { RespConnection, type RespValue } from './resp';

const KEY_PREFIX = 'subagents:stream:';
/** How long one XREAD blocks: the reader's end is seen within it. */
const BLOCK_MS = 1000;
const READ_COUNT = 500;

export class RedisStreamBridge implements StreamBridge {
  readonly description: string;
  #writer: RespConnection | undefined;

  constructor(
    private readonly url: string,
    private readonly settings: Pick<StreamBridgeSettings, 'queue_maxsize' | 'stream_ttl_seconds'>,
  ) {
    this.description = `Redis Streams at ${withoutPassword(url)}`;
  }

  async publish(runId: string, events: readonly StreamEvent[]): Promise<void> {
    if (events.length === 0) return;
    this.#writer ??= new RespConnection(this.url);
    const writer = this.#writer;
    const key = KEY_PREFIX + runId;
    const sent = events.map((event) =>
      writer.command([
        'XADD',
        key,
        'MAXLEN',
        '~',
        this.settings.queue_maxsize,
        '*',
        'e',
        JSON.stringify(event),
      ]),
    );
    if (this.settings.stream_ttl_seconds > 0)
      sent.push(writer.command(['EXPIRE', key, this.settings.stream_ttl_seconds]));
    try {
      await Promise.all(sent);
    } catch (err) {
      // A broken connection is opened again by the next publish.
      this.#writer = undefined;
      writer.close();
      throw err;
    }
  }

  async *read(runId: string, options: StreamReadOptions): AsyncIterable<StreamEntry> {
    const reader = new RespConnection(this.url);
    const stop = () => reader.close();
    options.signal.addEventListener('abort', stop, { once: true });
    let after = options.after ?? '0-0';
    try {
      while (!options.signal.aborted) {
        const reply = await reader
          .command(['XREAD', 'COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', KEY_PREFIX + runId, after])
          .catch((err: unknown) => {
            if (options.signal.aborted) return null;
            throw err;
          });
        for (const entry of entriesOf(reply)) {
          after = entry.id;
          yield entry;
        }
      }
    } finally {
      options.signal.removeEventListener('abort', stop);
      reader.close();
    }
  }

  close(): Promise<void> {
    this.#writer?.close();
    this.#writer = undefined;
    return Promise.resolve();
  }
}

/** XREAD's reply `[[key, [[id, [field, value, …]], …]]]` as entries (none for a timeout's null). */
function entriesOf(reply: RespValue): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  const out: StreamEntry[] = [];
  for (const stream of reply) {
    if (!Array.isArray(stream) || !Array.isArray(stream[1])) continue;
    for (const item of stream[1]) {
      if (!Array.isArray(item) || typeof item[0] !== 'string' || !Array.isArray(item[1])) continue;
      const fields = item[1];
      const at = fields.indexOf('e');
      const value = at >= 0 ? fields[at + 1] : undefined;
      if (typeof value !== 'string') continue;
      try {
        out.push({ id: item[0], event: JSON.parse(value) as StreamEvent });
      } catch {
        // A foreign entry in the key: skipped.
      }
    }
  }
  return out;
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
