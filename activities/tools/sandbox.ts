import { execFile } from 'node:child_process';
import { accessSync, constants, lstatSync, readlinkSync } from 'node:fs';
import * as path from 'node:path';
import type { SandboxLimits } from '../../contracts/tools';
import { bubblewrapMountArgs, type MountInUse } from './skill-mounts';

export type SandboxProbe = { available: true } | { available: false; reason: string };

/**
 * The environment inside the sandbox, whole: nothing of the worker's environment (API keys above all) is
 * passed in; a call's request-scoped secrets are added to it (bash.ts). HOME is the sandbox's scratch /tmp so that caches never land in the workspace.
 */
export const SANDBOX_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: '/tmp',
  TMPDIR: '/tmp',
  LANG: 'C.UTF-8',
  TERM: 'dumb',
};

const TOP_LEVEL_SYSTEM_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * What a shell needs from /etc and nothing more: dynamic-linker config, the Debian alternatives links
 * (`awk`, `editor`, …) and the time zone. No passwd, group, hosts or resolver files are visible.
 */
const ETC_ENTRIES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
];

function systemMountArgs(): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const dir of TOP_LEVEL_SYSTEM_DIRS) {
    let isLink: boolean;
    try {
      isLink = lstatSync(dir).isSymbolicLink();
    } catch {
      continue;
    }
    // Merged-/usr systems link /bin to usr/bin: recreate the link instead of binding its target twice.
    args.push(...(isLink ? ['--symlink', readlinkSync(dir), dir] : ['--ro-bind', dir, dir]));
  }
  for (const entry of ETC_ENTRIES) args.push('--ro-bind-try', entry, entry);
  return args;
}

/**
 * bubblewrap arguments, up to the command: system folders read-only, a fresh /proc, /dev and tmpfs /tmp,
 * the workspace bound read-write at its own path (so paths agree with the file tools) and made the current
 * directory, each skill mount's folder bound read-only at its container path, the root itself read-only, every
 * namespace unshared (no network), no capabilities.
 */
export function bubblewrapArgs(workspaceReal?: string, mounts: readonly MountInUse[] = []): string[] {
  const workspace = workspaceReal ? ['--bind', workspaceReal, workspaceReal, '--chdir', workspaceReal] : [];
  return [
    ...systemMountArgs(),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--tmpfs',
    '/tmp',
    ...workspace,
    ...bubblewrapMountArgs(mounts),
    '--remount-ro',
    '/',
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
  ];
}

/**
 * `bash` arguments that set the limits in the shell, then run the command in a fresh shell under them (the
 * command travels as `$1`, never spliced into the script). Soft and hard limits are both set, so the command
 * cannot raise them again; only CPU time's hard limit is a second above, so that the process first gets
 * SIGXCPU ("CPU time limit exceeded") and SIGKILL only if it ignores it. Units: `ulimit -v` KiB, `-f` 1 KiB
 * blocks, `-t` seconds.
 *
 * The process limit is RLIMIT_NPROC, which the kernel does not enforce for root outside a user namespace
 * mapped to another user (bubblewrap maps the sandbox's user to the worker's): under a root worker it
 * only holds where a pids cgroup backs it.
 */
export function limitedBashArgs(command: string, limits: SandboxLimits): string[] {
  const script =
    `ulimit -u ${limits.max_processes} -v ${limits.max_memory_mb * 1024} ` +
    `-f ${limits.max_file_size_mb * 1024} && ulimit -St ${limits.max_cpu_seconds} && ` +
    `ulimit -Ht ${limits.max_cpu_seconds + 1} || exit 126; exec bash -c "$1"`;
  return ['-c', script, 'bash', command];
}

/**
 * bwrap as found on the worker's PATH, or undefined. Searched here because a child's executable is looked up
 * on the PATH of the environment it is given, and the sandbox's own PATH is not the one the user set.
 */
export function bubblewrapExecutable(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '' || !path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, 'bwrap');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here: the next folder.
    }
  }
  return undefined;
}

const PROBE_TIMEOUT_MS = 10_000;

/**
 * Whether bubblewrap can start a sandbox on this machine, found out by running a trivial command. Run once a
 * process: `MachineProbes` keeps the answer.
 */
export function probeBubblewrap(): Promise<SandboxProbe> {
  const bwrap = bubblewrapExecutable();
  if (bwrap === undefined) {
    return Promise.resolve({ available: false, reason: 'bwrap was not found on PATH' });
  }
  const args = [...bubblewrapArgs(), '--', 'bash', '-c', 'exit 0'];
  return new Promise((resolve) => {
    execFile(bwrap, args, { env: SANDBOX_ENV, timeout: PROBE_TIMEOUT_MS }, (err, _stdout, stderr) => {
      if (!err) {
        resolve({ available: true });
        return;
      }
      resolve({
        available: false,
        reason: `\`${bwrap} … -- bash -c 'exit 0'\` failed: ${stderr.trim() || err.message}`,
      });
    });
  });
}
