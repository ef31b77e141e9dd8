/**
 * The memory of one embedded run, summed over its process tree, as a user's machine sees it. The workload is the
 * demo's (a lead that delegates to 3 subagents, which read, grep and write in a copy of the sample workspace,
 * on the offline scripted model), started as a user starts it:
 *   - `run`: `subagents run --embedded --config <the demo's model and skills> "<the demo's prompt>"`, the command
 *     a user types (a dev server of its own, the worker and the client in this command's processes);
 *   - `start`: `subagents start --once`, what `npm start -- --once` runs once it has built.
 * Each run's process tree is read from /proc every 100 ms: each process's resident set (RSS) and unique set
 * (USS: the pages no other process maps), and the tree's sums at their peaks; besides, the CPU time each kind of process had used at its last sample. Linux only.
 *
 * Each command starts as a user starts it, through the build's `bin/subagents` (node dist/client/cli.js with its
 * allocator setting; a build without it, or EMBEDDED_NODE_FLAGS, starts Node itself).
 *
 * Run alone: `node dist/bench/embedded-memory.js`. EMBEDDED_MEMORY_RUNS: rounds (default 3), each round one run
 * of every command with every build, interleaved; EMBEDDED_COMMANDS: `run,start` (default); EMBEDDED_BUILDS:
 * `label=<path to a build's client/cli.js>,…` to compare builds (default: this build alone); EMBEDDED_NODE_FLAGS
 * and EMBEDDED_ENV (`NAME=value …`): Node's flags and environment for every run, to try settings.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { DEMO_DIR, DEMO_PROMPT } from '../cli/run-command';
import { tempDir } from '../test/support/subagent-input';
import { sampleProcess } from './support/process-sample';
import { formatTable, msRow, type BenchResult } from './stats';

const RUNS = Number(process.env.EMBEDDED_MEMORY_RUNS ?? 3);
const SAMPLE_MS = 100;
const KIB = 1024;

interface ProcessSample {
  pid: number;
  name: string;
  rssKib: number;
  ussKib: number;
}

/**
 * A process's unique set size (KiB): its pages no other process maps (0 when it cannot be read). RSS counts a
 * page two processes of the tree share (Node's own code, in a parent and its child) in each of them; USS in
 * neither (nor a page of the Temporal CLI's binary that another server on the machine maps too).
 */
function ussKib(pid: number): number {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? 0);
    return field('Private_Clean') + field('Private_Dirty');
  } catch {
    return 0;
  }
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

function commandLine(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The process `root` and its descendants, now. A child caught between its fork and its exec (Node starting a
 * sandboxed command, say) still runs its parent's command line and maps its parent's pages, which its RSS
 * counts a second time: it is left out until it runs a program of its own.
 */
function tree(root: number): ProcessSample[] {
  const table = processTable();
  const found: ProcessSample[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    const entry = table.get(pid);
    if (!entry) continue;
    const parentCommand = pid === root ? undefined : commandLine(entry.ppid);
    if (parentCommand === undefined || commandLine(pid) !== parentCommand)
      found.push({ pid, name: entry.name, rssKib: entry.rssKib, ussKib: ussKib(pid) });
    for (const [child, { ppid }] of table) if (ppid === pid) queue.push(child);
  }
  return found;
}

interface RunMemory {
  peakTreeMib: number;
  peakUssMib: number;
  /** The processes at the tree's RSS peak, with their resident sets (MiB). */
  atPeak: string;
  seconds: number;
  /** CPU seconds by process name (node, temporal), at each process's last sample. */
  cpu: string;
}

/** The command's arguments for the demo's workload in `workspace`; `run` gets a config file written in `dir`. */
function commandArgs(command: string, dir: string, workspace: string): string[] {
  if (command === 'start') return ['start', '--once', '--workspace', workspace];
  if (command !== 'run') throw new Error(`EMBEDDED_COMMANDS: unknown command ${JSON.stringify(command)}`);
  cpSync(join(DEMO_DIR, 'workspace'), workspace, { recursive: true });
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    [
      'models:',
      '  - name: scripted',
      '    provider: scripted',
      `    script_file: ${JSON.stringify(join(DEMO_DIR, 'script.yaml'))}`,
      'skills:',
      `  path: ${JSON.stringify(join(DEMO_DIR, 'skills'))}`,
      '',
    ].join('\n'),
  );
  return ['run', '--embedded', '--config', config, '--workspace', workspace, DEMO_PROMPT];
}

/** NAME=value pairs, space-separated. */
function envPairs(text: string | undefined): Record<string, string> {
  const pairs = (text ?? '').split(' ').filter(Boolean);
  return Object.fromEntries(
    pairs.map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}

async function oneRun(cli: string, command: string): Promise<RunMemory> {
  const started = performance.now();
  const flags = (process.env.EMBEDDED_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const dir = tempDir('embedded-memory');
  const args = commandArgs(command, dir, join(dir, 'workspace'));
  const env = { ...process.env, ...envPairs(process.env.EMBEDDED_ENV) };
  delete env.TEMPORAL_ADDRESS;
  // As a user types it: the build's `bin/subagents` (its allocator setting), unless Node's flags are tried.
  const launcher = join(dirname(cli), '..', '..', 'bin', 'subagents');
  const [file, argv] =
    flags.length === 0 && existsSync(launcher)
      ? [launcher, args]
      : [process.execPath, [...flags, cli, ...args]];
  const child = spawn(file, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let peakTree = 0;
  let peakUss = 0;
  let atPeak: ProcessSample[] = [];
  const cpuByPid = new Map<number, { name: string; seconds: number }>();
  const sample = () => {
    const samples = tree(child.pid!);
    for (const { pid, name } of samples) {
      const { cpuSeconds } = sampleProcess(pid);
      if (cpuSeconds > 0) cpuByPid.set(pid, { name, seconds: cpuSeconds });
    }
    const sum = samples.reduce((total, s) => total + s.rssKib, 0);
    peakUss = Math.max(
      peakUss,
      samples.reduce((total, s) => total + s.ussKib, 0),
    );
    if (sum > peakTree) [peakTree, atPeak] = [sum, samples];
  };
  const timer = setInterval(sample, SAMPLE_MS);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearInterval(timer);
  if (code !== 0) throw new Error(`subagents ${args.slice(0, 2).join(' ')} exited ${code}:\n${output}`);
  const cpu = new Map<string, number>();
  for (const { name, seconds } of cpuByPid.values()) cpu.set(name, (cpu.get(name) ?? 0) + seconds);
  return {
    peakTreeMib: Math.round(peakTree / KIB),
    peakUssMib: Math.round(peakUss / KIB),
    atPeak: atPeak.map((s) => `${s.name} ${Math.round(s.rssKib / KIB)}`).join(', '),
    seconds: (performance.now() - started) / 1000,
    cpu: [...cpu].map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`).join(', '),
  };
}

/** The builds compared: EMBEDDED_BUILDS, else this one. */
function builds(): [label: string, cli: string][] {
  const given = (process.env.EMBEDDED_BUILDS ?? '').split(',').filter(Boolean);
  if (given.length === 0) return [['this build', join(__dirname, '..', 'client', 'cli.js')]];
  return given.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]);
}

export async function benchEmbeddedMemory(): Promise<BenchResult[]> {
  const commands = (process.env.EMBEDDED_COMMANDS ?? 'run,start').split(',').filter(Boolean);
  const runs = new Map<string, RunMemory[]>();
  for (let i = 0; i < RUNS; i++) {
    for (const command of commands) {
      for (const [label, cli] of builds()) {
        const name = `${command}, ${label}`;
        const load = loadavg()[0].toFixed(1);
        const run = await oneRun(cli, command);
        runs.set(name, [...(runs.get(name) ?? []), run]);
        console.error(
          `embedded ${name} ${i + 1}: tree peak ${run.peakTreeMib} MiB RSS, ${run.peakUssMib} MiB USS ` +
            `(${run.atPeak}), ${run.seconds.toFixed(1)} s, CPU ${run.cpu}, load ${load}`,
        );
      }
    }
  }
  return [...runs].flatMap(([name, memory]) => [
    {
      ...msRow(
        `embedded fan-out ${name}: tree peak RSS`,
        memory.map((r) => r.peakTreeMib),
      ),
      unit: 'MiB',
    },
    {
      ...msRow(
        `embedded fan-out ${name}: tree peak USS`,
        memory.map((r) => r.peakUssMib),
      ),
      unit: 'MiB',
    },
    msRow(
      `embedded fan-out ${name}: start to exit`,
      memory.map((r) => r.seconds * 1000),
    ),
  ]);
}

if (require.main === module) {
  benchEmbeddedMemory()
    .then((results) => console.log(formatTable(results)))
    .catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
}
