import { existsSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { runBash } from '../../../../activities/tools/bash';
import { machineProbes } from '../../../../activities/tools/machine-probes';
import { parseConfig } from '../../../../contracts/config';
import { DEFAULT_SANDBOX, type SandboxKind, type SandboxSettings } from '../../../../contracts/tools';
import { SHIPPED_SANDBOXES, sandboxRuns } from '../../../support/sandboxes';
import { makeFixture, removeFixture, type Fixture } from './workspace-fixture';

let fx: Fixture;

beforeEach(async () => {
  fx = await makeFixture();
});

afterEach(async () => {
  await removeFixture(fx);
});

const bubblewrap = SHIPPED_SANDBOXES.find((s) => s.kind === 'bubblewrap');
const SANDBOX: SandboxKind = 'bubblewrap';
const HOST: SandboxKind = 'host';
// just-bash's limits are tested in just-bash.test.ts: it has no ulimit, no /dev/zero and starts no process.
const probes = machineProbes();
const WHERE: [string, SandboxKind][] = [
  ['in bubblewrap', SANDBOX],
  ['on the host', HOST],
];
/** Where bubblewrap cannot start, its cases are shown skipped (a failure under SUBAGENTS_REQUIRE_SANDBOX=1). */
const inBubblewrap = bubblewrap !== undefined && sandboxRuns(bubblewrap);

/** `it.each(WHERE)`, each case skipped where it cannot hold (`holds`) or its sandbox cannot start. */
function itEachWhere(
  title: string,
  test: (where: string, kind: SandboxKind) => Promise<void>,
  holds = true,
): void {
  for (const [where, kind] of WHERE) {
    const runs = holds && (kind !== SANDBOX || inBubblewrap);
    (runs ? it : it.skip)(title.replace('%s', where), () => test(where, kind));
  }
}

async function bash(kind: SandboxKind, command: string, sandbox: Partial<SandboxSettings> = {}) {
  return runBash(
    { command },
    {
      workspace: fx.workspace,
      workspaceReal: fx.workspace,
      sandbox: { ...DEFAULT_SANDBOX, allow_host_bash: true, kind, ...sandbox },
    },
    probes,
  );
}

/** Forks children that sleep, up to 1,000, and says how many it started. */
const FORK_LOOP = `
import os, time
started = 0
for _ in range(1000):
    try:
        pid = os.fork()
    except OSError as error:
        print('fork failed:', error.strerror)
        break
    if pid == 0:
        time.sleep(5)
        os._exit(0)
    started += 1
print('started', started)
`;
import { sandboxProblems } from '../../../support/config-problems';
import { itWhere } from '../../../support/required';

const cgroups = probes.cgroups();
/** RLIMIT_NPROC does not bind root; a pids cgroup does. Elsewhere the process limit cannot hold. */
const processLimitHolds = process.getuid?.() !== 0 || cgroups.pids !== undefined;
const missingCgroup = (controller: 'pids' | 'memory'): string | undefined =>
  cgroups[controller] === undefined ? cgroups.missing[controller] : undefined;

describe('bash resource limits', () => {
  itEachWhere('apply their defaults when the settings name none (%s)', async (_where, kind) => {
    const result = await bash(kind, 'ulimit -u; ulimit -v; ulimit -f; ulimit -St; ulimit -Ht');
    expect(result.content).toBe('256\n4194304\n1048576\n120\n121\n[exit code: 0]');
  });

  itEachWhere(
    'stop a fork loop at max_processes, and the next command runs (%s)',
    async (_where, kind) => {
      await writeFile(path.join(fx.workspace, 'forks.py'), FORK_LOOP);
      const result = await bash(kind, 'python3 forks.py', { max_processes: 50 });
      expect(result.content).toContain('fork failed: Resource temporarily unavailable');
      const started = Number(/started (\d+)/.exec(result.content)?.[1]);
      expect(started).toBeLessThan(50);
      expect(started).toBeGreaterThanOrEqual(40);
      expect(await bash(kind, 'echo still fine')).toEqual({
        content: 'still fine\n[exit code: 0]',
        is_error: false,
      });
    },
    processLimitHolds,
  );

  itEachWhere('make a memory hog fail at max_memory_mb (%s)', async (_where, kind) => {
    const result = await bash(
      kind,
      'head -c 1G /dev/zero | tail | wc -c; python3 -c "bytearray(1024 ** 3)" 2>&1 | tail -1',
      { max_memory_mb: 256 },
    );
    expect(result.content).toBe('tail: memory exhausted\n0\nMemoryError\n[exit code: 0]');
  });

  itEachWhere('cut a file at max_file_size_mb (%s)', async (_where, kind) => {
    const result = await bash(kind, 'head -c 3M /dev/zero > big.bin; echo after', { max_file_size_mb: 1 });
    expect(result.content).toContain('File size limit exceeded');
    // The shell's notice comes on stderr, `after` on stdout: which pipe is read first is the machine's to say.
    expect(result.content).toMatch(/^after$/m);
    expect(result.content).toMatch(/\n\[exit code: 0\]$/);
    expect(statSync(path.join(fx.workspace, 'big.bin')).size).toBe(1024 * 1024);
  });

  itEachWhere('stop a busy loop at max_cpu_seconds (%s)', async (_where, kind) => {
    const started = Date.now();
    const result = await bash(kind, "sh -c 'while :; do :; done'; echo status $?", { max_cpu_seconds: 1 });
    expect(result.content).toMatch(/CPU time limit exceeded.*\nstatus 152\n\[exit code: 0\]$/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  itWhere(
    'cgroups',
    'a pids cgroup for each bash call',
    missingCgroup('pids'),
  )('leave no cgroup behind, nor anything that left the process group', async () => {
    const result = await bash(
      HOST,
      'setsid sleep 30 & echo $! > sleeper.pid; grep -o "durable-subagents-bash-[^/]*" /proc/self/cgroup',
    );
    const names = [...new Set(result.content.split('\n').filter((line) => line.startsWith('durable-')))];
    expect(names).toHaveLength(1);
    for (const parent of new Set([cgroups.pids?.dir, cgroups.memory?.dir])) {
      if (parent !== undefined) expect(existsSync(path.join(parent, names[0]))).toBe(false);
    }
    const sleeper = Number(readFileSync(path.join(fx.workspace, 'sleeper.pid'), 'utf8'));
    // Gone, or a zombie left to an init that does not reap (as in some containers): not running.
    const state = existsSync(`/proc/${sleeper}/stat`)
      ? readFileSync(`/proc/${sleeper}/stat`, 'utf8').split(') ')[1][0]
      : 'gone';
    expect(['gone', 'Z']).toContain(state);
  });
});

describe('bash cgroup limits (root: RLIMIT_NPROC does not bind it, the cgroup does)', () => {
  const asRoot = process.getuid?.() === 0 ? undefined : 'the worker is not root: RLIMIT_NPROC holds already';
  itWhere(
    'cgroups',
    'a pids cgroup for each bash call',
    missingCgroup('pids') ?? asRoot,
  )('stop a fork loop at max_processes and tell the model so', async () => {
    await writeFile(path.join(fx.workspace, 'forks.py'), FORK_LOOP);
    const result = await bash(HOST, 'python3 forks.py', { max_processes: 30 });
    const started = Number(/started (\d+)/.exec(result.content)?.[1]);
    expect(started).toBeLessThan(30);
    expect(result.content).toMatch(
      /\[process limit reached: starting a process was refused (once|\d+ times), at 30 processes and threads for this call \(sandbox\.max_processes\)\]\n\[exit code: 0\]$/,
    );
  });

  itWhere(
    'cgroups',
    'a memory cgroup for each bash call',
    missingCgroup('memory'),
  )(
    'kill a memory hog at max_total_memory_mb, which each process stays under, and tell the model so',
    async () => {
      const result = await bash(
        HOST,
        'python3 -c "b = b\'x\' * (400 * 1024 ** 2); print(len(b))"; echo status $?',
        { max_total_memory_mb: 128, max_memory_mb: 4096 },
      );
      expect(result.content).toMatch(/^status 137\n/m);
      expect(result.content).toContain(
        "[memory limit reached: the kernel killed 1 process at 128 MiB for all of this call's processes together (sandbox.max_total_memory_mb)]\n[exit code: 0]",
      );
      expect(await bash(HOST, 'echo still fine')).toEqual({
        content: 'still fine\n[exit code: 0]',
        is_error: false,
      });
    },
  );

  // Where bubblewrap cannot start, its own tests say so (SUBAGENTS_REQUIRE_SANDBOX).
  (inBubblewrap
    ? itWhere('cgroups', 'a memory cgroup for each bash call', missingCgroup('memory'))
    : it.skip)('hold in bubblewrap too', async () => {
    const result = await bash(SANDBOX, 'python3 -c "b = b\'x\' * (400 * 1024 ** 2)"; echo status $?', {
      max_total_memory_mb: 128,
    });
    expect(result.content).toContain(
      'status 137\n[memory limit reached: the kernel killed 1 process at 128 MiB',
    );
  });
});

describe('sandbox limit settings', () => {
  it('are absent from the parsed config unless written, and kept when written', () => {
    expect(parseConfig({}).config.sandbox).toEqual(DEFAULT_SANDBOX);
    const written = {
      max_processes: 64,
      max_memory_mb: 512,
      max_total_memory_mb: 1024,
      max_file_size_mb: 10,
      max_cpu_seconds: 30,
    };
    expect(parseConfig({ sandbox: written }).config.sandbox).toEqual({ ...DEFAULT_SANDBOX, ...written });
  });

  it('are whole numbers in range', () => {
    expect(
      sandboxProblems({
        max_processes: 0,
        max_memory_mb: 8,
        max_total_memory_mb: 0,
        max_file_size_mb: 1.5,
        max_cpu_seconds: 'a lot',
      }),
    ).toEqual([
      'sandbox.max_processes: 0 is out of range (1–1000000)',
      'sandbox.max_memory_mb: 8 is out of range (16–1048576)',
      'sandbox.max_total_memory_mb: 0 is out of range (16–1048576)',
      'sandbox.max_file_size_mb: 1.5 is not a whole number (1–1048576)',
      'sandbox.max_cpu_seconds: "a lot" is not a whole number (1–86400)',
    ]);
  });
});
