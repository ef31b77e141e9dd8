/**
 * Project workers as processes of their own (`worker/worker-main.ts`), so a test or a benchmark can SIGKILL
 * one, and a fleet of them that is killed and restarted one worker at a time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';

export interface WorkerProcessOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  /**
   * A prebuilt workflow bundle (WORKFLOW_BUNDLE). Omitted: the worker's own choice, the build's bundle when it
   * matches the code (bench/worker-start.ts measures both).
   */
  bundlePath?: string;
  /** The worker's own log level (WARN by default); its logs go to this process's stderr. */
  logLevel?: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  env?: NodeJS.ProcessEnv;
  /** Given the worker's stderr (its logs) instead of this process's stderr. */
  onLog?: (text: string) => void;
  /** What the worker in fleet slot `slot` has besides `env` (its config, its host id): same slot, same host. */
  slotEnv?: (slot: number) => NodeJS.ProcessEnv;
  /** Node's own flags for the process (a profiler's, which NODE_OPTIONS does not take). */
  execArgv?: string[];
}

/** Starts a worker process; resolves once it polls. */
export async function spawnWorkerProcess(options: WorkerProcessOptions): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...options.env,
    TEMPORAL_ADDRESS: options.address,
    TEMPORAL_NAMESPACE: options.namespace,
    TASK_QUEUE: options.taskQueue,
    WORKER_LOG_LEVEL: options.logLevel ?? 'WARN',
  };
  if (options.bundlePath === undefined) delete env.WORKFLOW_BUNDLE;
  else env.WORKFLOW_BUNDLE = options.bundlePath;
  const args = [...(options.execArgv ?? []), require.resolve('../../worker/worker-main')];
  const child = spawn(process.execPath, args, {
    env,
    stdio: ['ignore', 'pipe', options.onLog ? 'pipe' : 'inherit'],
  });
  const { onLog } = options;
  if (onLog) child.stderr?.on('data', (chunk: Buffer) => onLog(chunk.toString('utf8')));
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      if (seen.includes('worker ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker process exited with code ${code} before polling`)));
  });
  return child;
}

/** The identity a worker process reports to the server (the SDK's default: `pid@host`). */
export function workerIdentity(pid: number): string {
  return `${pid}@${hostname()}`;
}

async function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** A fixed number of worker processes on one task queue; any one of them can be killed and replaced. */
export class WorkerFleet {
  private readonly workers: ChildProcess[] = [];

  constructor(
    private readonly options: WorkerProcessOptions,
    readonly size: number,
  ) {}

  async start(): Promise<void> {
    const started = await Promise.all(
      Array.from({ length: this.size }, (_, slot) => spawnWorkerProcess(this.slotOptions(slot))),
    );
    this.workers.push(...started);
  }

  private slotOptions(slot: number): WorkerProcessOptions {
    const extra = this.options.slotEnv?.(slot);
    return extra ? { ...this.options, env: { ...this.options.env, ...extra } } : this.options;
  }

  /** The process ids, by slot. */
  pids(): number[] {
    return this.workers.map((worker) => worker.pid ?? -1);
  }

  /** The slot of the worker that reported this identity, or -1. */
  slotOf(identity: string): number {
    return this.workers.findIndex(
      (worker) => worker.pid !== undefined && workerIdentity(worker.pid) === identity,
    );
  }

  /** SIGKILLs the worker in `slot` and waits until it is gone; returns the moment of the kill (epoch ms). */
  async kill(slot: number): Promise<number> {
    const worker = this.workers[slot];
    if (worker === undefined) throw new Error(`worker slot ${slot} does not exist (0–${this.size - 1})`);
    const at = Date.now();
    await killAndWait(worker);
    return at;
  }

  /** Starts a fresh worker in `slot` (after `kill`); resolves once it polls. */
  async restart(slot: number): Promise<void> {
    this.workers[slot] = await spawnWorkerProcess(this.slotOptions(slot));
  }

  /** Kills every worker: they hold no state of their own, the server keeps it all. */
  async stop(): Promise<void> {
    await Promise.all(this.workers.map(killAndWait));
  }
}
