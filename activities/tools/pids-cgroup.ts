import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';

const CGROUP_ROOT = '/sys/fs/cgroup';
const REMOVE_ATTEMPTS = 50;
const REMOVE_INTERVAL_MS = 20;
/** Moves the shell into the cgroup `$1`, then becomes the command that follows. */
const JOIN_CGROUP = 'echo $$ > "$1/cgroup.procs" || exit 126; shift; exec "$@"';

/** A pids cgroup made for one command: its process limit holds for root too, unlike RLIMIT_NPROC. */
export interface PidsCgroup {
  path: string;
  /** Kills whatever is left in it and removes it; never throws. */
  remove(): Promise<void>;
}

/**
 * The folder under which this worker may make pids cgroups: its own cgroup in the v1 `pids` hierarchy, or in
 * the v2 hierarchy when the pids controller is enabled for its children. Undefined when there is none.
 */
function pidsParent(): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return undefined;
  }
  for (const line of lines) {
    const [, controllers, own] = line.split(':');
    if (controllers?.split(',').includes('pids') && own !== undefined) {
      const parent = path.join(CGROUP_ROOT, 'pids', own);
      if (existsSync(path.join(parent, 'cgroup.procs'))) return parent;
    }
  }
  const unified = lines.find((line) => line.startsWith('0::'));
  if (unified === undefined) return undefined;
  const parent = path.join(CGROUP_ROOT, unified.slice(3));
  try {
    return readFileSync(path.join(parent, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')
      ? parent
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a command can really be put in a pids cgroup under `dir`: made, limited, joined by a shell (v2 also
 * asks for write access to the common ancestor) and removed again. Synchronous.
 */
function canUse(dir: string): boolean {
  const trial = path.join(dir, `durable-subagents-bash-probe-${randomUUID()}`);
  try {
    mkdirSync(trial);
  } catch {
    return false;
  }
  try {
    writeFileSync(path.join(trial, 'pids.max'), '8');
    execFileSync('sh', ['-c', JOIN_CGROUP, 'sh', trial, 'true'], { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  } finally {
    // The shell was waited for, so the cgroup is empty again.
    try {
      rmdirSync(trial);
    } catch {
      // Left behind: an empty cgroup, harmless.
    }
  }
}

/**
 * The folder under which commands on this machine get a pids cgroup, tried out; undefined when there is none.
 * Synchronous and slow-ish (a shell is started): `MachineProbes` asks once a process.
 */
export function findPidsCgroupParent(): string | undefined {
  const candidate = pidsParent();
  return candidate !== undefined && canUse(candidate) ? candidate : undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function removeCgroup(dir: string): Promise<void> {
  for (let attempt = 0; attempt < REMOVE_ATTEMPTS; attempt += 1) {
    try {
      const pids = (await readFile(path.join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean);
      for (const pid of pids) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // ESRCH: already gone.
        }
      }
      await rmdir(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      await sleep(REMOVE_INTERVAL_MS);
    }
  }
}

/**
 * Makes a pids cgroup limited to `maxProcesses` under `parent` (findPidsCgroupParent), or returns undefined
 * when this machine offers none to the worker (no pids controller, not writable): the rlimits still apply then.
 */
export async function makePidsCgroup(
  parent: string | undefined,
  maxProcesses: number,
): Promise<PidsCgroup | undefined> {
  if (parent === undefined) return undefined;
  const dir = path.join(parent, `durable-subagents-bash-${randomUUID()}`);
  try {
    await mkdir(dir);
  } catch {
    return undefined;
  }
  try {
    await writeFile(path.join(dir, 'pids.max'), String(maxProcesses));
  } catch {
    await removeCgroup(dir);
    return undefined;
  }
  return { path: dir, remove: () => removeCgroup(dir) };
}

/** A launch that first moves itself into the cgroup, so everything the command starts is counted. */
export function inCgroup(cgroup: PidsCgroup, file: string, args: string[]): { file: string; args: string[] } {
  return {
    file: 'sh',
    args: ['-c', JOIN_CGROUP, 'sh', cgroup.path, file, ...args],
  };
}
