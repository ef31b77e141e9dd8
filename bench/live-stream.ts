/**
 * The live stream's cost and latency on this machine (docs/live.md), `node dist/bench/live-stream.js`:
 * what one publish costs a worker on each bridge (the file bridge, and Redis when redis-server is installed),
 * and how long a piece takes from its publish to a reader that follows the run (the first-delta latency).
 */
import { performance } from 'node:perf_hooks';
import { DEFAULT_STREAM_BRIDGE_SETTINGS } from '../contracts/config/stream-bridge';
import type { StreamEvent } from '../contracts/stream';
import type { StreamBridge } from '../payloads/stream/bridge';
import { FileStreamBridge } from '../payloads/stream/file-bridge';
import { RedisStreamBridge } from '../payloads/stream/redis-bridge';
import { redisServerPath, startRedis } from '../test/support/redis';
import { tempDir } from '../test/support/subagent-input';
import { percentile } from './stats';

const PUBLISHES = 2000;
const LATENCY_SAMPLES = 200;

function piece(runId: string, n: number): StreamEvent {
  return {
    kind: 'text',
    run_id: runId,
    path: 'part0',
    workflow_id: `${runId}/task/part0`,
    agent: 'general-purpose',
    turn: 1,
    attempt: 1,
    at: new Date().toISOString(),
    text: `a few words of the answer, piece ${n} `,
  };
}

async function publishCost(bridge: StreamBridge, runId: string): Promise<number[]> {
  const ms: number[] = [];
  for (let n = 0; n < PUBLISHES; n++) {
    const started = performance.now();
    await bridge.publish(runId, [piece(runId, n)]);
    ms.push(performance.now() - started);
  }
  return ms;
}

/** From a publish to the reader's yield, one piece at a time, the reader following live. */
async function deliveryLatency(bridge: StreamBridge, runId: string): Promise<number[]> {
  const stop = new AbortController();
  const reader = bridge.read(runId, { signal: stop.signal })[Symbol.asyncIterator]();
  const ms: number[] = [];
  for (let n = 0; n < LATENCY_SAMPLES; n++) {
    const next = reader.next();
    const started = performance.now();
    await bridge.publish(runId, [piece(runId, n)]);
    await next;
    ms.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  stop.abort();
  await reader.return?.();
  return ms;
}

function line(label: string, ms: number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const f = (q: number) => percentile(sorted, q).toFixed(2);
  return `${label}: p50 ${f(50)} ms, p95 ${f(95)} ms, p99 ${f(99)} ms (${ms.length} samples)`;
}

async function measure(name: string, bridge: StreamBridge): Promise<void> {
  const runId = `bench-${name}-${Date.now()}`;
  console.log(line(`${name}: one publish`, await publishCost(bridge, runId)));
  console.log(line(`${name}: publish → live reader`, await deliveryLatency(bridge, `${runId}-live`)));
}

async function main(): Promise<void> {
  await measure('file', new FileStreamBridge(tempDir('bench-stream'), DEFAULT_STREAM_BRIDGE_SETTINGS));
  if (redisServerPath() === undefined) {
    console.log('redis: skipped (no redis-server)');
    return;
  }
  const redis = await startRedis();
  const bridge = new RedisStreamBridge(redis.url, DEFAULT_STREAM_BRIDGE_SETTINGS);
  try {
    await measure('redis', bridge);
  } finally {
    await bridge.close();
    await redis.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
