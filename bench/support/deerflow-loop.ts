/**
 * DeerFlow's subagent loop (bench/deerflow/loop.py) as a benchmark drives it: a Python venv of its own in the
 * project's cache folder (made once, remade when bench/deerflow/requirements.txt or the Python changes), and one
 * long-lived Python process, as DeerFlow's server is, that runs the subagents it is asked for and answers when
 * they are done.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { cacheRoot } from '../../payloads/cache-root';

const DEERFLOW_DIR = join(__dirname, '..', '..', '..', 'bench', 'deerflow');
const REQUIREMENTS = join(DEERFLOW_DIR, 'requirements.txt');
const LOOP = join(DEERFLOW_DIR, 'loop.py');
/** DeerFlow 2.1.0 asks for 3.12; the libraries it pins run on 3.10 and later. */
const PYTHONS = ['python3.12', 'python3.13', 'python3'];
const MIN_PYTHON: [number, number] = [3, 10];

export interface DeerFlowTask {
  prompt: string;
  /** The real folder DeerFlow's `/mnt/user-data/workspace` stands for. */
  workspace: string;
}

export interface DeerFlowLoopInfo {
  python: string;
  /** Installed versions of the libraries the loop runs on. */
  versions: Record<string, string>;
}

interface LoopResult {
  status: string;
  steps: number;
  error: string | null;
}

function pythonVersion(python: string): [number, number] | undefined {
  const probe = spawnSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], {
    encoding: 'utf8',
  });
  if (probe.status !== 0) return undefined;
  const [major, minor] = probe.stdout.trim().split('.').map(Number);
  return Number.isInteger(major) && Number.isInteger(minor) ? [major, minor] : undefined;
}

/** DEERFLOW_BENCH_PYTHON, else the first of python3.12, python3.13, python3 that runs and is 3.10 or later. */
function basePython(env: NodeJS.ProcessEnv): { python: string; version: string } {
  const candidates = env.DEERFLOW_BENCH_PYTHON ? [env.DEERFLOW_BENCH_PYTHON] : PYTHONS;
  for (const python of candidates) {
    const version = pythonVersion(python);
    if (version && (version[0] > MIN_PYTHON[0] || version[1] >= MIN_PYTHON[1]))
      return { python, version: version.join('.') };
  }
  throw new Error(
    `no Python ${MIN_PYTHON.join('.')} or later among ${candidates.join(', ')} ` +
      '(set DEERFLOW_BENCH_PYTHON to one, e.g. a python3.12)',
  );
}

async function run(command: string, args: string[], say: (line: string) => void): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let tail = '';
  const onData = (chunk: Buffer) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-4000);
    for (const line of text.split('\n')) if (line.trim()) say(`  ${line.trim()}`);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}:\n${tail}`);
}

/**
 * The venv's python, the venv made first when it is missing or was made for other requirements or another
 * Python: `python -m venv`, then `pip install -r bench/deerflow/requirements.txt`, its progress told to `say`.
 */
export async function ensureDeerFlowVenv(
  say: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  const dir = join(cacheRoot(env), 'deerflow-bench-venv');
  const python = join(dir, 'bin', 'python');
  const base = basePython(env);
  const stamp = `${base.python} ${base.version}\n${readFileSync(REQUIREMENTS, 'utf8')}`;
  const stampFile = join(dir, 'bench-requirements.stamp');
  if (existsSync(python) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return python;
  say(`DeerFlow loop: making a venv in ${dir} (${base.python}, Python ${base.version})`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await run(base.python, ['-m', 'venv', dir], say);
  say(`DeerFlow loop: pip install -r ${REQUIREMENTS}`);
  await run(
    python,
    ['-m', 'pip', 'install', '--disable-pip-version-check', '--progress-bar', 'off', '-r', REQUIREMENTS],
    say,
  );
  writeFileSync(stampFile, stamp);
  return python;
}

/** One loop.py process: `run` a set of subagents at once, as many times as asked; `close` when done. */
export class DeerFlowLoop {
  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly lines: AsyncIterator<string>,
    /** The end of its log (stderr), for errors. */
    private readonly log: { tail: string },
    readonly info: DeerFlowLoopInfo,
  ) {}

  static async start(python: string, baseUrl: string): Promise<DeerFlowLoop> {
    const child = spawn(python, [LOOP, '--base-url', baseUrl]);
    const log = { tail: '' };
    child.stderr.on('data', (chunk: Buffer) => (log.tail = (log.tail + chunk.toString()).slice(-6000)));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const first = await lines.next();
    if (first.done) throw new Error(`loop.py ended before it was ready:\n${log.tail}`);
    const ready = JSON.parse(first.value) as DeerFlowLoopInfo;
    return new DeerFlowLoop(child, lines, log, { python: ready.python, versions: ready.versions });
  }

  /** Runs `tasks` as subagents at once (DeerFlow's scheduler pool and persistent loop); rejects if one failed. */
  async run(tasks: DeerFlowTask[], maxTurns: number): Promise<void> {
    this.child.stdin.write(`${JSON.stringify({ tasks, max_turns: maxTurns })}\n`);
    const answer = await this.lines.next();
    if (answer.done) throw new Error(`loop.py ended:\n${this.log.tail}`);
    const { results } = JSON.parse(answer.value) as { results: LoopResult[] };
    const failed = results.filter((r) => r.status !== 'completed');
    if (failed.length > 0) {
      throw new Error(
        `DeerFlow loop: ${failed.length} of ${results.length} subagent(s) did not complete: ` +
          `${failed.map((r) => r.error ?? r.status).join('; ')}\n${this.log.tail}`,
      );
    }
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGTERM'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
