/**
 * The `stream_bridge:` section, as DeerFlow writes it: where the tree's live stream goes (docs/live.md).
 * `memory` (the default) is one machine's: an append-only file per lead run under the cache folder, which the
 * workers of this machine write and `subagents serve` on this machine reads. `redis` is Redis Streams, for
 * workers and readers on several hosts. Pure: no Node APIs.
 */
import { z } from 'zod';
import { oneOf, section, seconds, text, wholeNumber } from './fields';

export const STREAM_BRIDGE_TYPES = ['memory', 'redis'] as const;
export type StreamBridgeType = (typeof STREAM_BRIDGE_TYPES)[number];

/**
 * Events kept per lead run. DeerFlow's default is 256 events of whole messages; ours are deltas (a few words
 * each, coalesced every 50 ms), so a late reader's backlog needs more of them to show a turn's whole text.
 */
export const DEFAULT_STREAM_QUEUE_MAXSIZE = 10_000;
export const DEFAULT_STREAM_TTL_SECONDS = 86_400;

export const streamBridgeSection = section('stream_bridge', {
  type: oneOf(STREAM_BRIDGE_TYPES).default('memory'),
  /** redis: `redis://[user:password@]host:port[/db]`. */
  redis_url: text.optional(),
  /** Events retained per run: Redis's MAXLEN; the file keeps a run's last this many when it is compacted. */
  queue_maxsize: wholeNumber(1).default(DEFAULT_STREAM_QUEUE_MAXSIZE),
  /** A run's stream is dropped this long after its last event (0: kept). */
  stream_ttl_seconds: wholeNumber(0).default(DEFAULT_STREAM_TTL_SECONDS),
  /** DeerFlow's gateway setting for orphaned runs; read and unused here (a run's end is its workflow's). */
  recovered_stream_cleanup_delay_seconds: seconds.optional(),
  /** DeerFlow's connection pool ceiling; here each process holds one connection for writes, one per reader. */
  max_connections: wholeNumber(1).optional(),
  /** memory: the folder of the run files (default `<cache>/streams`; SUBAGENTS_STREAM_DIR wins). */
  path: text.optional(),
});

export type StreamBridgeSettings = z.output<typeof streamBridgeSection>;

export const DEFAULT_STREAM_BRIDGE_SETTINGS: StreamBridgeSettings = {
  type: 'memory',
  queue_maxsize: DEFAULT_STREAM_QUEUE_MAXSIZE,
  stream_ttl_seconds: DEFAULT_STREAM_TTL_SECONDS,
};
