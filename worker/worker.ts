/**
 * Worker bootstrap: one Worker that registers every workflow and activity of the project on a task queue.
 * Used by `npm start`, `subagents worker` and the worker processes the crash tests kill.
 */
import {
  bundleWorkflowCode,
  DefaultLogger,
  NativeConnection,
  Worker,
  type WorkerOptions,
} from '@temporalio/worker';
import * as activities from '../activities';

export const DEFAULT_TASK_QUEUE = 'durable-subagents';

export interface ProjectWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** A prebuilt workflow bundle (tests build one for the whole suite); bundled from source when omitted. */
  workflowBundlePath?: string;
  /** A bundle built in memory (`bundleProjectWorkflows`), e.g. while the server starts. */
  workflowBundleCode?: string;
  /** Extra Worker options (identity, slot counts, sticky timeouts). */
  tuning?: Partial<
    Omit<
      WorkerOptions,
      'connection' | 'namespace' | 'taskQueue' | 'workflowsPath' | 'workflowBundle' | 'activities'
    >
  >;
}

export const WORKFLOWS_PATH = require.resolve('../workflows');

/** Bundles the project's workflows (webpack, ~2 s): start it early and concurrently with other work. */
export async function bundleProjectWorkflows(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: new DefaultLogger('WARN'),
  });
  return code;
}

export async function createProjectWorker(options: ProjectWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    ...(options.workflowBundleCode !== undefined
      ? { workflowBundle: { code: options.workflowBundleCode } }
      : options.workflowBundlePath
        ? { workflowBundle: { codePath: options.workflowBundlePath } }
        : { workflowsPath: WORKFLOWS_PATH }),
    activities,
    ...options.tuning,
  });
}
