/**
 * Where the bash tool can give each call a cgroup of its own, with a process limit (`pids`) and a memory limit
 * over all its processes together (`memory`): found once a process (`MachineProbes`), for each controller on
 * its own. A controller bound to a cgroup v1 hierarchy is used there, under the worker's own cgroup in it; one
 * offered by cgroup v2 is used under a cgroup of the worker's own subtree where it is enabled for children.
 *
 * cgroup v2 forbids processes in a cgroup that hands controllers to its children ("no internal processes"),
 * except at the root. So when the worker's cgroup does not hand out pids and memory yet, the worker moves the
 * processes of its cgroup into a leaf child, `durable-subagents-worker`, and then enables them, so that each
 * bash call's cgroup is a sibling of that leaf. This is what a systemd unit with `Delegate=yes` or a container
 * with a cgroup namespace of its own expects of the process it runs; a worker started later inside that leaf
 * finds it and uses the same parent. The real root of a v2 hierarchy is never emptied: there the controllers
 * are enabled in place, or not at all.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

export const CONTROLLERS = ['pids', 'memory'] as const;
export type Controller = (typeof CONTROLLERS)[number];

/** The cgroup under which each bash call gets a child cgroup for one controller. */
export interface ControllerParent {
  version: 1 | 2;
  dir: string;
}

export interface CgroupPlan {
  pids?: ControllerParent;
  memory?: ControllerParent;
  /** Why a controller is not used, for each one that is not. */
  missing: Partial<Record<Controller, string>>;
}

/** The leaf the worker's processes move to in a v2 cgroup that hands out controllers. */
export const WORKER_LEAF = 'durable-subagents-worker';
/** A bash call's cgroup: `durable-subagents-bash-<worker pid>-<uuid>` (the pid says whose it is). */
export const CALL_PREFIX = 'durable-subagents-bash-';

/** Moves the shell into each cgroup given before `--`, then becomes the command that follows. */
export const JOIN_CGROUPS =
  'while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 126; shift; done; shift; exec "$@"';

interface Mount {
  version: 1 | 2;
  /** The hierarchy's path that is mounted (`/` unless a cgroup namespace or a bind shows a part). */
  root: string;
  mountPoint: string;
  controllers: string[];
}

/** What the detection reads of this process; the real files unless a test gives its own. */
export interface CgroupSources {
  /** /proc/self/cgroup */
  cgroup: string;
  /** /proc/self/mountinfo */
  mountinfo: string;
}

const unescapeMount = (field: string): string =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));

export function cgroupMounts(mountinfo: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (right === undefined) continue;
    const fields = left.split(' ');
    const [fsType, , superOptions = ''] = right.split(' ');
    if (fsType !== 'cgroup' && fsType !== 'cgroup2') continue;
    mounts.push({
      version: fsType === 'cgroup2' ? 2 : 1,
      root: unescapeMount(fields[3]),
      mountPoint: unescapeMount(fields[4]),
      controllers: fsType === 'cgroup' ? superOptions.split(',') : [],
    });
  }
  return mounts;
}

/** The folder of the worker's own cgroup in `mount`, given its path in /proc/self/cgroup. */
function ownDir(mount: Mount, own: string): string | undefined {
  // resolve: no trailing slash for the mount's own root.
  if (mount.root === '/') return path.resolve(mount.mountPoint, `.${own}`);
  if (own !== mount.root && !own.startsWith(`${mount.root}/`)) return undefined;
  return path.resolve(mount.mountPoint, `.${own.slice(mount.root.length)}`);
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

const words = (text: string | undefined): string[] => (text ?? '').split(/\s+/).filter(Boolean);

const failure = (err: unknown): string =>
  (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));

/**
 * The v2 cgroup whose children may have `wanted` enabled, making it so where the worker may: see the file's
 * comment. A reason when it cannot.
 */
function v2Parent(own: string, wanted: Controller[]): { dir: string } | { reason: string } {
  const enabled = (dir: string): boolean => {
    const active = words(read(path.join(dir, 'cgroup.subtree_control')));
    return wanted.every((controller) => active.includes(controller));
  };
  if (enabled(own)) return { dir: own };
  let base = own;
  if (path.basename(own) === WORKER_LEAF) {
    base = path.dirname(own);
    if (enabled(base)) return { dir: base };
  } else if (existsSync(path.join(own, 'cgroup.type'))) {
    // Not the root: its processes move to a leaf first, or enabling is refused (EBUSY).
    const leaf = path.join(own, WORKER_LEAF);
    try {
      mkdirSync(leaf, { recursive: true });
      for (const pid of words(read(path.join(own, 'cgroup.procs')))) {
        try {
          writeFileSync(path.join(leaf, 'cgroup.procs'), pid);
        } catch (err) {
          // ESRCH: it exited meanwhile. Anything else leaves it behind, and enabling says so.
          if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
        }
      }
    } catch (err) {
      return { reason: `the worker could not move its processes into ${leaf} (${failure(err)})` };
    }
  }
  try {
    writeFileSync(path.join(base, 'cgroup.subtree_control'), wanted.map((c) => `+${c}`).join(' '));
  } catch (err) {
    return {
      reason: `enabling ${wanted.join(' and ')} in ${base}/cgroup.subtree_control was refused (${failure(err)})`,
    };
  }
  return { dir: base };
}

/**
 * Whether a bash call can really get a cgroup under each parent: made, limited, joined by a shell and removed
 * again. A reason when it cannot.
 */
function trial(parents: ControllerParent[]): string | undefined {
  const made: string[] = [];
  try {
    for (const parent of parents) {
      const dir = path.join(parent.dir, `${CALL_PREFIX}probe-${randomUUID()}`);
      mkdirSync(dir);
      made.push(dir);
    }
    execFileSync('sh', ['-c', JOIN_CGROUPS, 'sh', ...made, '--', 'true'], {
      stdio: 'ignore',
      timeout: 10_000,
    });
    return undefined;
  } catch (err) {
    return `a trial cgroup under ${parents.map((p) => p.dir).join(' and ')} could not be made and joined (${failure(err)})`;
  } finally {
    // The shell was waited for, so each is empty again.
    for (const dir of made) {
      try {
        rmdirSync(dir);
      } catch {
        // Left behind: an empty cgroup, harmless.
      }
    }
  }
}

/** Where each controller can be used on this machine, tried out; see the file's comment. Synchronous. */
export function findCgroupPlan(sources?: CgroupSources): CgroupPlan {
  const cgroup = sources?.cgroup ?? read('/proc/self/cgroup');
  const mountinfo = sources?.mountinfo ?? read('/proc/self/mountinfo');
  if (cgroup === undefined || mountinfo === undefined) {
    const reason = '/proc/self/cgroup or /proc/self/mountinfo cannot be read (not Linux?)';
    return { missing: { pids: reason, memory: reason } };
  }
  const lines = cgroup
    .trim()
    .split('\n')
    .map((line) => {
      const [, controllers = '', own = ''] = line.split(':');
      return { controllers: controllers.split(','), own };
    });
  const mounts = cgroupMounts(mountinfo);
  const plan: CgroupPlan = { missing: {} };
  const viaV2: Controller[] = [];
  for (const controller of CONTROLLERS) {
    const v1 = mounts.find((mount) => mount.version === 1 && mount.controllers.includes(controller));
    if (v1 === undefined) {
      viaV2.push(controller);
      continue;
    }
    const own = lines.find((line) => line.controllers.includes(controller))?.own;
    const dir = own === undefined ? undefined : ownDir(v1, own);
    if (dir === undefined || !existsSync(path.join(dir, 'cgroup.procs'))) {
      plan.missing[controller] =
        `the worker's own cgroup in the v1 ${controller} hierarchy is not visible under ${v1.mountPoint}`;
    } else {
      plan[controller] = { version: 1, dir };
    }
  }
  if (viaV2.length > 0) {
    const v2 = mounts.find((mount) => mount.version === 2);
    const own = lines.find((line) => line.controllers.join(',') === '')?.own;
    const dir = v2 === undefined || own === undefined ? undefined : ownDir(v2, own);
    const offered = dir === undefined ? [] : words(read(path.join(dir, 'cgroup.controllers')));
    const usable = viaV2.filter((controller) => offered.includes(controller));
    for (const controller of viaV2.filter((c) => !usable.includes(c))) {
      plan.missing[controller] =
        v2 === undefined || dir === undefined
          ? `no cgroup hierarchy offers the ${controller} controller to the worker`
          : `cgroup v2 (${v2.mountPoint}) does not offer the ${controller} controller to the worker's cgroup ${dir}`;
    }
    if (dir !== undefined && usable.length > 0) {
      const parent = v2Parent(dir, usable);
      for (const controller of usable) {
        if ('dir' in parent) plan[controller] = { version: 2, dir: parent.dir };
        else plan.missing[controller] = parent.reason;
      }
    }
  }
  const parents = distinctParents(plan);
  if (parents.length === 0) return plan;
  const failed = trial(parents);
  if (failed === undefined) return plan;
  return { missing: { pids: plan.missing.pids ?? failed, memory: plan.missing.memory ?? failed } };
}

/** The parents a call's cgroups go under: one for v2 (both controllers in one cgroup), one a hierarchy for v1. */
export function distinctParents(plan: CgroupPlan): ControllerParent[] {
  const parents: ControllerParent[] = [];
  for (const controller of CONTROLLERS) {
    const parent = plan[controller];
    if (parent !== undefined && !parents.some((p) => p.dir === parent.dir)) parents.push(parent);
  }
  return parents;
}

/**
 * The calls' cgroups that workers which are gone left behind under `parents` (a worker killed in a call
 * leaves its cgroup): their names end with the pid of a worker that no longer runs.
 */
export function strayCallCgroups(parents: readonly ControllerParent[]): string[] {
  const stray: string[] = [];
  for (const parent of parents) {
    let names: string[];
    try {
      names = readdirSync(parent.dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = /^durable-subagents-bash-(\d+)-/.exec(name)?.[1];
      if (pid === undefined || pidRuns(Number(pid))) continue;
      stray.push(path.join(parent.dir, name));
    }
  }
  return stray;
}

function pidRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
