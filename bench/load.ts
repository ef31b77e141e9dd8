/**
 * `npm run bench:load`: many lead runs at once on one machine. Each run is a fan-out: a lead that delegates
 * three subagents in one response and answers from their reports. By default (`--child answer`, issue 29's
 * shape) each subagent answers in its first model call, so a run makes five model calls in four executions,
 * as the floor's run makes five no-op activities; `--child read-then-answer` is issue 13's workload (each
 * subagent reads a file, then answers: three activities each, and the floor's children run three no-ops). The
 * model is the scripted one (no waiting on a provider), so what is measured is the system: Temporal's server,
 * the worker and the project's workflows.
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
 * The floor: the same shape as plain Temporal (bench/floor/: a parent with 2 no-op activities and 3 children
 * of one no-op activity each, three with `--child read-then-answer`; no admission, no codec, no search
 * attributes), on the same server, with worker processes of its own as ours have, run just before ours at each level (floor, ours, floor, ours … with
 * --rounds), so the machine's load weighs on both alike. Printed besides: ours ÷ floor for runs/s and for
 * worker and server CPU per run. Absolute runs/s depend on the machine; that ratio is what we drive up.
 *
 * Flags: --runs 10,50,200 · --child answer|read-then-answer · --rounds 1 (floor/ours pairs per level)
 * · --no-floor · --floor-only · --workers 1 · --pragma name=value (repeatable; the dev server's SQLite pragmas)
 * · --dynamic key=json (repeatable; a dev server dynamic config value beyond the project's own)
 * · --memory (SQLite in memory instead of a file on disk) · --postgres (a Temporal server on PostgreSQL,
 * devserver/temporal-postgres.ts: a throwaway cluster, Temporal's own server built with Go on first use) · --label
 * text (names the configuration in the output) · --json (one JSON object on stdout) · --node-args=text (node's
 * own flags for every worker process, ours and the floor's, space-separated: `--node-args='--cpu-prof
 * --cpu-prof-dir=/tmp/p'` writes one .cpuprofile per thread as each worker exits, which
 * bench/support/cpuprofile-summary.ts reads; `--perf-basic-prof` names JS frames for `perf record -g --inherit`,
 * which counts time on a CPU only; NODE_OPTIONS does not take these flags).
 * TEMPORAL_ADDRESS uses a running server instead. Server RSS, CPU and writes are measured for the dev server only.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { parseArgs } from 'node:util';
import { startPostgresServer } from '../devserver/temporal-postgres';
import {
  connectOrStartServer,
  DEV_SERVER_SQLITE_PRAGMAS,
  type TemporalServer,
} from '../devserver/temporal-server';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { tempDir } from '../test/support/subagent-input';
import { bundleFloorWorkflows, runFloor, spawnFloorWorker } from './floor/floor';
import { connectProjectClient } from './support/project-client';
import {
  CHILD_ACTIVITIES,
  FANOUT_CHILDREN as CHILDREN,
  fanOutInput,
  type FanOutChildWork,
} from './support/fanout-workload';
import { percentile } from './stats';
import { PeakRss, sampleProcess } from './support/process-sample';
import { DefaultLogger, Runtime } from '@temporalio/worker';

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
  rounds: number;
  floor: boolean;
  ours: boolean;
  childWork: FanOutChildWork;
  /** Node's own flags for every worker process (a profiler's). */
  nodeArgs: string[];
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
      rounds: { type: 'string', default: '1' },
      'no-floor': { type: 'boolean', default: false },
      'floor-only': { type: 'boolean', default: false },
      child: { type: 'string', default: 'answer' },
      'node-args': { type: 'string', default: '' },
    },
  });
  const childWork = values.child as FanOutChildWork;
  if (!(childWork in CHILD_ACTIVITIES)) {
    throw new Error(
      `--child takes ${Object.keys(CHILD_ACTIVITIES).join(' or ')} (got ${JSON.stringify(values.child)})`,
    );
  }
  if (values['no-floor'] && values['floor-only'])
    throw new Error('--no-floor and --floor-only exclude each other: give one');
  const rounds = Number(values.rounds);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds takes a whole number above 0');
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
    rounds,
    floor: !values['no-floor'],
    ours: !values['floor-only'],
    childWork,
    nodeArgs: values['node-args'].split(' ').filter((arg) => arg !== ''),
  };
}

/** One of the two things measured at each level: the project's runs, or the floor's. */
interface Shape {
  name: 'ours' | 'floor';
  /** Reads the level's histories (and starts the runs): the project's data converter for ours, none for the floor. */
  client: Client;
  spawnWorker(taskQueue: string): Promise<ChildProcess>;
  /** Starts one run and awaits it; whether it completed. */
  run(taskQueue: string, runId: string): Promise<boolean>;
}

type MeasuredLevel = LoadLevel & { events_by_type: Record<string, Record<string, number>> };

async function runLevel(
  server: TemporalServer,
  shape: Shape,
  options: Options,
  runs: number,
): Promise<MeasuredLevel> {
  const { client } = shape;
  const taskQueue = `bench-${shape.name}-${runs}-${Date.now()}`;
  const workers: ChildProcess[] = await Promise.all(
    Array.from({ length: options.workers }, () => shape.spawnWorker(taskQueue)),
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
    const started = performance.now();
    const latencies: number[] = [];
    let failed = 0;
    const prefix = `${shape.name}-${runs}-${Date.now()}`;
    await Promise.all(
      Array.from({ length: runs }, async (_, i) => {
        const begun = performance.now();
        const completed = await shape.run(taskQueue, `${prefix}-${i}`);
        latencies.push((performance.now() - begun) / 1000);
        if (!completed) failed += 1;
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

/** A Markdown table: one row per item, one column per (header, cell) pair. */
function formatTable<T>(columns: [string, (item: T) => string][], items: readonly T[]): string {
  const rows = items.map((item) => columns.map(([, cell]) => cell(item)));
  const header = columns.map(([name]) => name);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const ms = (seconds: number) => `${(seconds * 1000).toFixed(0)} ms`;

function formatLevels(levels: readonly LoadLevel[]): string {
  return formatTable<LoadLevel>(
    [
      ['runs', (l) => String(l.runs)],
      ['runs/s', (l) => l.runs_per_s.toFixed(2)],
      ['deleg/s', (l) => l.delegations_per_s.toFixed(1)],
      ['p50 s', (l) => l.latency_p50_s.toFixed(1)],
      ['p95 s', (l) => l.latency_p95_s.toFixed(1)],
      ['failed', (l) => String(l.failed_runs)],
      ['worker MiB', (l) => `${l.worker_rss_idle_mib}→${l.worker_rss_peak_mib}`],
      ['server MiB', (l) => String(l.server_rss_peak_mib)],
      ['worker cpu/run', (l) => ms(l.worker_cpu_s_per_run)],
      ['server cpu/run', (l) => ms(l.server_cpu_s_per_run)],
      ['client cpu/run', (l) => ms(l.client_cpu_s_per_run)],
      ['written/run', (l) => `${l.server_written_kib_per_run} KiB`],
      ['events/run', (l) => String(l.history_events_per_run)],
      ['history/run', (l) => `${l.history_kib_per_run} KiB`],
    ],
    levels,
  );
}

/** One floor/ours pair at one level: ours ÷ floor for throughput and for CPU per run. */
export interface FloorRatio {
  runs: number;
  round: number;
  /** 1.0 is the floor's throughput; the aim is ≥ 0.6. */
  runs_per_s: number;
  worker_cpu_per_run: number;
  server_cpu_per_run: number;
  ours: Pick<LoadLevel, 'runs_per_s' | 'worker_cpu_s_per_run' | 'server_cpu_s_per_run'>;
  floor: Pick<LoadLevel, 'runs_per_s' | 'worker_cpu_s_per_run' | 'server_cpu_s_per_run'>;
}

function floorRatio(pass: number, ours: LoadLevel, floor: LoadLevel): FloorRatio {
  const pick = (l: LoadLevel) => ({
    runs_per_s: l.runs_per_s,
    worker_cpu_s_per_run: l.worker_cpu_s_per_run,
    server_cpu_s_per_run: l.server_cpu_s_per_run,
  });
  return {
    runs: ours.runs,
    round: pass,
    runs_per_s: round(ours.runs_per_s / floor.runs_per_s),
    worker_cpu_per_run: round(ours.worker_cpu_s_per_run / floor.worker_cpu_s_per_run),
    server_cpu_per_run: round(ours.server_cpu_s_per_run / floor.server_cpu_s_per_run),
    ours: pick(ours),
    floor: pick(floor),
  };
}

function formatRatios(ratios: readonly FloorRatio[]): string {
  const pair = (ours: string, floor: string, ratio: number) => `${ours} / ${floor} = ${ratio.toFixed(2)}`;
  return formatTable<FloorRatio>(
    [
      ['runs', (r) => String(r.runs)],
      ['round', (r) => String(r.round)],
      [
        'runs/s ours / floor',
        (r) => pair(r.ours.runs_per_s.toFixed(2), r.floor.runs_per_s.toFixed(2), r.runs_per_s),
      ],
      [
        'worker cpu/run ours / floor',
        (r) => pair(ms(r.ours.worker_cpu_s_per_run), ms(r.floor.worker_cpu_s_per_run), r.worker_cpu_per_run),
      ],
      [
        'server cpu/run ours / floor',
        (r) => pair(ms(r.ours.server_cpu_s_per_run), ms(r.floor.server_cpu_s_per_run), r.server_cpu_per_run),
      ],
    ],
    ratios,
  );
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = tempDir('bench-load-server');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const [server, bundle, floorBundle] = await Promise.all([
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
    options.ours ? bundleProjectWorkflows() : undefined,
    options.floor ? bundleFloorWorkflows() : undefined,
  ]);
  const bundlePath = join(dir, 'workflows.js');
  if (bundle !== undefined) writeFileSync(bundlePath, bundle);
  const floorBundlePath = join(dir, 'floor-workflows.js');
  if (floorBundle !== undefined) writeFileSync(floorBundlePath, floorBundle);
  // Admission must not be what bounds the load: room for every subagent of the largest level at once.
  const workerConfig = join(dir, 'worker.yaml');
  const most = Math.max(...options.levels) * CHILDREN;
  writeFileSync(workerConfig, `subagent_runtime:\n  max_running: ${most}\n  max_queued: ${most}\n`);
  const { connection, client, api } = await connectProjectClient(server);
  try {
    const input = fanOutInput('bench-load', options.childWork);
    const childActivities = CHILD_ACTIVITIES[options.childWork];
    const ours: Shape = {
      name: 'ours',
      client,
      spawnWorker: (taskQueue) =>
        spawnWorkerProcess({
          address: server.address,
          namespace: server.namespace,
          taskQueue,
          bundlePath,
          env: { SUBAGENTS_CONFIG: workerConfig },
          execArgv: options.nodeArgs,
        }),
      run: async (taskQueue, runId) => {
        const result = await (await api.startRun(input, { taskQueue, runId })).result();
        return result.status === 'completed';
      },
    };
    const floorClient = new Client({ connection, namespace: server.namespace });
    const floor: Shape = {
      name: 'floor',
      client: floorClient,
      spawnWorker: (taskQueue) =>
        spawnFloorWorker({
          address: server.address,
          namespace: server.namespace,
          taskQueue,
          bundlePath: floorBundlePath,
          execArgv: options.nodeArgs,
        }),
      run: (taskQueue, runId) => runFloor(floorClient, taskQueue, runId, CHILDREN, childActivities),
    };
    const levels: MeasuredLevel[] = [];
    const floorLevels: MeasuredLevel[] = [];
    const ratios: FloorRatio[] = [];
    for (const runs of options.levels) {
      for (let pass = 1; pass <= options.rounds; pass++) {
        const of = options.rounds > 1 ? ` (round ${pass} of ${options.rounds})` : '';
        let floorLevel: MeasuredLevel | undefined;
        if (options.floor) {
          process.stderr.write(
            `level ${runs}, floor: ${runs} plain Temporal runs × ${CHILDREN} children${of}…\n`,
          );
          floorLevel = await runLevel(server, floor, options, runs);
          floorLevels.push(floorLevel);
        }
        if (options.ours) {
          process.stderr.write(`level ${runs}: ${runs} lead runs × ${CHILDREN} subagents${of}…\n`);
          const level = await runLevel(server, ours, options, runs);
          levels.push(level);
          if (floorLevel) ratios.push(floorRatio(pass, level, floorLevel));
        }
      }
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
      floor_levels: floorLevels,
      floor_ratios: ratios,
    };
    if (options.json) {
      process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    } else {
      process.stdout.write(`${options.label}: ${summary.storage}, ${options.workers} worker(s)\n`);
      if (levels.length > 0) process.stdout.write(`${formatLevels(levels)}\n`);
      const breakdown = levels.at(-1)?.events_by_type;
      if (breakdown)
        process.stdout.write(`events by type (one run of the last level): ${JSON.stringify(breakdown)}\n`);
      if (floorLevels.length > 0) {
        process.stdout.write(`\nfloor: the same shape as plain Temporal (bench/floor/)\n`);
        process.stdout.write(`${formatLevels(floorLevels)}\n`);
      }
      if (ratios.length > 0) {
        process.stdout.write(
          `\nours ÷ floor (runs/s: the issue's aim is ≥ 0.6; CPU per run: lower is better)\n`,
        );
        process.stdout.write(`${formatRatios(ratios)}\n`);
      }
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
