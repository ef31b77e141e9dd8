import { spawn } from 'node:child_process';
import type { BashArgs } from '../../contracts/tool-specs';
import { sandboxLimits, type SandboxLimits } from '../../contracts/tools';
import type { PayloadKeyring } from '../../payloads/encryption-codec';
import { inheritedEnv, openBashSecrets, secretMasker } from './bash-secrets';
import { OutputCollector } from './output';
import { explainJustBashOutput, justBashLaunch } from './just-bash';
import type { MachineProbes } from './machine-probes';
import { inCallCgroup, limitNotes, makeCallCgroup, type CgroupEvents } from './call-cgroup';
import { bubblewrapArgs, bubblewrapExecutable, limitedBashArgs, SANDBOX_ENV } from './sandbox';
import { chooseSandbox, type SandboxInUse } from './sandbox-choice';
import { containerOutput, hostCommand, type MountInUse } from './skill-mounts';
import { ToolError, type ToolContext, type ToolOutput } from './tool-context';

interface Launch {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

interface Finished {
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

/**
 * Host fallback: the worker's PATH and HOME, but none of its other variables (keys, tokens); even these few
 * pass only under names that do not look secret (bash-secrets.ts).
 */
function hostEnv(): Record<string, string> {
  return { LANG: 'C.UTF-8', TERM: 'dumb', ...inheritedEnv(['PATH', 'HOME', 'LANG', 'TZ'], process.env) };
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Runs the command in its own process group and kills the whole group on timeout, on cancellation and once
 * the command itself exits (so nothing it left in the background outlives the call).
 */
function run(
  launch: Launch,
  timeoutMs: number,
  collector: OutputCollector,
  signal?: AbortSignal,
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let timedOut = false;
    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => collector.push(chunk));
    }
    const kill = (): void => killGroup(child.pid);
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    signal?.addEventListener('abort', kill, { once: true });
    // A cancel that came while the sandbox was chosen: the command stops at once, not at its time limit.
    if (signal?.aborted) kill();
    const cleanUp = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', kill);
    };
    child.on('exit', kill);
    child.on('error', (err) => {
      cleanUp();
      reject(err);
    });
    child.on('close', (exitCode, signal) => {
      cleanUp();
      resolve({ output: collector.text(), exitCode, signal, timedOut });
    });
  });
}

function unavailable(sandbox: SandboxInUse): ToolError {
  return new ToolError(
    `bash is unavailable: no sandbox could start (${sandbox.reason}). To enable it, ${sandbox.fix}.`,
  );
}

/** What a command gets besides itself: the skill mounts and the secrets' values (name → value). */
interface CommandExtras {
  mounts: readonly MountInUse[];
  secrets: Readonly<Record<string, string>>;
}

/**
 * How one command starts in the sandbox chosen for it. The secrets are set last: a secret named like one of
 * the sandbox's own variables is what the caller asked for.
 */
function launchIn(
  sandbox: SandboxInUse,
  command: string,
  cwd: string,
  limits: SandboxLimits,
  timeoutSeconds: number,
  extras: CommandExtras,
): Launch {
  const { mounts, secrets } = extras;
  switch (sandbox.kind) {
    case 'bubblewrap':
      return {
        // Found by the probe that chose it; gone since (uninstalled while the worker runs): spawn says ENOENT.
        file: bubblewrapExecutable() ?? 'bwrap',
        args: [...bubblewrapArgs(cwd, mounts), '--', 'bash', ...limitedBashArgs(command, limits)],
        cwd,
        env: { ...SANDBOX_ENV, ...secrets },
      };
    case 'just-bash': {
      const secretNames = Object.keys(secrets);
      return {
        ...justBashLaunch(cwd, command, limits, timeoutSeconds, { mounts, secretNames }),
        cwd,
        env: { ...SANDBOX_ENV, ...secrets },
      };
    }
    case 'host':
      // No mount namespace: the skills' container paths in the command name their host folders instead.
      return {
        file: 'bash',
        args: limitedBashArgs(hostCommand(command, mounts), limits),
        cwd,
        env: { ...hostEnv(), ...secrets },
      };
    case 'none':
      throw unavailable(sandbox);
  }
}

/**
 * The `bash` tool, in the sandbox the settings and the machine allow (sandbox-choice.ts): bubblewrap,
 * just-bash, or the host in the workspace when the config allows it; `probes` say what this machine can start.
 * The call's secrets are opened with `keyring` and set in the command's environment; what comes back shows
 * each value masked.
 */
export async function runBash(
  args: BashArgs,
  ctx: ToolContext,
  probes: MachineProbes,
  keyring?: PayloadKeyring,
): Promise<ToolOutput> {
  const limit = ctx.sandbox.bash_timeout_seconds;
  const timeoutSeconds = args.timeout_seconds ?? limit;
  if (timeoutSeconds > limit) {
    throw new ToolError(`timeout_seconds: ${timeoutSeconds} is above this agent's limit (at most ${limit})`);
  }
  ctx.signal?.throwIfAborted();

  const secrets = openBashSecrets(ctx.secrets, keyring);
  const { mask, longest } = secretMasker(secrets);
  try {
    return await runIn(
      args.command,
      timeoutSeconds,
      ctx,
      probes,
      { mounts: ctx.mounts ?? [], secrets },
      mask,
      longest,
    );
  } catch (err) {
    // Whatever a failure says (a spawn error repeats its arguments) is masked as the output is.
    if (err instanceof ToolError) throw new ToolError(mask(err.message));
    if (err instanceof Error && longest > 0) {
      err.message = mask(err.message);
      if (err.stack !== undefined) err.stack = mask(err.stack);
    }
    throw err;
  }
}

async function runIn(
  command: string,
  timeoutSeconds: number,
  ctx: ToolContext,
  probes: MachineProbes,
  extras: CommandExtras,
  mask: (text: string) => string,
  margin: number,
): Promise<ToolOutput> {
  const sandbox = await chooseSandbox(ctx.sandbox, probes);
  const limits = sandboxLimits(ctx.sandbox);
  let launch = launchIn(sandbox, command, ctx.workspaceReal, limits, timeoutSeconds, extras);
  // Host bash names the skill folders by their host paths: the model reads their container paths.
  const shown =
    sandbox.kind === 'host' && extras.mounts.length > 0
      ? (text: string) => mask(containerOutput(text, extras.mounts))
      : mask;
  // just-bash starts no process to count, and its Node runtime's own threads would count against the limit.
  const callLimits = { maxProcesses: limits.max_processes, maxTotalMemoryMb: limits.max_total_memory_mb };
  const cgroup =
    sandbox.kind === 'just-bash' ? undefined : await makeCallCgroup(probes.cgroups(), callLimits);
  if (cgroup) launch = { ...launch, ...inCallCgroup(cgroup, launch.file, launch.args) };
  let finished: Finished;
  let events: CgroupEvents | undefined;
  try {
    const collector = new OutputCollector(ctx.sandbox.output_cap_chars, shown, margin);
    finished = await run(launch, timeoutSeconds * 1000, collector, ctx.signal);
    events = await cgroup?.events();
  } finally {
    await cgroup?.remove();
  }
  if (ctx.signal?.aborted) throw ctx.signal.reason;

  const text =
    sandbox.kind === 'just-bash'
      ? explainJustBashOutput(finished.output, finished.signal, limits)
      : finished.output;
  const notes = events === undefined ? '' : limitNotes(events, callLimits);
  const output = (text === '' ? '(no output)\n' : text.replace(/\n?$/, '\n')) + notes;
  if (finished.timedOut) {
    return {
      content: `${output}[timed out after ${timeoutSeconds} s: the command was killed]`,
      is_error: true,
    };
  }
  const status =
    finished.exitCode !== null
      ? `[exit code: ${finished.exitCode}]`
      : `[killed by signal ${finished.signal}]`;
  return { content: output + status, is_error: false };
}
