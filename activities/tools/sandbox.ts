import { execFile } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';

export type SandboxProbe = { available: true } | { available: false; reason: string };

/**
 * The environment inside the sandbox, whole: nothing of the worker's environment (API keys above all) is
 * passed in. HOME is the sandbox's scratch /tmp so that caches never land in the workspace.
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
 * directory, the root itself read-only, every namespace unshared (no network), no capabilities.
 */
export function bubblewrapArgs(workspaceReal?: string): string[] {
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
    '--remount-ro',
    '/',
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
  ];
}

const PROBE_TIMEOUT_MS = 10_000;

function probeOnce(): Promise<SandboxProbe> {
  const args = [...bubblewrapArgs(), '--', 'bash', '-c', 'exit 0'];
  return new Promise((resolve) => {
    execFile('bwrap', args, { env: SANDBOX_ENV, timeout: PROBE_TIMEOUT_MS }, (err, _stdout, stderr) => {
      if (!err) {
        resolve({ available: true });
        return;
      }
      const reason =
        'code' in err && err.code === 'ENOENT'
          ? 'bwrap was not found on PATH (Debian package "bubblewrap")'
          : `\`bwrap … -- bash -c 'exit 0'\` failed: ${stderr.trim() || err.message}`;
      resolve({ available: false, reason });
    });
  });
}

let probe: Promise<SandboxProbe> | undefined;

/** Whether bubblewrap can start a sandbox on this machine, found out once by running a trivial command. */
export function detectBubblewrap(): Promise<SandboxProbe> {
  probe ??= probeOnce();
  return probe;
}
