/**
 * Worker hosts played on one machine: each `subagents worker` runs in a mount namespace of its own with a
 * private tmpfs on the workspace root, so every host sees its own empty disk there while the rest of the file
 * system (the build, the model scripts, a local payload store) is shared, as a shared bucket is. Killing a host
 * SIGKILLs its whole process group; its tmpfs, and every file on it, is gone with the last process.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readlinkSync } from 'node:fs';

const CLI = require.resolve('../../client/cli');

function mountNamespaceOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/** Why hosts cannot be played here (not root, no `unshare`), or undefined when they can. */
export function hostsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'mount namespaces need root';
  const probe = spawnSync('unshare', ['-m', '--propagation', 'private', 'true'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return 'unshare -m does not work on this machine';
  return undefined;
}

export interface HostOptions {
  /** For messages. */
  name: string;
  /** The workspace root: a tmpfs of the host's own is mounted here (the folder must exist). */
  root: string;
  address: string;
  namespace: string;
  taskQueue: string;
  /** The worker's config file. */
  config: string;
  env?: NodeJS.ProcessEnv;
  /** The worker's stderr, line by line (its logs). */
  onLog?: (line: string) => void;
}

/** One worker host: a `subagents worker` in its own mount namespace. */
export class Host {
  /** The start lines the worker printed (`worker ready: …`, `workspaces: home host …`). */
  readonly startLines: string[] = [];

  private constructor(
    readonly options: HostOptions,
    private readonly child: ChildProcess,
  ) {}

  /** Starts the host; resolves once its worker polls. */
  static async start(options: HostOptions): Promise<Host> {
    const script = 'mount -t tmpfs -o size=1g tmpfs "$0" && exec "$@"';
    const worker = [CLI, 'worker', '--address', options.address, '--namespace', options.namespace];
    const args = ['-m', '--propagation', 'private', 'sh', '-c', script, options.root, process.execPath];
    const child = spawn(
      'unshare',
      [...args, ...worker, '--task-queue', options.taskQueue, '--config', options.config],
      {
        env: { ...process.env, ...options.env, SUBAGENTS_LOG_LEVEL: 'WARN' },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group: a kill takes the host's every process (bash calls included).
        detached: true,
      },
    );
    const host = new Host(options, child);
    let errors = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      errors = `${errors}${text}`.slice(-4000);
      for (const line of text.split('\n')) if (line) options.onLog?.(`${options.name}: ${line}`);
    });
    await new Promise<void>((resolve, reject) => {
      let seen = '';
      child.stdout?.on('data', (chunk: Buffer) => {
        seen += chunk.toString('utf8');
        const lines = seen.split('\n');
        seen = lines.pop() ?? '';
        host.startLines.push(...lines);
        if (host.startLines.some((line) => line.startsWith('worker ready'))) resolve();
      });
      child.once('exit', (code) =>
        reject(new Error(`host ${options.name} exited with code ${code} before polling:\n${errors}`)),
      );
    });
    return host;
  }

  /** The host id its worker serves under (from its start line). */
  get hostId(): string {
    const line = this.startLines.find((candidate) => candidate.startsWith('workspaces: '));
    const id = /host ([A-Za-z0-9._-]+)/.exec(line ?? '')?.[1];
    if (!id) throw new Error(`host ${this.options.name} printed no host id: ${this.startLines.join(' | ')}`);
    return id;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * SIGKILLs every process of the host at once — its group, and whatever else lives in its mount namespace (a
   * bash call in a session of its own) — and waits until its worker is gone.
   */
  async kill(): Promise<void> {
    const pid = this.child.pid;
    if (!this.alive || pid === undefined) return;
    const exited = once(this.child, 'exit');
    const namespace = mountNamespaceOf(pid);
    const victims = new Set([-pid]);
    if (namespace !== undefined) {
      for (const entry of readdirSync('/proc')) {
        if (/^[0-9]+$/.test(entry) && mountNamespaceOf(Number(entry)) === namespace)
          victims.add(Number(entry));
      }
    }
    for (const victim of victims) {
      try {
        process.kill(victim, 'SIGKILL');
      } catch {
        // Gone already.
      }
    }
    await exited;
  }
}
