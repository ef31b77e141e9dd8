export { createToolActivities, type ToolActivityDeps } from './execute-tool-call';
export { machineProbes, type MachineProbes } from './machine-probes';
export type { SandboxProbe } from './sandbox';
export { chooseSandbox, type SandboxInUse } from './sandbox-choice';
export { describeCgroupLimits } from './call-cgroup';
