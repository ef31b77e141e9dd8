/**
 * A worker process's start: from its spawn (`node dist/worker/worker-main.js`) to its `worker ready` line, which
 * it prints once it polls. Two ways, a few samples each, one after the other:
 *   - with the workflow bundle `npm run build` made (what every worker loads while it matches the code);
 *   - bundling the workflows at start, as every worker did before the build made one: the build's manifest is
 *     moved aside for these samples (put back after, whatever happens), so the worker finds no bundle to trust.
 * Each worker is stopped (SIGTERM) before the next starts. Run alone: `node dist/bench/worker-start.js`
 * (WORKER_START_SAMPLES, default 3).
 */
import { once } from 'node:events';
import { existsSync, renameSync } from 'node:fs';
import type { TemporalServer } from '../devserver/temporal-server';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { BUILT_BUNDLE_MANIFEST_PATH, builtWorkflowBundle } from '../worker/workflow-bundle';
import { withBenchServer } from './support/bench-server';
import { formatTable, percentile, type BenchResult } from './stats';

const SAMPLES = Number(process.env.WORKER_START_SAMPLES ?? 3);
const BUNDLING_AT_START = /not using the built workflow bundle/;

/** One worker process: ms from spawn to `worker ready`; whether it said it bundled the workflows itself. */
async function startOnce(
  server: TemporalServer,
  taskQueue: string,
): Promise<{ ms: number; bundled: boolean }> {
  let log = '';
  const started = performance.now();
  const child = await spawnWorkerProcess({
    address: server.address,
    namespace: server.namespace,
    taskQueue,
    logLevel: 'ERROR',
    onLog: (text) => (log += text),
  });
  const ms = performance.now() - started;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
  return { ms, bundled: BUNDLING_AT_START.test(log) };
}

async function samples(server: TemporalServer, taskQueue: string, bundles: boolean, label: string) {
  const values: number[] = [];
  for (let n = 0; n < SAMPLES; n++) {
    const { ms, bundled } = await startOnce(server, taskQueue);
    if (bundled !== bundles) {
      throw new Error(
        `worker start (${label}): the worker ${bundled ? 'bundled' : 'did not bundle'} the workflows`,
      );
    }
    values.push(ms / 1000);
    process.stderr.write(
      `worker start (${label}) ${n + 1}/${SAMPLES}: ready after ${(ms / 1000).toFixed(1)} s\n`,
    );
  }
  return values;
}

export async function benchWorkerStart(server: TemporalServer): Promise<BenchResult[]> {
  const built = builtWorkflowBundle();
  if (!built.ok) throw new Error(`worker start: run \`npm run build\` first (${built.reason})`);
  const taskQueue = `bench-worker-start-${Date.now()}`;
  const row = (name: string, values: number[]): BenchResult => ({
    name,
    unit: 's',
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    samples: values.length,
  });
  const withBuilt = await samples(server, taskQueue, false, "the build's bundle");
  const aside = `${BUILT_BUNDLE_MANIFEST_PATH}.bench-aside`;
  renameSync(BUILT_BUNDLE_MANIFEST_PATH, aside);
  let bundling: number[];
  try {
    bundling = await samples(server, taskQueue, true, 'bundling at start');
  } finally {
    if (existsSync(aside)) renameSync(aside, BUILT_BUNDLE_MANIFEST_PATH);
  }
  return [
    row("worker process start → polling, with the build's workflow bundle", withBuilt),
    row('worker process start → polling, bundling the workflows at start', bundling),
  ];
}

if (require.main === module) {
  withBenchServer(async (server) =>
    process.stdout.write(`${formatTable(await benchWorkerStart(server))}\n`),
  ).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
