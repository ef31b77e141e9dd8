/**
 * `npm run bench:load`: many lead runs at once on one machine. Each run is the workload of issue 13: a lead
 * that delegates three subagents in one response, each subagent making one tool call (`read_file`) and then
 * answering, and the lead answering from their reports; the model is the scripted one (no waiting on a
 * provider), so what is measured is the system: Temporal's server, the worker and the project's workflows.
 *
 * For each level N (default 10, 50, 200): N runs are started at once through the client API (as `subagents
 * run` starts one), on a fresh task queue served by worker processes of their own (`worker-main`, as
 * `subagents worker`), and awaited. Printed per level:
 *   - runs/s and delegations/s (N and 3N over the wall time from the first start to the last result);
 *   - latency p50/p95 (a run's start request to its result);
 *   - peak RSS of the worker(s) and of the server, and their CPU seconds per run;
 *   - bytes the server wrote to disk per run (/proc/<pid>/io: the SQLite file and its journal);
 *   - history events and bytes per run: every execution on the level's task queue (leads, subagents, the
 *     admission workflow), from visibility, over N.
 *
 * Flags: --runs 10,50,200 · --workers 1 · --pragma name=value (repeatable; the dev server's SQLite pragmas)
 * · --dynamic key=json (repeatable; a dev server dynamic config value beyond the project's own)
 * · --memory (SQLite in memory instead of a file on disk) · --postgres (a Temporal server on PostgreSQL,
 * devserver/temporal-postgres.ts: a throwaway cluster, Temporal's own server built with Go on first use) · --label
 * text (names the configuration in the output) · --json (one JSON object on stdout). TEMPORAL_ADDRESS uses a
 * running server instead. Server RSS, CPU and writes are measured for the dev server only.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { parseArgs } from 'node:util';
import { SubagentsClient } from '../client/api';
import type { LeadRunInput } from '../contracts/lead';
import type { ModelScriptFileInput } from '../activities/model/model-script';
import { projectDataConverter } from '../payloads/data-converter';
import { startPostgresServer } from '../devserver/temporal-postgres';
import {
  connectOrStartServer,
  DEV_SERVER_SQLITE_PRAGMAS,
  type TemporalServer,
} from '../devserver/temporal-server';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { leadInput, partTaskCalls, tempDir, writeScript } from '../test/support/subagent-input';
import { percentile } from './stats';
import { PeakRss, sampleProcess } from './support/process-sample';
import { DefaultLogger, Runtime } from '@temporalio/worker';

const CHILDREN = 3;

/** The lead delegates three parts at once; each subagent reads one file, then answers. */
function loadScript(): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          {
            tool_calls: partTaskCalls(CHILDREN, (i) => `Read notes.md and report part ${i}.`),
            usage: { input_tokens: 900, output_tokens: 120 },
          },
          { content: 'Combined: {{tool_result}}', usage: { input_tokens: 1400, output_tokens: 80 } },
        ],
      },
      {
        agent: 'general-purpose',
        turns: [
          {
            tool_calls: [{ name: 'read_file', id: 'notes', args: { path: 'notes.md' } }],
            usage: { input_tokens: 500, output_tokens: 30 },
          },
          { content: 'Part done: {{tool_result:notes}}', usage: { input_tokens: 700, output_tokens: 40 } },
        ],
      },
    ],
  };
}

/** One input shared by every run of the benchmark (each run gets its own id and reads the same workspace). */
function loadInput(): LeadRunInput {
  const dir = tempDir('bench-load');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'notes.md'), 'Three suppliers, two warehouses, one open incident.\n');
  return leadInput({ workspace, scriptFile: writeScript(dir, loadScript()), prompt: 'Review the notes.' });
}

export interface LoadLevel {
  runs: number;
  wall_s: number;
  runs_per_s: number;
  delegations_per_s: number;
  latency_p50_s: number;
  latency_p95_s: number;
  failed_runs: number;
  worker_rss_peak_mib: number;
  worker_rss_idle_mib: number;
  server_rss_peak_mib: number;
  worker_cpu_s_per_run: number;
  server_cpu_s_per_run: number;
  /** This benchmark's own process: starting the runs and awaiting their results, as clients do. */
  client_cpu_s_per_run: number;
  server_written_kib_per_run: number;
  history_events_per_run: number;
  history_kib_per_run: number;
  executions_per_run: number;
}

const MIB = 2 ** 20;
const round = (value: number, digits = 2) => Number(value.toFixed(digits));

/** Every execution on a task queue, from visibility: how many, their events and bytes. */
async function historyTotals(
  client: Client,
  taskQueue: string,
): Promise<{ executions: number; events: number; bytes: number }> {
  const totals = { executions: 0, events: 0, bytes: 0 };
  for await (const info of client.workflow.list({ query: `TaskQueue = "${taskQueue}"` })) {
    totals.executions += 1;
    totals.events += info.historyLength;
    totals.bytes += info.historySize ?? 0;
  }
  return totals;
}

/** Events by type in one lead run and one of its subagents (what a run's history is made of). */
async function eventBreakdown(
  client: Client,
  runId: string,
): Promise<Record<string, Record<string, number>>> {
  const count = (history: temporal.api.history.v1.IHistory) => {
    const byType: Record<string, number> = {};
    for (const event of history.events ?? []) {
      const name = temporal.api.enums.v1.EventType[event.eventType ?? 0].replace(/^EVENT_TYPE_/, '');
      byType[name] = (byType[name] ?? 0) + 1;
    }
    return byType;
  };
  const lead = await client.workflow.getHandle(runId).fetchHistory();
  const childId = lead.events?.find((e) => e.startChildWorkflowExecutionInitiatedEventAttributes)
    ?.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId;
  const out: Record<string, Record<string, number>> = { lead: count(lead) };
  if (childId) out.subagent = count(await client.workflow.getHandle(childId).fetchHistory());
  return out;
}

interface Options {
  levels: number[];
  workers: number;
  pragmas: Record<string, string>;
  dynamicConfig: Record<string, unknown>;
  memory: boolean;
  postgres: boolean;
  label: string;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '10,50,200' },
      workers: { type: 'string', default: '1' },
      pragma: { type: 'string', multiple: true, default: [] },
      dynamic: { type: 'string', multiple: true, default: [] },
      memory: { type: 'boolean', default: false },
      postgres: { type: 'boolean', default: false },
      label: { type: 'string', default: 'current' },
      json: { type: 'boolean', default: false },
    },
  });
  const levels = values.runs.split(',').map((text) => Number(text.trim()));
  if (levels.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(
      `--runs takes whole numbers above 0, comma-separated (got ${JSON.stringify(values.runs)})`,
    );
  }
  const workers = Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1) throw new Error('--workers takes a whole number above 0');
  const pragmas: Record<string, string> = {};
  for (const entry of values.pragma) {
    const [name, value] = entry.split('=');
    if (!name || value === undefined)
      throw new Error(`--pragma takes name=value (got ${JSON.stringify(entry)})`);
    pragmas[name] = value;
  }
  const dynamicConfig: Record<string, unknown> = {};
  for (const entry of values.dynamic) {
    const at = entry.indexOf('=');
    if (at < 1) throw new Error(`--dynamic takes key=json (got ${JSON.stringify(entry)})`);
    dynamicConfig[entry.slice(0, at)] = JSON.parse(entry.slice(at + 1)) as unknown;
  }
  return {
    levels,
    workers,
    pragmas,
    dynamicConfig,
    memory: values.memory,
    postgres: values.postgres,
    label: values.label,
    json: values.json,
  };
}

async function runLevel(
  server: TemporalServer,
  client: Client,
  bundlePath: string,
  workerConfig: string,
  options: Options,
  runs: number,
  input: LeadRunInput,
): Promise<LoadLevel & { events_by_type: Record<string, Record<string, number>> }> {
  const taskQueue = `bench-load-${runs}-${Date.now()}`;
  const workers: ChildProcess[] = await Promise.all(
    Array.from({ length: options.workers }, () =>
      spawnWorkerProcess({
        address: server.address,
        namespace: server.namespace,
        taskQueue,
        bundlePath,
        env: { SUBAGENTS_CONFIG: workerConfig },
      }),
    ),
  );
  try {
    const workerPids = () => workers.map((worker) => worker.pid);
    // Idle: the workers poll and nothing runs yet.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const workerIdle = workerPids().reduce<number>((sum, pid) => sum + sampleProcess(pid).rssBytes, 0);
    const workerPeak = new PeakRss(workerPids);
    const serverPeak = new PeakRss(() => [server.pid]);
    const workersBefore = workerPids().map(sampleProcess);
    const serverBefore = sampleProcess(server.pid);
    const clientBefore = process.cpuUsage();
    const api = new SubagentsClient(client, server.namespace);
    const started = performance.now();
    const latencies: number[] = [];
    let failed = 0;
    const prefix = `load-${runs}-${Date.now()}`;
    await Promise.all(
      Array.from({ length: runs }, async (_, i) => {
        const begun = performance.now();
        const handle = await api.startRun(input, { taskQueue, runId: `${prefix}-${i}` });
        const result = await handle.result();
        latencies.push((performance.now() - begun) / 1000);
        if (result.status !== 'completed') failed += 1;
      }),
    );
    const wall = (performance.now() - started) / 1000;
    const workersAfter = workerPids().map(sampleProcess);
    const serverAfter = sampleProcess(server.pid);
    const clientCpu = process.cpuUsage(clientBefore);
    const workerRss = workerPeak.stop();
    const serverRss = serverPeak.stop();
    const workerCpu = workersAfter.reduce(
      (sum, after, i) => sum + after.cpuSeconds - workersBefore[i].cpuSeconds,
      0,
    );
    // Visibility is written after the executions close: give it a moment.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const totals = await historyTotals(client, taskQueue);
    return {
      runs,
      wall_s: round(wall),
      runs_per_s: round(runs / wall),
      delegations_per_s: round((CHILDREN * runs) / wall),
      latency_p50_s: round(percentile(latencies, 50)),
      latency_p95_s: round(percentile(latencies, 95)),
      failed_runs: failed,
      worker_rss_peak_mib: round(workerRss / MIB, 0),
      worker_rss_idle_mib: round(workerIdle / MIB, 0),
      server_rss_peak_mib: round(serverRss / MIB, 0),
      worker_cpu_s_per_run: round(workerCpu / runs, 3),
      server_cpu_s_per_run: round((serverAfter.cpuSeconds - serverBefore.cpuSeconds) / runs, 3),
      client_cpu_s_per_run: round((clientCpu.user + clientCpu.system) / 1e6 / runs, 3),
      server_written_kib_per_run: round((serverAfter.writeBytes - serverBefore.writeBytes) / 1024 / runs, 0),
      history_events_per_run: round(totals.events / runs, 1),
      history_kib_per_run: round(totals.bytes / 1024 / runs, 1),
      executions_per_run: round(totals.executions / runs, 2),
      events_by_type: await eventBreakdown(client, `${prefix}-0`),
    };
  } finally {
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.exitCode !== null || worker.signalCode !== null) return resolve();
            worker.once('exit', () => resolve());
            worker.kill('SIGTERM');
          }),
      ),
    );
  }
}

function formatLevels(levels: readonly LoadLevel[]): string {
  const columns: [string, (level: LoadLevel) => string][] = [
    ['runs', (l) => String(l.runs)],
    ['runs/s', (l) => l.runs_per_s.toFixed(2)],
    ['deleg/s', (l) => l.delegations_per_s.toFixed(1)],
    ['p50 s', (l) => l.latency_p50_s.toFixed(1)],
    ['p95 s', (l) => l.latency_p95_s.toFixed(1)],
    ['failed', (l) => String(l.failed_runs)],
    ['worker MiB', (l) => `${l.worker_rss_idle_mib}→${l.worker_rss_peak_mib}`],
    ['server MiB', (l) => String(l.server_rss_peak_mib)],
    ['worker cpu/run', (l) => `${(l.worker_cpu_s_per_run * 1000).toFixed(0)} ms`],
    ['server cpu/run', (l) => `${(l.server_cpu_s_per_run * 1000).toFixed(0)} ms`],
    ['client cpu/run', (l) => `${(l.client_cpu_s_per_run * 1000).toFixed(0)} ms`],
    ['written/run', (l) => `${l.server_written_kib_per_run} KiB`],
    ['events/run', (l) => String(l.history_events_per_run)],
    ['history/run', (l) => `${l.history_kib_per_run} KiB`],
  ];
  const rows = levels.map((level) => columns.map(([, cell]) => cell(level)));
  const header = columns.map(([name]) => name);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = tempDir('bench-load-server');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const [server, bundle] = await Promise.all([
    options.postgres
      ? startPostgresServer({ log })
      : connectOrStartServer({
          headless: true,
          dbFilename: options.memory ? undefined : join(dir, 'temporal.db'),
          // None given: the dev server's own (DEV_SERVER_SQLITE_PRAGMAS).
          ...(Object.keys(options.pragmas).length > 0 && { sqlitePragmas: options.pragmas }),
          dynamicConfig: options.dynamicConfig,
          log,
        }),
    bundleProjectWorkflows(),
  ]);
  const bundlePath = join(dir, 'workflows.js');
  writeFileSync(bundlePath, bundle);
  // Admission must not be what bounds the load: room for every subagent of the largest level at once.
  const workerConfig = join(dir, 'worker.yaml');
  const most = Math.max(...options.levels) * CHILDREN;
  writeFileSync(workerConfig, `subagent_runtime:\n  max_running: ${most}\n  max_queued: ${most}\n`);
  const connection = await Connection.connect({ address: server.address });
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const input = loadInput();
    const levels: (LoadLevel & { events_by_type: Record<string, Record<string, number>> })[] = [];
    for (const runs of options.levels) {
      process.stderr.write(`level ${runs}: ${runs} lead runs × ${CHILDREN} subagents…\n`);
      levels.push(await runLevel(server, client, bundlePath, workerConfig, options, runs, input));
    }
    const pragmas = Object.keys(options.pragmas).length > 0 ? options.pragmas : DEV_SERVER_SQLITE_PRAGMAS;
    const described = Object.entries(pragmas)
      .map(([name, value]) => `${name}=${value}`)
      .join(', ');
    let storage = `SQLite file on disk (${described})`;
    if (options.memory) storage = 'SQLite in memory';
    if (options.postgres) storage = 'PostgreSQL (devserver/temporal-postgres.ts)';
    const summary = {
      label: options.label,
      storage: server.source === 'TEMPORAL_ADDRESS' ? `TEMPORAL_ADDRESS ${server.address}` : storage,
      workers: options.workers,
      levels,
    };
    if (options.json) {
      process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    } else {
      process.stdout.write(`${options.label}: ${summary.storage}, ${options.workers} worker(s)\n`);
      process.stdout.write(`${formatLevels(levels)}\n`);
      const breakdown = levels.at(-1)?.events_by_type;
      if (breakdown)
        process.stdout.write(`events by type (one run of the last level): ${JSON.stringify(breakdown)}\n`);
    }
  } finally {
    await connection.close();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
