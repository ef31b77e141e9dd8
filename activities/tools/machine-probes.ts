/**
 * What this machine offers the bash tool: whether bubblewrap can start a sandbox, whether just-bash can run a
 * command, under which folder a command gets a pids cgroup. Each is found out once, on first use, and kept by
 * the object that asked, not by the module: a process makes one (`machineProbes()`) and hands it to its
 * activities and to whatever tells people which sandbox is in use (the worker's start line, a run's header,
 * `doctor`), so what is shown is what runs and no probe runs twice.
 */
import { probeJustBash } from './just-bash';
import { findPidsCgroupParent } from './pids-cgroup';
import { probeBubblewrap, type SandboxProbe } from './sandbox';
import type { SandboxProbes } from './sandbox-choice';

export interface MachineProbes extends SandboxProbes {
  /** The folder under which commands get a pids cgroup; undefined when this machine offers none. */
  pidsCgroupParent: () => string | undefined;
}

/** New probes of this machine, each run at most once. */
export function machineProbes(): MachineProbes {
  let bubblewrap: Promise<SandboxProbe> | undefined;
  let justBash: Promise<SandboxProbe> | undefined;
  // null: looked for, and there is none.
  let pidsParent: string | null | undefined;
  return {
    bubblewrap: () => (bubblewrap ??= probeBubblewrap()),
    justBash: () => (justBash ??= probeJustBash()),
    pidsCgroupParent: () => (pidsParent ??= findPidsCgroupParent() ?? null) ?? undefined,
  };
}
