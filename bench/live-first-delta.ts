/**
 * The live stream end to end (docs/live.md, issue 49): from the moment the model provider sends an answer's
 * first piece to the moment an SSE client of `subagents serve` has it. The provider is the fake OpenAI-compatible
 * endpoint, which stamps each part as it hands it to the network; a worker process of its own streams the
 * lead's answer through the stream bridge; the live server and its SSE client read it here, on the same clock
 * as the stamps. Once with the file bridge (one machine), once with Redis (when redis-server is installed).
 *
 *   node dist/bench/live-first-delta.js     (LIVE_RUNS=N runs per bridge, default 30)
 */
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client, Connection } from '@temporalio/client';
import { SubagentsClient } from '../client/api';
import { startLiveServer } from '../client/live-server';
import { DEFAULT_STREAM_BRIDGE_SETTINGS } from '../contracts/config/stream-bridge';
import type { TemporalServer } from '../devserver/temporal-server';
import { projectDataConverter } from '../payloads/data-converter';
import { STREAM_DIR_ENV, type StreamBridge } from '../payloads/stream/bridge';
import { FileStreamBridge } from '../payloads/stream/file-bridge';
import { RedisStreamBridge } from '../payloads/stream/redis-bridge';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { FakeOpenAI } from '../test/support/fake-openai';
import { readSse } from '../test/support/live-stream';
import { redisServerPath, startRedis } from '../test/support/redis';
import { leadInput, tempDir } from '../test/support/subagent-input';
import { percentile } from './stats';
import { withBenchServer } from './support/bench-server';

const RUNS = Number(process.env.LIVE_RUNS ?? 30);
/** Runs not counted: the worker's first calls (its provider client, the bridge's first write). */
const WARM_UP_RUNS = 2;
/** The answer, streamed word by word as a provider does (a chunk each CHUNK_MS). */
const WORDS = 'and then the rest of the answer follows in a few more words'.split(' ');
const CHUNK_MS = 20;

interface Bridge {
  name: string;
  /** The reader's bridge (the live server's). */
  bridge: StreamBridge;
  /** What the worker process needs to publish to the same bridge. */
  workerEnv: Record<string, string>;
  close(): Promise<void>;
}

/** The first part of each answer, by its run's marker: when the provider handed it to the network. */
class SendStamps {
  readonly #sent = new Map<string, number>();
  #waiters = new Map<string, () => void>();

  record(part: string | Buffer, at: number): void {
    const marker = /\bmarker-\d+/.exec(part.toString())?.[0];
    if (marker === undefined || this.#sent.has(marker)) return;
    this.#sent.set(marker, at);
    this.#waiters.get(marker)?.();
  }

  async of(marker: string): Promise<number> {
    const at = this.#sent.get(marker);
    if (at !== undefined) return at;
    await new Promise<void>((resolve) => this.#waiters.set(marker, resolve));
    return this.#sent.get(marker) ?? Number.NaN;
  }
}

async function measure(
  server: TemporalServer,
  bundlePath: string,
  subject: Bridge,
): Promise<{ name: string; ms: number[] }> {
  const stamps = new SendStamps();
  const fake = await FakeOpenAI.start({
    respond: (_body, _index, view) => {
      const marker = /marker-\d+/.exec(view.last_user_text)?.[0] ?? 'marker-0';
      return {
        content: `${marker} ${WORDS.join(' ')}`,
        chunk_delay_ms: CHUNK_MS,
        usage: { input_tokens: 10, output_tokens: WORDS.length + 1 },
      };
    },
    sent: (_index, part, at) => stamps.record(part, at),
  });
  const taskQueue = `live-first-delta-${subject.name}-${Date.now()}`;
  const worker = await spawnWorkerProcess({
    address: server.address,
    namespace: server.namespace,
    taskQueue,
    bundlePath,
    env: subject.workerEnv,
  });
  const connection = await Connection.connect({ address: server.address });
  const client = new SubagentsClient(
    new Client({ connection, namespace: server.namespace, dataConverter: projectDataConverter() }),
    server.namespace,
  );
  const live = await startLiveServer({ client, bridge: subject.bridge, pollMs: 200 });
  const ms: number[] = [];
  try {
    for (let k = 0; k < RUNS + WARM_UP_RUNS; k++) {
      const marker = `marker-${k}`;
      const input = leadInput({
        workspace: tempDir('live-first-delta-ws'),
        prompt: `Answer with ${marker}.`,
        config: fake.modelsConfig(),
      });
      const run = await client.startRun(input, { taskQueue });
      let receivedAt = Number.NaN;
      // The client is there before the provider sends anything: it gets the first piece live.
      await readSse(`${live.url}/runs/${encodeURIComponent(run.runId)}/stream`, {
        onEvent: (event) => {
          if (Number.isNaN(receivedAt) && event.kind === 'text' && event.path === '')
            receivedAt = performance.timeOrigin + performance.now();
        },
      });
      const sentAt = await stamps.of(marker);
      if (k >= WARM_UP_RUNS) ms.push(receivedAt - sentAt);
    }
  } finally {
    await live.close();
    await connection.close();
    worker.kill('SIGTERM');
    if (worker.exitCode === null) await once(worker, 'exit');
    await fake.close();
  }
  return { name: subject.name, ms };
}

function fileBridge(): Bridge {
  const dir = tempDir('live-first-delta-streams');
  return {
    name: 'file',
    bridge: new FileStreamBridge(dir, DEFAULT_STREAM_BRIDGE_SETTINGS),
    workerEnv: { [STREAM_DIR_ENV]: dir, SUBAGENTS_CONFIG: '' },
    close: async () => undefined,
  };
}

async function redisBridge(): Promise<Bridge> {
  const redis = await startRedis();
  const config = join(tempDir('live-first-delta-config'), 'config.yaml');
  writeFileSync(config, `stream_bridge:\n  type: redis\n  redis_url: ${redis.url}\n`);
  const bridge = new RedisStreamBridge(redis.url, DEFAULT_STREAM_BRIDGE_SETTINGS);
  return {
    name: 'redis',
    bridge,
    workerEnv: { SUBAGENTS_CONFIG: config },
    close: async () => {
      await bridge.close();
      await redis.stop();
    },
  };
}

function line({ name, ms }: { name: string; ms: number[] }): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const f = (q: number) => percentile(sorted, q).toFixed(1);
  return `${name}: provider sent → SSE client has it: p50 ${f(50)} ms, p95 ${f(95)} ms, max ${f(100)} ms (${ms.length} runs)`;
}

async function bench(server: TemporalServer): Promise<void> {
  const bundlePath = join(tempDir('live-first-delta-bundle'), 'workflow-bundle.js');
  writeFileSync(bundlePath, await bundleProjectWorkflows());
  const subjects: Array<() => Promise<Bridge>> = [async () => fileBridge()];
  if (redisServerPath() !== undefined) subjects.push(redisBridge);
  else console.log('redis: skipped (no redis-server)');
  for (const open of subjects) {
    const subject = await open();
    try {
      console.log(line(await measure(server, bundlePath, subject)));
    } catch (err) {
      console.error(`${subject.name}:`, err);
      process.exitCode = 1;
    } finally {
      await subject.close();
    }
  }
}

// The native runtime's handles outlive the server: exit once the figures are out.
withBenchServer(bench).then(
  () => process.exit(),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
