/**
 * The cgroup of one bash call (cgroup-plan.ts says where): `pids.max` bounds its processes and threads, for
 * root too (RLIMIT_NPROC does not bind root), and `memory.max` (v1: `memory.limit_in_bytes`) bounds the memory
 * of all its processes together, where the rlimit bounds each process alone. The command joins it before it
 * runs (JOIN_CGROUPS), so everything it starts is counted; afterwards whatever is left in it is killed and it
 * is removed.
 */
import { randomUUID } from 'node:crypto';
import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import {
  CALL_PREFIX,
  distinctParents,
  JOIN_CGROUPS,
  type CgroupPlan,
  type ControllerParent,
} from './cgroup-plan';

/** How long `remove()` waits for a call's processes to die; a cgroup still busy then is retried in the background. */
const REMOVE_WAIT_MS = 5_000;
const BACKGROUND_REMOVE_MS = 120_000;
const MIB = 1024 * 1024;

export interface CallLimits {
  maxProcesses: number;
  maxTotalMemoryMb: number;
}

/** What a call ran into: forks refused at pids.max, processes the kernel killed at the memory limit. */
export interface CgroupEvents {
  forksRefused: number;
  oomKills: number;
}

export interface CallCgroup {
  /** The cgroups to join, one a hierarchy. */
  dirs: string[];
  events(): Promise<CgroupEvents>;
  /** Kills whatever is left in it and removes it; never throws. */
  remove(): Promise<void>;
}

/** One line for `doctor` and the docs: which limits a bash call gets here. */
export function describeCgroupLimits(plan: CgroupPlan, limits: CallLimits): string {
  const { pids, memory } = plan;
  if (pids === undefined && memory === undefined) {
    const reasons = [...new Set([plan.missing.pids, plan.missing.memory])].filter(Boolean);
    return `ulimit only: ${reasons.join('; ')}`;
  }
  const parts: string[] = [];
  if (pids) parts.push(`pids.max ${limits.maxProcesses}`);
  if (memory) {
    parts.push(
      `${memory.version === 2 ? 'memory.max' : 'memory.limit_in_bytes'} ${limits.maxTotalMemoryMb} MiB`,
    );
  }
  const versions = [...new Set([pids?.version, memory?.version].filter((v) => v !== undefined))];
  const head = `cgroup v${versions.join(' and v')}: ${parts.join(', ')} per bash call`;
  const lacking = pids === undefined ? 'processes' : memory === undefined ? 'memory' : undefined;
  if (lacking === undefined) return head;
  const reason = pids === undefined ? plan.missing.pids : plan.missing.memory;
  return `${head}; ${lacking} bounded by ulimit only (${reason})`;
}

async function writeIfPresent(file: string, value: string): Promise<void> {
  try {
    await access(file);
  } catch {
    return;
  }
  await writeFile(file, value);
}

async function setLimits(
  dir: string,
  parent: ControllerParent,
  plan: CgroupPlan,
  limits: CallLimits,
): Promise<void> {
  if (plan.pids?.dir === parent.dir) await writeFile(path.join(dir, 'pids.max'), String(limits.maxProcesses));
  if (plan.memory?.dir !== parent.dir) return;
  const bytes = String(limits.maxTotalMemoryMb * MIB);
  if (parent.version === 2) {
    await writeFile(path.join(dir, 'memory.max'), bytes);
    // Without swap the limit is the limit: past it the kernel kills, rather than swapping the call out.
    await writeIfPresent(path.join(dir, 'memory.swap.max'), '0');
  } else {
    await writeFile(path.join(dir, 'memory.limit_in_bytes'), bytes);
    // memory + swap: set after memory, which it may not be below.
    await writeIfPresent(path.join(dir, 'memory.memsw.limit_in_bytes'), bytes);
  }
}

/** `key value` lines (pids.events, memory.events, v1's memory.oom_control): the value of `key`, else 0. */
function counter(text: string | undefined, key: string): number {
  const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(text ?? '');
  return match === null ? 0 : Number(match[1]);
}

const readOrUndefined = (file: string): Promise<string | undefined> =>
  readFile(file, 'utf8').catch(() => undefined);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Kills what is in `dir` (cgroup.kill where the kernel has it, else each process) and removes it. */
async function removeOnce(dir: string): Promise<'removed' | 'busy'> {
  try {
    await writeIfPresent(path.join(dir, 'cgroup.kill'), '1');
    const pids = (await readFile(path.join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean);
    for (const pid of pids) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // ESRCH: already gone.
      }
    }
    await rmdir(dir);
    return 'removed';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'removed' : 'busy';
  }
}

/**
 * Removes `dir`, waiting up to REMOVE_WAIT_MS for its processes to die (a killed fork bomb on a busy machine
 * takes a while); past that the call returns and the removal goes on in the background, so a slow kill
 * leaves no cgroup behind and holds no call up.
 */
export async function removeCgroup(dir: string, waitMs = REMOVE_WAIT_MS): Promise<void> {
  const started = Date.now();
  let pause = 5;
  while ((await removeOnce(dir)) === 'busy') {
    if (Date.now() - started > waitMs) {
      if (waitMs < BACKGROUND_REMOVE_MS) {
        setTimeout(() => void removeCgroup(dir, BACKGROUND_REMOVE_MS), 1000).unref();
      }
      return;
    }
    await sleep(pause);
    pause = Math.min(pause * 2, 250);
  }
}

/**
 * Makes a bash call's cgroups under the plan's parents, limited; undefined when the plan has none. A parent
 * that refuses a child (removed since the probe) is not fatal: the rlimits still apply, as without cgroups.
 */
export async function makeCallCgroup(plan: CgroupPlan, limits: CallLimits): Promise<CallCgroup | undefined> {
  const parents = distinctParents(plan);
  if (parents.length === 0) return undefined;
  const name = `${CALL_PREFIX}${process.pid}-${randomUUID()}`;
  const dirs: string[] = [];
  const remove = async (): Promise<void> => {
    await Promise.all(dirs.map((dir) => removeCgroup(dir)));
  };
  try {
    for (const parent of parents) {
      const dir = path.join(parent.dir, name);
      await mkdir(dir);
      dirs.push(dir);
      await setLimits(dir, parent, plan, limits);
    }
  } catch {
    await remove();
    return undefined;
  }
  const pidsDir = plan.pids && path.join(plan.pids.dir, name);
  const memory = plan.memory;
  const memoryDir = memory && path.join(memory.dir, name);
  return {
    dirs,
    remove,
    events: async () => ({
      forksRefused: pidsDir ? counter(await readOrUndefined(path.join(pidsDir, 'pids.events')), 'max') : 0,
      oomKills: memoryDir
        ? counter(
            await readOrUndefined(
              path.join(memoryDir, memory.version === 2 ? 'memory.events' : 'memory.oom_control'),
            ),
            'oom_kill',
          )
        : 0,
    }),
  };
}

/** A launch that first moves itself into the call's cgroups, so everything the command starts is counted. */
export function inCallCgroup(
  cgroup: CallCgroup,
  file: string,
  args: string[],
): { file: string; args: string[] } {
  return { file: 'sh', args: ['-c', JOIN_CGROUPS, 'sh', ...cgroup.dirs, '--', file, ...args] };
}

/** What the model reads after the output when a call met its cgroup limits; empty when it met none. */
export function limitNotes(events: CgroupEvents, limits: CallLimits): string {
  const notes: string[] = [];
  if (events.forksRefused > 0) {
    const times = events.forksRefused === 1 ? 'once' : `${events.forksRefused} times`;
    notes.push(
      `[process limit reached: starting a process was refused ${times}, at ${limits.maxProcesses} ` +
        'processes and threads for this call (sandbox.max_processes)]',
    );
  }
  if (events.oomKills > 0) {
    const killed = events.oomKills === 1 ? '1 process' : `${events.oomKills} processes`;
    notes.push(
      `[memory limit reached: the kernel killed ${killed} at ${limits.maxTotalMemoryMb} MiB for all of this ` +
        "call's processes together (sandbox.max_total_memory_mb)]",
    );
  }
  return notes.map((note) => `${note}\n`).join('');
}
