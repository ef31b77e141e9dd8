/**
 * The memory of one embedded run, summed over its process tree, as a user's machine sees it: `subagents start
 * --once` (the demo of `npm start`: a dev server of its own, the worker and the client in one Node process, a
 * lead that delegates to 3 subagents, which read, grep and write in the workspace) sampled every 50 ms from
 * /proc: each process's resident set, and the tree's sum at its peak; besides, the CPU time the Node process and
 * the dev server had used at their last sample (what a smaller heap costs in collections). Linux only. Run alone:
 * `node dist/bench/embedded-memory.js` (EMBEDDED_MEMORY_RUNS, default 3; EMBEDDED_NODE_FLAGS: Node's flags for the
 * run's process, to try V8's settings).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { tempDir } from '../test/support/subagent-input';
import { sampleProcess } from './support/process-sample';
import { formatTable, msRow, type BenchResult } from './stats';

const RUNS = Number(process.env.EMBEDDED_MEMORY_RUNS ?? 3);
const CLI = join(__dirname, '..', 'client', 'cli.js');
const KIB = 1024;

interface ProcessSample {
  pid: number;
  name: string;
  rssKib: number;
}

/** Every live process's parent and resident set (a process that ends while being read is skipped). */
function processTable(): Map<number, { ppid: number; name: string; rssKib: number }> {
  const table = new Map<number, { ppid: number; name: string; rssKib: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      const field = (key: string) => new RegExp(`^${key}:\\s*(.*)$`, 'm').exec(status)?.[1] ?? '';
      table.set(Number(entry), {
        ppid: Number(field('PPid')),
        name: field('Name'),
        rssKib: Number.parseInt(field('VmRSS'), 10) || 0,
      });
    } catch {
      // Gone meanwhile.
    }
  }
  return table;
}

/** The process `root` and its descendants, now. */
function tree(root: number): ProcessSample[] {
  const table = processTable();
  const found: ProcessSample[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const entry = table.get(pid);
    if (!entry) continue;
    found.push({ pid, name: entry.name, rssKib: entry.rssKib });
    for (const [child, { ppid }] of table) if (ppid === pid) queue.push(child);
  }
  return found;
}

interface RunMemory {
  peakTreeMib: number;
  /** The processes at the tree's peak, with their resident sets (MiB). */
  atPeak: string;
  seconds: number;
  /** CPU seconds by process name (node, temporal), at each process's last sample. */
  cpu: string;
}

async function oneRun(): Promise<RunMemory> {
  const started = performance.now();
  const flags = (process.env.EMBEDDED_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...flags, CLI, 'start', '--once', '--workspace', tempDir('embedded-memory')],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let peakTree = 0;
  let atPeak: ProcessSample[] = [];
  const cpuByPid = new Map<number, { name: string; seconds: number }>();
  const sample = () => {
    const samples = tree(child.pid!);
    for (const { pid, name } of samples) {
      const { cpuSeconds } = sampleProcess(pid);
      if (cpuSeconds > 0) cpuByPid.set(pid, { name, seconds: cpuSeconds });
    }
    const sum = samples.reduce((total, s) => total + s.rssKib, 0);
    if (sum > peakTree) [peakTree, atPeak] = [sum, samples];
  };
  const timer = setInterval(sample, 50);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(timer);
  if (code !== 0) throw new Error(`subagents start --once exited ${code}:\n${output}`);
  const cpu = new Map<string, number>();
  for (const { name, seconds } of cpuByPid.values()) cpu.set(name, (cpu.get(name) ?? 0) + seconds);
  return {
    peakTreeMib: Math.round(peakTree / KIB),
    atPeak: atPeak.map((s) => `${s.name} ${Math.round(s.rssKib / KIB)}`).join(', '),
    seconds: (performance.now() - started) / 1000,
    cpu: [...cpu].map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`).join(', '),
  };
}

export async function benchEmbeddedMemory(): Promise<BenchResult[]> {
  const runs: RunMemory[] = [];
  for (let i = 0; i < RUNS; i++) {
    const load = loadavg()[0].toFixed(1);
    const run = await oneRun();
    runs.push(run);
    console.error(
      `embedded run ${i + 1}: tree peak ${run.peakTreeMib} MiB (${run.atPeak}), ` +
        `${run.seconds.toFixed(1)} s, CPU ${run.cpu}, load ${load}`,
    );
  }
  return [
    {
      ...msRow(
        'embedded fan-out run, process tree peak RSS',
        runs.map((r) => r.peakTreeMib),
      ),
      unit: 'MiB',
    },
    msRow(
      'embedded fan-out run, start to exit',
      runs.map((r) => r.seconds * 1000),
    ),
  ];
}

if (require.main === module) {
  benchEmbeddedMemory()
    .then((results) => console.log(formatTable(results)))
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
