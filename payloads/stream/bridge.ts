/**
 * The stream bridge: where the tree's live stream goes beside history (docs/live.md). One per process, as the
 * payload store is: the worker or command bootstrap calls `configureStreamBridge(config.stream_bridge)` once;
 * until then the defaults hold (the one-machine file bridge under the cache folder).
 */
import { join, resolve } from 'node:path';
import {
  DEFAULT_STREAM_BRIDGE_SETTINGS,
  type StreamBridgeSettings,
} from '../../contracts/config/stream-bridge';
import type { StreamEntry, StreamEvent } from '../../contracts/stream';
import { cacheRoot } from '../cache-root';
import { FileStreamBridge } from './file-bridge';
import { RedisStreamBridge } from './redis-bridge';

export interface StreamReadOptions {
  /** Resume after this entry's id; absent: from the oldest entry kept (the backlog), then live. */
  after?: string;
  /** Ends the reading (the iterator returns). */
  signal: AbortSignal;
}

export interface StreamBridge {
  /** What it is, for a start line: `files in /home/…/streams`, `Redis at redis://…`. */
  readonly description: string;
  /** Appends `events` to the run's stream, in order. Rejects when the backend cannot take them. */
  publish(runId: string, events: readonly StreamEvent[]): Promise<void>;
  /** The run's entries after `options.after` (the backlog first), then each new one as it comes. */
  read(runId: string, options: StreamReadOptions): AsyncIterable<StreamEntry>;
  close(): Promise<void>;
}

/** Where the file bridge keeps its run files: SUBAGENTS_STREAM_DIR, else `stream_bridge.path`, else the cache's. */
export const STREAM_DIR_ENV = 'SUBAGENTS_STREAM_DIR';

export function streamDir(settings: StreamBridgeSettings, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[STREAM_DIR_ENV];
  if (fromEnv) return resolve(fromEnv);
  return settings.path ?? join(cacheRoot(env), 'streams');
}

/** A bridge over `settings`. */
export function openStreamBridge(
  settings: StreamBridgeSettings,
  env: NodeJS.ProcessEnv = process.env,
): StreamBridge {
  if (settings.type === 'redis') {
    if (settings.redis_url === undefined)
      throw new Error('stream_bridge.redis_url is missing (type: redis needs redis://host:port)');
    return new RedisStreamBridge(settings.redis_url, settings);
  }
  return new FileStreamBridge(streamDir(settings, env), settings);
}

let processSettings: StreamBridgeSettings = DEFAULT_STREAM_BRIDGE_SETTINGS;
let processBridge: StreamBridge | undefined;

/** Sets this process's stream bridge settings (the bridge opens on first use). */
export function configureStreamBridge(settings: StreamBridgeSettings): void {
  if (processBridge !== undefined) void processBridge.close().catch(() => undefined);
  processSettings = settings;
  processBridge = undefined;
}

/** This process's stream bridge: what `configureStreamBridge` set, else the one-machine default. */
export function processStreamBridge(): StreamBridge {
  processBridge ??= openStreamBridge(processSettings);
  return processBridge;
}

/** Closes this process's bridge if one was opened: a stopping worker's Redis connection ends with it. */
export async function closeProcessStreamBridge(): Promise<void> {
  const bridge = processBridge;
  processBridge = undefined;
  await bridge?.close();
}
