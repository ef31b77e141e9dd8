import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describeCgroupLimits, limitNotes } from '../../../../activities/tools/call-cgroup';
import { cgroupMounts, findCgroupPlan, WORKER_LEAF } from '../../../../activities/tools/cgroup-plan';

// A cgroup v2 tree played by plain files: what the worker reads and writes, not what the kernel enforces
// (bash-limits.test.ts runs the real thing where this machine has it).
let root: string;

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'cgroup-plan-'));
});

afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

function cgroup(relative: string, files: Record<string, string>): string {
  const dir = path.join(root, relative);
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return dir;
}

const v2Only = (own: string) => ({
  cgroup: `0::${own}\n`,
  mountinfo: `41 31 0:38 / ${root} rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n`,
});

describe('findCgroupPlan on cgroup v2', () => {
  it("moves the worker's processes into a leaf, then hands pids and memory to the calls' cgroups", () => {
    const own = cgroup('system.slice/worker.service', {
      'cgroup.type': 'domain\n',
      'cgroup.controllers': 'cpu io memory pids\n',
      'cgroup.subtree_control': '\n',
      'cgroup.procs': '4242\n',
    });
    const plan = findCgroupPlan(v2Only('/system.slice/worker.service'));
    expect(plan).toEqual({ pids: { version: 2, dir: own }, memory: { version: 2, dir: own }, missing: {} });
    expect(readFileSync(path.join(own, WORKER_LEAF, 'cgroup.procs'), 'utf8')).toBe('4242');
    expect(readFileSync(path.join(own, 'cgroup.subtree_control'), 'utf8')).toBe('+pids +memory');
  });

  it('uses the parent of a leaf that already hands them out (a second worker started inside it)', () => {
    const parent = cgroup('svc', { 'cgroup.type': 'domain\n', 'cgroup.subtree_control': 'memory pids\n' });
    cgroup(`svc/${WORKER_LEAF}`, { 'cgroup.type': 'domain\n', 'cgroup.controllers': 'memory pids\n' });
    expect(findCgroupPlan(v2Only(`/svc/${WORKER_LEAF}`))).toMatchObject({
      pids: { version: 2, dir: parent },
      memory: { version: 2, dir: parent },
    });
    expect(readFileSync(path.join(parent, 'cgroup.subtree_control'), 'utf8')).toBe('memory pids\n');
  });

  it('never empties the root of the hierarchy: enables the controllers in place', () => {
    cgroup('', {
      'cgroup.controllers': 'memory pids\n',
      'cgroup.subtree_control': '',
      'cgroup.procs': '1\n',
    });
    expect(findCgroupPlan(v2Only('/'))).toMatchObject({ pids: { version: 2, dir: root } });
    expect(existsSync(path.join(root, WORKER_LEAF))).toBe(false);
  });

  it('says why where v2 offers neither controller (a hybrid machine, its controllers on v1 mounts)', () => {
    cgroup('', { 'cgroup.controllers': '\n' });
    const plan = findCgroupPlan(v2Only('/'));
    expect(plan).toEqual({
      missing: {
        pids: `cgroup v2 (${root}) does not offer the pids controller to the worker's cgroup ${root}`,
        memory: `cgroup v2 (${root}) does not offer the memory controller to the worker's cgroup ${root}`,
      },
    });
    expect(describeCgroupLimits(plan, { maxProcesses: 256, maxTotalMemoryMb: 4096 })).toBe(
      `ulimit only: cgroup v2 (${root}) does not offer the pids controller to the worker's cgroup ${root}; ` +
        `cgroup v2 (${root}) does not offer the memory controller to the worker's cgroup ${root}`,
    );
  });

  it('uses the v1 hierarchies where the controllers are bound', () => {
    const pids = cgroup('pids', { 'cgroup.procs': '' });
    const memory = cgroup('memory/box', { 'cgroup.procs': '' });
    const plan = findCgroupPlan({
      cgroup: '8:pids:/\n4:memory:/box\n0::/\n',
      mountinfo:
        `35 31 0:32 / ${root}/memory rw,relatime - cgroup cgroup rw,memory\n` +
        `39 31 0:36 / ${root}/pids rw,relatime - cgroup cgroup rw,pids\n`,
    });
    expect(plan).toEqual({
      pids: { version: 1, dir: pids },
      memory: { version: 1, dir: memory },
      missing: {},
    });
    expect(describeCgroupLimits(plan, { maxProcesses: 256, maxTotalMemoryMb: 4096 })).toBe(
      'cgroup v1: pids.max 256, memory.limit_in_bytes 4096 MiB per bash call',
    );
  });
});

describe('cgroupMounts', () => {
  it('reads v1 controllers, v2, and escaped mount points', () => {
    expect(
      cgroupMounts(
        '39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n' +
          '41 31 0:38 /box /a\\040b rw - cgroup2 cgroup2 rw\n' +
          '22 1 0:21 / /proc rw - proc proc rw\n',
      ),
    ).toEqual([
      { version: 1, root: '/', mountPoint: '/sys/fs/cgroup/pids', controllers: ['rw', 'pids'] },
      { version: 2, root: '/box', mountPoint: '/a b', controllers: [] },
    ]);
  });
});

describe('describeCgroupLimits and limitNotes', () => {
  it('say what holds per call, and what a call ran into', () => {
    const dir = '/sys/fs/cgroup/svc';
    expect(
      describeCgroupLimits(
        { pids: { version: 2, dir }, memory: { version: 2, dir }, missing: {} },
        { maxProcesses: 64, maxTotalMemoryMb: 512 },
      ),
    ).toBe('cgroup v2: pids.max 64, memory.max 512 MiB per bash call');
    expect(
      describeCgroupLimits(
        { pids: { version: 1, dir }, missing: { memory: 'no memory here' } },
        { maxProcesses: 64, maxTotalMemoryMb: 512 },
      ),
    ).toBe('cgroup v1: pids.max 64 per bash call; memory bounded by ulimit only (no memory here)');
    expect(limitNotes({ forksRefused: 0, oomKills: 0 }, { maxProcesses: 64, maxTotalMemoryMb: 512 })).toBe(
      '',
    );
    expect(limitNotes({ forksRefused: 3, oomKills: 1 }, { maxProcesses: 64, maxTotalMemoryMb: 512 })).toBe(
      '[process limit reached: starting a process was refused 3 times, at 64 processes and threads for this call (sandbox.max_processes)]\n' +
        "[memory limit reached: the kernel killed 1 process at 512 MiB for all of this call's processes together (sandbox.max_total_memory_mb)]\n",
    );
  });
});
