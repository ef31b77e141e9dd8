/**
 * `npm run bench:memory`: where a worker's and a CLI client's memory goes. Measurement only: it changes
 * nothing in how they run. Each process measured is started with `bench/support/memory-probe.ts` preloaded,
 * which reports from inside it (the main thread and the SDK's workflow thread).
 *
 * Measured, each on a fresh task queue of the same embedded dev server:
 *   - a bare Node process (what Node itself costs, for reference);
 *   - the project worker process (`worker-main`, as `subagents worker`) with the SDK's defaults, after it
 *     starts and at its peak during N fan-out runs (the load benchmark's workload: 3 subagents, each one
 *     `read_file`), then the same with `worker: {max_cached_workflows: 0}` (no workflow kept in the
 *     workflow thread's V8 context between tasks: what the cache holds);
 *   - the floor's plain Temporal worker (bench/floor/) with the floor's run: what the SDK and its Rust core
 *     cost by themselves;
 *   - CLI client processes (`subagents list`, `subagents status <run>`): their peak RSS and the modules they
 *     load that a client does not need.
 * Split of a process's RSS: the main thread's V8 heap, the workflow thread's V8 heap (the bundle's context and
 * the cached workflows), memory outside the heaps that V8 knows of (buffers, external strings), and the rest:
 * code, the Rust core's allocations and the allocator's slack (RSS − heaps − external: an estimate, shown also
 * beyond what a bare Node process has in it). Modules: require.cache, by package (or the project's floor),
 * with their files' size on disk.
 *
 * Besides: what requiring each heavy package alone costs a fresh Node process (heap, RSS, modules, time).
 *
 * Flags: --runs 1 (fan-out runs at once during the peak measurement) · --json. The machine's load average is
 * printed beside each figure: these are one busy machine's figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, sep } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { tempDir } from '../test/support/subagent-input';
import { bundleFloorWorkflows, runFloor, spawnFloorWorker } from './floor/floor';
import { FANOUT_CHILDREN, fanOutInput } from './support/fanout-workload';
import type { LoadedModule, ProcessMemory, ThreadMemory } from './support/memory-probe';
import { withBenchServer } from './support/bench-server';
import { connectProjectClient } from './support/project-client';

const MIB = 2 ** 20;
const mib = (bytes: number) => Math.round(bytes / MIB);
const load = () => loadavg()[0].toFixed(1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The project's own folders (its floors) in dist/, and packages by name: where a module's bytes belong. */
function moduleGroup(path: string): string {
  const parts = path.split(sep);
  const at = parts.lastIndexOf('node_modules');
  if (at >= 0) {
    const name = parts[at + 1] ?? '?';
    return name.startsWith('@') ? `${name}/${parts[at + 2] ?? '?'}` : name;
  }
  const dist = parts.lastIndexOf('dist');
  return dist >= 0 ? `project ${parts[dist + 1] ?? '?'}/` : 'other';
}

interface ModuleGroup {
  group: string;
  modules: number;
  kib: number;
}

interface ModuleSummary {
  modules: number;
  kib: number;
  groups: ModuleGroup[];
}

function summarizeModules(modules: readonly LoadedModule[]): ModuleSummary {
  const groups = new Map<string, ModuleGroup>();
  for (const { path, bytes } of modules) {
    const name = moduleGroup(path);
    const group = groups.get(name) ?? { group: name, modules: 0, kib: 0 };
    group.modules += 1;
    group.kib += bytes / 1024;
    groups.set(name, group);
  }
  const sorted = [...groups.values()]
    .map((g) => ({ ...g, kib: Math.round(g.kib) }))
    .sort((a, b) => b.kib - a.kib);
  return {
    modules: modules.length,
    kib: sorted.reduce((sum, g) => sum + g.kib, 0),
    groups: sorted,
  };
}

/** One reading of a probed process: its main thread's report and its other threads'. */
interface Reading {
  main: ProcessMemory;
  threads: ThreadMemory[];
  load: string;
}

function readProbe(dir: string, pid: number): Reading {
  const read = <T>(file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as T;
  const threads = readdirSync(dir)
    .filter((file) => file.startsWith(`${pid}-thread-`))
    .map((file) => read<ThreadMemory>(file));
  return { main: read<ProcessMemory>(`${pid}-main.json`), threads, load: load() };
}

async function readModules(dir: string, child: ChildProcess, label: string): Promise<ModuleSummary> {
  child.kill('SIGUSR2');
  const file = join(dir, `${child.pid}-modules-${label}.json`);
  for (let tries = 0; tries < 100; tries++) {
    try {
      return summarizeModules(JSON.parse(readFileSync(file, 'utf8')) as LoadedModule[]);
    } catch {
      await sleep(100);
    }
  }
  throw new Error(`process ${child.pid} wrote no module list to ${file}`);
}

/** RSS split into its parts, in MiB (see the file's comment for what each part is). */
interface Breakdown {
  rss: number;
  main_heap: number;
  main_heap_used: number;
  workflow_thread_heap: number;
  workflow_thread_heap_used: number;
  workflow_thread_contexts: number;
  external: number;
  rest: number;
  rest_beyond_bare_node: number;
  load: string;
}

function breakdown(reading: Reading, bareRest: number, peak: boolean): Breakdown {
  const { main, threads } = reading;
  const pick = (t: ThreadMemory) => (peak ? t.peak_heap_physical : t.heap_physical);
  const pickUsed = (t: ThreadMemory) => (peak ? t.peak_heap_used : t.heap_used);
  const rss = peak ? main.rss_peak : main.rss;
  const threadHeap = threads.reduce((sum, t) => sum + pick(t), 0);
  const external = main.process_external + threads.reduce((sum, t) => sum + t.external, 0);
  const rest = rss - pick(main) - threadHeap - external;
  return {
    rss: mib(rss),
    main_heap: mib(pick(main)),
    main_heap_used: mib(pickUsed(main)),
    workflow_thread_heap: mib(threadHeap),
    workflow_thread_heap_used: mib(threads.reduce((sum, t) => sum + pickUsed(t), 0)),
    workflow_thread_contexts: threads.reduce((sum, t) => sum + t.native_contexts, 0),
    external: mib(external),
    rest: mib(rest),
    rest_beyond_bare_node: mib(rest - bareRest),
    load: reading.load,
  };
}

interface WorkerMeasure {
  name: string;
  at_start: Breakdown;
  /** Peaks over the whole life (the kernel's VmHWM, each heap's own peak): not all at the same moment. */
  peak: Breakdown;
  modules_at_start: ModuleSummary;
  modules_after_run: ModuleSummary;
  run_s: number;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const late = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(late);
}

async function measureWorker(
  name: string,
  dir: string,
  bareRest: number,
  spawnWorker: () => Promise<ChildProcess>,
  run: () => Promise<boolean>,
  runs: number,
): Promise<WorkerMeasure> {
  process.stderr.write(`${name}…\n`);
  const child = await spawnWorker();
  const pid = child.pid ?? -1;
  try {
    // Settled: the worker polls, its start-up garbage has had a chance to go.
    await sleep(2000);
    const atStart = readProbe(dir, pid);
    const modulesAtStart = await readModules(dir, child, '1');
    const begun = performance.now();
    const results = await Promise.all(Array.from({ length: runs }, run));
    const runSeconds = (performance.now() - begun) / 1000;
    if (results.some((completed) => !completed)) throw new Error(`${name}: a run did not complete`);
    // The probe writes twice a second: its peaks now include the run.
    await sleep(1000);
    const after = readProbe(dir, pid);
    return {
      name,
      at_start: breakdown(atStart, bareRest, false),
      peak: breakdown(after, bareRest, true),
      modules_at_start: modulesAtStart,
      modules_after_run: await readModules(dir, child, '2'),
      run_s: Number(runSeconds.toFixed(2)),
    };
  } finally {
    await stop(child);
  }
}

interface CliMeasure {
  command: string;
  peak_rss: number;
  at_exit: Breakdown;
  modules: ModuleSummary;
}

async function measureCli(
  dir: string,
  env: NodeJS.ProcessEnv,
  bareRest: number,
  args: string[],
): Promise<CliMeasure> {
  const command = `subagents ${args.join(' ')}`;
  process.stderr.write(`${command}…\n`);
  const child = spawn(process.execPath, [require.resolve('../client/cli'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${command} exited with code ${code}`);
  const reading = readProbe(dir, child.pid ?? -1);
  const modules = summarizeModules(
    JSON.parse(readFileSync(join(dir, `${child.pid}-modules-exit.json`), 'utf8')) as LoadedModule[],
  );
  return {
    command,
    peak_rss: mib(reading.main.rss_peak),
    at_exit: breakdown(reading, bareRest, false),
    modules,
  };
}

/** What a bare Node process holds outside its heap: the part of `rest` every process has. */
async function bareNode(dir: string, env: NodeJS.ProcessEnv): Promise<{ rss: number; rest: number }> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 1200)'], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
  await once(child, 'exit');
  const { main } = readProbe(dir, child.pid ?? -1);
  return { rss: main.rss, rest: main.rss - main.heap_physical - main.process_external };
}

function formatBreakdowns(rows: readonly [string, Breakdown][]): string {
  const header =
    '| process | RSS | main heap (used) | workflow thread heap (used) | V8 contexts there | external | rest | rest beyond bare Node | load |';
  const lines = rows.map(
    ([name, b]) =>
      `| ${name} | ${b.rss} | ${b.main_heap} (${b.main_heap_used}) | ${b.workflow_thread_heap} (${b.workflow_thread_heap_used}) | ${b.workflow_thread_contexts} | ${b.external} | ${b.rest} | ${b.rest_beyond_bare_node} | ${b.load} |`,
  );
  return [header, `|${'---|'.repeat(9)}`, ...lines].join('\n');
}

function formatModules(name: string, summary: ModuleSummary, top = 12): string {
  const groups = summary.groups
    .slice(0, top)
    .map((g) => `${g.group} ${g.modules} (${g.kib} KiB)`)
    .join(', ');
  return `${name}: ${summary.modules} modules, ${Math.round(summary.kib / 1024)} MiB of files; biggest: ${groups}`;
}

/** The packages the issue asks about (and the SDK's two halves): their share of a process's modules. */
const NAMED_PACKAGES = [
  '@temporalio/core-bridge',
  '@temporalio/worker',
  '@langchain/',
  'langsmith',
  'openai',
  '@modelcontextprotocol/',
  'just-bash',
  '@aws-sdk/',
  '@smithy/',
  '@opentelemetry/',
  'project worker/',
  'project activities/',
  'project workflows/',
];

function namedShares(summary: ModuleSummary): string {
  return NAMED_PACKAGES.map((prefix) => {
    const groups = summary.groups.filter((g) => g.group.startsWith(prefix));
    const modules = groups.reduce((sum, g) => sum + g.modules, 0);
    const kib = groups.reduce((sum, g) => sum + g.kib, 0);
    return modules === 0 ? `${prefix} none` : `${prefix} ${modules} (${kib} KiB)`;
  }).join(', ');
}

/** What requiring one package costs a fresh Node process, after a full GC on both sides. */
interface PackageCost {
  package: string;
  heap_mib: number;
  rss_mib: number;
  modules: number;
  load_ms: number;
}

const COSTED_PACKAGES = [
  '@temporalio/client',
  '@temporalio/worker',
  '@langchain/openai',
  '@langchain/langgraph',
  '@modelcontextprotocol/sdk/client/index.js',
  'just-bash',
  '@aws-sdk/client-s3',
  '@opentelemetry/sdk-trace-base',
  'zod',
];

async function packageCost(name: string): Promise<PackageCost | undefined> {
  const code = `
    gc(); const before = process.memoryUsage(); const begun = performance.now();
    require(${JSON.stringify(name)});
    const ms = performance.now() - begun; gc(); const after = process.memoryUsage();
    process.stdout.write(JSON.stringify({ heap: after.heapUsed - before.heapUsed, rss: after.rss - before.rss,
      modules: Object.keys(require.cache).length, ms }));`;
  const child = spawn(process.execPath, ['--expose-gc', '-e', code], {
    cwd: join(__dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const [exitCode] = (await once(child, 'exit')) as [number | null];
  if (exitCode !== 0) return undefined;
  const cost = JSON.parse(out) as { heap: number; rss: number; modules: number; ms: number };
  return {
    package: name,
    heap_mib: Number((cost.heap / MIB).toFixed(1)),
    rss_mib: Number((cost.rss / MIB).toFixed(1)),
    modules: cost.modules,
    load_ms: Math.round(cost.ms),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1' },
      json: { type: 'boolean', default: false },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number above 0');
  const dir = tempDir('bench-memory');
  const probeEnv = {
    MEMORY_PROBE_DIR: dir,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${require.resolve('./support/memory-probe')}`,
  };
  const bare = await bareNode(dir, probeEnv);
  const costs: PackageCost[] = [];
  for (const name of COSTED_PACKAGES) {
    const cost = await packageCost(name);
    if (cost) costs.push(cost);
  }
  const report = await withBenchServer(async (server) => {
    const [bundle, floorBundle] = await Promise.all([bundleProjectWorkflows(), bundleFloorWorkflows()]);
    const bundlePath = join(dir, 'workflows.js');
    writeFileSync(bundlePath, bundle);
    const floorBundlePath = join(dir, 'floor-workflows.js');
    writeFileSync(floorBundlePath, floorBundle);
    const noCache = join(dir, 'no-cache.yaml');
    writeFileSync(noCache, 'worker:\n  max_cached_workflows: 0\n');
    const { connection, api } = await connectProjectClient(server);
    try {
      const floorClient = new Client({ connection, namespace: server.namespace });
      const input = fanOutInput('bench-memory');
      let lastRun = '';
      let serial = 0;
      const ours = (label: string, config: string | undefined) => {
        const taskQueue = `bench-memory-${label}-${Date.now()}`;
        return {
          spawnWorker: () =>
            spawnWorkerProcess({
              address: server.address,
              namespace: server.namespace,
              taskQueue,
              bundlePath,
              env: { ...probeEnv, ...(config && { SUBAGENTS_CONFIG: config }) },
            }),
          run: async () => {
            lastRun = `memory-${label}-${Date.now()}-${serial++}`;
            const handle = await api.startRun(input, { taskQueue, runId: lastRun });
            return (await handle.result()).status === 'completed';
          },
        };
      };
      const floorQueue = `bench-memory-floor-${Date.now()}`;
      const floor = {
        spawnWorker: () =>
          spawnFloorWorker({
            address: server.address,
            namespace: server.namespace,
            taskQueue: floorQueue,
            bundlePath: floorBundlePath,
            env: probeEnv,
          }),
        run: () =>
          runFloor(floorClient, floorQueue, `memory-floor-${Date.now()}-${serial++}`, FANOUT_CHILDREN),
      };
      const variants: [string, { spawnWorker: () => Promise<ChildProcess>; run: () => Promise<boolean> }][] =
        [
          ['project worker, SDK defaults', ours('defaults', undefined)],
          ['project worker, max_cached_workflows: 0', ours('no-cache', noCache)],
          ['plain Temporal worker (the floor)', floor],
        ];
      const workers: WorkerMeasure[] = [];
      for (const [name, variant] of variants)
        workers.push(await measureWorker(name, dir, bare.rest, variant.spawnWorker, variant.run, runs));
      const cliEnv = { ...probeEnv, TEMPORAL_ADDRESS: server.address, TEMPORAL_NAMESPACE: server.namespace };
      const clis = [
        await measureCli(dir, cliEnv, bare.rest, ['list']),
        await measureCli(dir, cliEnv, bare.rest, ['status', lastRun]),
      ];
      return { bundle_kib: Math.round(bundle.length / 1024), workers, clis };
    } finally {
      await connection.close();
    }
  });
  const summary = {
    runs,
    package_costs: costs,
    bare_node_rss_mib: mib(bare.rss),
    bare_node_rest_mib: mib(bare.rest),
    ...report,
  };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    return;
  }
  const out = (line = '') => process.stdout.write(`${line}\n`);
  out(
    `MiB; ${runs} fan-out run(s) of ${FANOUT_CHILDREN} subagents; workflow bundle ${report.bundle_kib} KiB`,
  );
  out(`bare Node: RSS ${summary.bare_node_rss_mib}, of which outside its heap ${summary.bare_node_rest_mib}`);
  out();
  out(
    formatBreakdowns([
      ...report.workers.flatMap((w): [string, Breakdown][] => [
        [`${w.name}: after start`, w.at_start],
        [`${w.name}: peak (run ${w.run_s} s)`, w.peak],
      ]),
      ...report.clis.map((c): [string, Breakdown] => [`${c.command} (peak RSS ${c.peak_rss})`, c.at_exit]),
    ]),
  );
  out();
  for (const w of report.workers) {
    out(formatModules(`${w.name}, at start`, w.modules_at_start));
    const added = w.modules_after_run.modules - w.modules_at_start.modules;
    out(`  after the run: ${w.modules_after_run.modules} modules (${added} loaded by the run)`);
    out(`  named: ${namedShares(w.modules_after_run)}`);
  }
  for (const c of report.clis) {
    out(formatModules(c.command, c.modules, 20));
    out(`  named: ${namedShares(c.modules)}`);
  }
  out();
  out('one package required alone in a fresh Node (after a full GC): heap, RSS, modules, load time');
  for (const c of costs)
    out(
      `  ${c.package}: heap +${c.heap_mib} MiB, RSS +${c.rss_mib} MiB, ${c.modules} modules, ${c.load_ms} ms`,
    );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
