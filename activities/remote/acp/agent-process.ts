/**
 * An ACP agent's process: spawned in a process group of its own (so whatever it starts goes with it), stdio
 * piped, the tail of its stderr kept for error messages, and always stopped the same way: stdin closed, then
 * SIGTERM to the group, then SIGKILL after a grace, and reaped. Nothing it started outlives `stop()`, nor the
 * worker: a watchdog beside it kills the group when the worker dies without stopping it (SIGKILL, a crash),
 * which an agent that ignores its stdin closing would otherwise outlive.
 */
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { clearTimeout, setTimeout } from 'node:timers';

/** Characters of the agent's stderr kept (the tail): enough for a stack trace's head and its last lines. */
const STDERR_TAIL_CHARS = 8192;
/** How long an agent whose stdin closed has to exit on its own before SIGTERM. */
const STDIN_GRACE_MS = 1000;
/** How long it then has before SIGKILL. */
const TERM_GRACE_MS = 3000;
/** SIGKILL cannot be refused; this only bounds a wait on a process stuck in the kernel. */
const KILL_WAIT_MS = 10_000;

export interface AgentExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The command could not be started at all (not found, not executable): no retry can fix it. */
export class AgentSpawnError extends Error {
  override name = 'AgentSpawnError';
}

export interface AgentLaunch {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Kills the process group `$1` once its standard input ends: when the worker that holds the other end dies
 * (the kernel closes the pipe), never before. In a group of its own, so a signal to the worker's terminal group
 * does not take it first; `stop()` kills it once the agent is gone.
 */
const WATCHDOG_SCRIPT = 'cat >/dev/null; kill -KILL "-$1" 2>/dev/null';

function startWatchdog(group: number): ChildProcess | undefined {
  try {
    const watchdog = spawn('/bin/sh', ['-c', WATCHDOG_SCRIPT, 'watchdog', String(group)], {
      detached: true,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    watchdog.on('error', () => undefined);
    watchdog.stdin?.on('error', () => undefined);
    // The worker may exit while it runs (the pipe ends it then); it never keeps the worker alive.
    watchdog.unref();
    (watchdog.stdin as { unref?: () => void } | null)?.unref?.();
    return watchdog;
  } catch {
    return undefined;
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** `exit` in words: `exited with code 3`, `was killed by SIGKILL`. */
export function describeExit(exit: AgentExit): string {
  return exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? '?'}`;
}

export class AgentProcess {
  private tail = '';
  private exitInfo: AgentExit | undefined;
  /** Settles once the agent has exited and been reaped. */
  readonly exited: Promise<AgentExit>;

  private readonly watchdog: ChildProcess | undefined;

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    readonly pid: number,
  ) {
    this.watchdog = startWatchdog(pid);
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        // What the agent left running in its group goes with it; the watchdog has nothing left to watch.
        signalGroup(pid, 'SIGKILL');
        this.watchdog?.kill('SIGKILL');
        resolve(this.exitInfo);
      });
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.tail = (this.tail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // A write to an agent that has exited (EPIPE) ends the connection; the exit says why.
    for (const stream of [child.stdin, child.stdout, child.stderr]) stream.on('error', () => undefined);
    child.on('error', () => undefined);
  }

  /** Spawns the agent; an AgentSpawnError when its command cannot be started. */
  static start(launch: AgentLaunch): Promise<AgentProcess> {
    return new Promise((resolve, reject) => {
      const child = spawn(launch.command, [...launch.args], {
        cwd: launch.cwd,
        env: launch.env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const onError = (err: NodeJS.ErrnoException): void => {
        child.off('spawn', onSpawn);
        reject(new AgentSpawnError(spawnProblem(launch.command, err)));
      };
      const onSpawn = (): void => {
        child.off('error', onError);
        resolve(new AgentProcess(child, child.pid as number));
      };
      child.once('error', onError);
      child.once('spawn', onSpawn);
    });
  }

  get stdin(): ChildProcessWithoutNullStreams['stdin'] {
    return this.child.stdin;
  }

  get stdout(): ChildProcessWithoutNullStreams['stdout'] {
    return this.child.stdout;
  }

  /** How it exited, once it has. */
  get exit(): AgentExit | undefined {
    return this.exitInfo;
  }

  /** The last of what it wrote to stderr, trimmed; `''` when nothing. */
  stderrTail(chars = 2000): string {
    const text = this.tail.trim();
    return text.length > chars ? `…${text.slice(-chars)}` : text;
  }

  /** Stops the agent and everything in its group, and waits until it is reaped. Safe to call more than once. */
  async stop(): Promise<void> {
    if (this.exitInfo === undefined) {
      this.child.stdin.end();
      if (!(await this.exitsWithin(STDIN_GRACE_MS))) {
        signalGroup(this.pid, 'SIGTERM');
        if (!(await this.exitsWithin(TERM_GRACE_MS))) {
          signalGroup(this.pid, 'SIGKILL');
          await this.exitsWithin(KILL_WAIT_MS);
        }
      }
    }
    signalGroup(this.pid, 'SIGKILL');
    // Killed, not let go by ending its input: the group's id may belong to another group by the time it would act.
    this.watchdog?.kill('SIGKILL');
    this.child.stdout.destroy();
    this.child.stderr.destroy();
  }

  private async exitsWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    });
    try {
      return await Promise.race([this.exited.then(() => true as const), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function spawnProblem(command: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ENOENT') {
    return command.includes('/')
      ? `${command} does not exist (or the workspace, its working directory, does not)`
      : `${command} was not found on the PATH`;
  }
  if (err.code === 'EACCES') return `${command} is not executable`;
  return `${command} could not be started: ${err.message}`;
}
