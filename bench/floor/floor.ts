/** The floor of `bench/load.ts` from the benchmark's side: its bundle, its worker processes, its runs. */
import { spawn, type ChildProcess } from 'node:child_process';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import type { floorParentWorkflow } from './workflows';

/** The floor's workflows bundled on their own: nothing of the project's is in it. */
export async function bundleFloorWorkflows(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('./workflows'),
    logger: new DefaultLogger('WARN'),
  });
  return code;
}

export interface FloorWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  bundlePath: string;
  env?: NodeJS.ProcessEnv;
  /** Node's own flags for the process (a profiler's). */
  execArgv?: string[];
}

/** Starts the floor's worker process (`bench/floor/worker-main.ts`); resolves once it says it polls. */
export function spawnFloorWorker(options: FloorWorkerOptions): Promise<ChildProcess> {
  const { address, namespace, taskQueue, bundlePath } = options;
  const args = [
    ...(options.execArgv ?? []),
    require.resolve('./worker-main'),
    address,
    namespace,
    taskQueue,
    bundlePath,
  ];
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`the floor's worker exited with code ${code}`)));
  });
}

/**
 * Starts one floor run (a parent of `children` children, each running `childActivities` no-ops) and awaits its
 * end; whether it completed.
 */
export async function runFloor(
  client: Client,
  taskQueue: string,
  workflowId: string,
  children: number,
  childActivities = 1,
): Promise<boolean> {
  const handle = await client.workflow.start<typeof floorParentWorkflow>('floorParentWorkflow', {
    taskQueue,
    workflowId,
    args: [children, childActivities],
  });
  return handle.result().then(
    () => true,
    () => false,
  );
}
