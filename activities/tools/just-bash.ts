/**
 * just-bash: a bash simulated in JavaScript, with its own commands (grep, sed, awk, sort, find, jq, …) and a
 * file system confined to the workspace (just-bash-fs.ts). It needs no system package, so it keeps `bash`
 * working where bubblewrap is missing (no root, macOS). Each command runs in a Node process of its own
 * (just-bash-runner.ts), launched through `/bin/sh` only to set its CPU-time limit.
 */
import { execFile } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SandboxLimits } from '../../contracts/tools';
import type { JustBashRunnerOptions } from './just-bash-runner';
import type { MountInUse } from './skill-mounts';
import { SANDBOX_ENV, type SandboxProbe } from './sandbox';
import { isInstalled, missingPackageMessage } from '../../payloads/optional-packages';

const RUNNER = path.join(__dirname, 'just-bash-runner.js');
const SHELL = '/bin/sh';

/** Sets the CPU-time limit (soft, and a second more hard: SIGXCPU before SIGKILL), then becomes the runner. */
const LIMIT_CPU = 'ulimit -St "$1" && ulimit -Ht "$(($1 + 1))" || exit 126; shift; exec "$@"';

/**
 * The process for one command. Of the sandbox limits, CPU time is an rlimit of the process, memory caps its
 * JavaScript heap, and file size is checked on every write; the process limit does not apply, since just-bash
 * starts no process.
 */
export function justBashLaunch(
  workspaceReal: string,
  command: string,
  limits: SandboxLimits,
  timeoutSeconds: number,
  extras: { mounts?: readonly MountInUse[]; secretNames?: readonly string[] } = {},
): { file: string; args: string[] } {
  const options: JustBashRunnerOptions = {
    max_file_bytes: limits.max_file_size_mb * 2 ** 20,
    // Past the worker's own kill at the timeout: only keeps just-bash's default deadline (1 h) from coming first.
    deadline_ms: Math.ceil(timeoutSeconds * 1000) + 1000,
    mounts: (extras.mounts ?? []).flatMap((mount) =>
      mount.hostReal === undefined
        ? []
        : [{ container_path: mount.container_path, host_path: mount.hostReal }],
    ),
    // Names only: the values travel in the runner's environment, never on a command line others can read.
    secret_names: [...(extras.secretNames ?? [])],
  };
  return {
    file: SHELL,
    args: [
      '-c',
      LIMIT_CPU,
      'sh',
      String(limits.max_cpu_seconds),
      process.execPath,
      `--max-old-space-size=${limits.max_memory_mb}`,
      RUNNER,
      workspaceReal,
      JSON.stringify(options),
      command,
    ],
  };
}

const PROBE_TIMEOUT_MS = 20_000;
const PROBE_LIMITS: SandboxLimits = {
  max_processes: 1,
  max_memory_mb: 256,
  max_total_memory_mb: 256,
  max_file_size_mb: 1,
  max_cpu_seconds: 20,
};

/**
 * Whether just-bash can run a command on this machine, found out by running a trivial one. Run once a
 * process: `MachineProbes` keeps the answer.
 */
export function probeJustBash(): Promise<SandboxProbe> {
  if (!isInstalled('just-bash')) {
    return Promise.resolve({ available: false, reason: missingPackageMessage('just-bash', 'this sandbox') });
  }
  // `exit 0` reads and writes nothing: any existing folder will do as its workspace.
  const { file, args } = justBashLaunch(
    realpathSync(tmpdir()),
    'exit 0',
    PROBE_LIMITS,
    PROBE_TIMEOUT_MS / 1000,
  );
  return new Promise((resolve) => {
    execFile(file, args, { env: SANDBOX_ENV, timeout: PROBE_TIMEOUT_MS }, (err, _stdout, stderr) => {
      if (!err) {
        resolve({ available: true });
        return;
      }
      const detail = stderr.trim().split('\n').slice(-3).join(' ') || err.message;
      resolve({ available: false, reason: `a trial command failed: ${detail}` });
    });
  });
}

const HEAP_EXHAUSTED = 'JavaScript heap out of memory';

/**
 * A command's output as the model should read it: when the runner died of a full heap, Node's crash report
 * (GC traces, a native stack) becomes one line naming the limit.
 */
export function explainJustBashOutput(
  output: string,
  signal: NodeJS.Signals | null,
  limits: SandboxLimits,
): string {
  if (signal !== 'SIGABRT' || !output.includes(HEAP_EXHAUSTED)) return output;
  return `[just-bash ran out of memory: the limit is ${limits.max_memory_mb} MiB (sandbox.max_memory_mb)]\n`;
}
