/**
 * `npm run bench:batch`: one durable batch of N items (default 5,000), each a subagent whose scripted model
 * answers at once, on one worker process and the dev server on a SQLite file on disk. Prints the wall time,
 * items/s, the peak RSS and CPU of the worker and the server, and the batch workflow's own history: its
 * executions (continue-as-new), the longest one in events, and its events and bytes in all.
 *
 * Flags: --items 5000 · --running 20 (max_running_items, and the worker's subagent_runtime.max_running) ·
 * --live 40 (max_live_items) · --json. TEMPORAL_ADDRESS uses a running server instead (server figures are
 * then not measured).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { BatchesClient, buildBatchInput } from '../client/batches';
import { parseConfig } from '../contracts/config';
import { projectDataConverter } from '../payloads/data-converter';
import { connectOrStartServer } from '../devserver/temporal-server';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { PeakRss, sampleProcess } from './support/process-sample';
import { tempDir, writeScript } from '../test/support/subagent-input';

const MIB = 2 ** 20;
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

function options(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      items: { type: 'string', default: '5000' },
      running: { type: 'string', default: '20' },
      live: { type: 'string', default: '40' },
      json: { type: 'boolean', default: false },
    },
  });
  const whole = (name: string, text: string) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`--${name} takes a whole number above 0 (got ${text})`);
    return n;
  };
  return {
    items: whole('items', values.items),
    running: whole('running', values.running),
    live: whole('live', values.live),
    json: values.json,
  };
}

async function main(): Promise<void> {
  const opts = options(process.argv.slice(2));
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = tempDir('bench-batch');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const [server, bundle] = await Promise.all([
    connectOrStartServer({ headless: true, dbFilename: join(dir, 'temporal.db'), log }),
    bundleProjectWorkflows(),
  ]);
  const bundlePath = join(dir, 'workflows.js');
  writeFileSync(bundlePath, bundle);
  const workerConfig = join(dir, 'worker.yaml');
  writeFileSync(
    workerConfig,
    `subagent_runtime:\n  max_running: ${opts.running}\n  max_queued: ${opts.live}\n`,
  );
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const script = writeScript(dir, {
    scripts: [{ agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Checked.' }] }],
  });
  const { config } = parseConfig({
    models: [{ name: 'scripted', provider: 'scripted', model: 'test', script_file: script }],
  });
  const input = buildBatchInput(config, {
    description: 'Check each item',
    subagent_type: 'general-purpose',
    items: Array.from({ length: opts.items }, (_, i) => ({ key: `item-${i}`, prompt: `Check item ${i}.` })),
    workspace,
    limits: { max_running_items: opts.running, max_live_items: opts.live },
  });
  const taskQueue = `bench-batch-${Date.now()}`;
  const worker = await spawnWorkerProcess({
    address: server.address,
    namespace: server.namespace,
    taskQueue,
    bundlePath,
    env: { SUBAGENTS_CONFIG: workerConfig },
  });
  const connection = await Connection.connect({ address: server.address });
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const workerPeak = new PeakRss(() => [worker.pid]);
    const serverPeak = new PeakRss(() => [server.pid]);
    const workerBefore = sampleProcess(worker.pid);
    const serverBefore = sampleProcess(server.pid);
    const started = performance.now();
    const batch = await new BatchesClient(client).start(input, { taskQueue });
    const progress = setInterval(() => {
      void batch.status({ limit: 0 }).then(
        (status) =>
          log(
            `${Math.round((performance.now() - started) / 1000)} s: ${status.counts.completed} completed, ` +
              `${status.counts.running} running, ${status.counts.waiting} waiting, ${status.counts.failed} failed`,
          ),
        () => undefined,
      );
    }, 10_000);
    const result = await batch.result();
    clearInterval(progress);
    const wall = (performance.now() - started) / 1000;
    const workerAfter = sampleProcess(worker.pid);
    const serverAfter = sampleProcess(server.pid);
    const executions: { events: number; bytes: number }[] = [];
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${batch.batchId}'` })) {
      executions.push({ events: execution.historyLength, bytes: execution.historySize ?? 0 });
    }
    const figures = {
      items: opts.items,
      max_running_items: opts.running,
      max_live_items: opts.live,
      status: result.status,
      completed: result.counts.completed,
      failed: result.counts.failed,
      wall_s: round(wall, 1),
      items_per_s: round(opts.items / wall),
      worker_rss_peak_mib: round(workerPeak.stop() / MIB, 0),
      server_rss_peak_mib: round(serverPeak.stop() / MIB, 0),
      worker_cpu_ms_per_item: round(
        ((workerAfter.cpuSeconds - workerBefore.cpuSeconds) * 1000) / opts.items,
        1,
      ),
      server_cpu_ms_per_item: round(
        ((serverAfter.cpuSeconds - serverBefore.cpuSeconds) * 1000) / opts.items,
        1,
      ),
      batch_executions: executions.length,
      batch_longest_execution_events: Math.max(...executions.map((e) => e.events)),
      batch_events: executions.reduce((sum, e) => sum + e.events, 0),
      batch_history_kib: round(executions.reduce((sum, e) => sum + e.bytes, 0) / 1024, 0),
    };
    process.stdout.write(
      opts.json ? `${JSON.stringify(figures, null, 2)}\n` : `${JSON.stringify(figures)}\n`,
    );
  } finally {
    await new Promise<void>((resolve) => {
      if (worker.exitCode !== null || worker.signalCode !== null) return resolve();
      worker.once('exit', () => resolve());
      worker.kill('SIGTERM');
    });
    await connection.close();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
