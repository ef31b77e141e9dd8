/**
 * What this machine offers the bash tool: whether bubblewrap can start a sandbox, whether just-bash can run a
 * command, where a command gets a cgroup of its own (cgroup-plan.ts). Each is found out once, on first use, and kept by
 * the object that asked, not by the module: a process makes one (`machineProbes()`) and hands it to its
 * activities and to whatever tells people which sandbox is in use (the worker's start line, a run's header,
 * `doctor`), so what is shown is what runs and no probe runs twice.
 */
import { probeJustBash } from './just-bash';
import { removeCgroup } from './call-cgroup';
import { distinctParents, findCgroupPlan, strayCallCgroups, type CgroupPlan } from './cgroup-plan';
import { probeBubblewrap, type SandboxProbe } from './sandbox';
import type { SandboxProbes } from './sandbox-choice';

export interface MachineProbes extends SandboxProbes {
  /** Where a command gets a cgroup of its own, for its process and memory limits; why not, where it does not. */
  cgroups: () => CgroupPlan;
}

/** New probes of this machine, each run at most once. */
export function machineProbes(): MachineProbes {
  let bubblewrap: Promise<SandboxProbe> | undefined;
  let justBash: Promise<SandboxProbe> | undefined;
  let cgroups: CgroupPlan | undefined;
  return {
    bubblewrap: () => (bubblewrap ??= probeBubblewrap()),
    justBash: () => (justBash ??= probeJustBash()),
    cgroups: () => {
      if (cgroups === undefined) {
        cgroups = findCgroupPlan();
        // What workers that were killed in a call left behind, removed in the background.
        for (const stray of strayCallCgroups(distinctParents(cgroups))) void removeCgroup(stray);
      }
      return cgroups;
    },
  };
}
