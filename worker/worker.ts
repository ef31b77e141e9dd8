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
import { warmUpModelProviders } from '../activities/model';
import type { PayloadSettings } from '../contracts/config/payloads';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../contracts/config/temporal';
import { projectDataConverter } from './payloads/data-converter';
import { waitProgress, type WaitProgress } from './wait-progress';

export interface ProjectWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  /** A prebuilt workflow bundle (tests build one for the whole suite); bundled from source when omitted. */
  workflowBundlePath?: string;
  /** A bundle built in memory (`bundleProjectWorkflows`), e.g. while the server starts. */
  workflowBundleCode?: string;
  /** Where large payloads go (the claim-check codec); default: this process's (`configurePayloads`). */
  payloads?: PayloadSettings;
  /** Extra Worker options (identity, slot counts, sticky timeouts). */
  tuning?: Partial<
    Omit<
      WorkerOptions,
      'connection' | 'namespace' | 'taskQueue' | 'workflowsPath' | 'workflowBundle' | 'activities'
    >
  >;
}

export const WORKFLOWS_PATH = require.resolve('../workflows');

/**
 * Bundles the project's workflows (webpack: ~2 s here, longer on a busy machine, so it shows progress past
 * two seconds): start it early and concurrently with other work.
 */
export async function bundleProjectWorkflows(progress: WaitProgress = waitProgress()): Promise<string> {
  return progress.track('Bundling the workflows', async () => {
    const { code } = await bundleWorkflowCode({
      workflowsPath: WORKFLOWS_PATH,
      logger: new DefaultLogger('WARN'),
    });
    return code;
  });
}

/**
 * What every project worker gets unless `tuning` says otherwise: how soon a dead worker's work moves on
 * (bench/recovery.ts; BENCHMARKS.md, "Recovery after a worker dies").
 */
export const RECOVERY_TUNING = {
  // A workflow task waiting on a dead worker's sticky queue (the SDK waits 10 s) moves to the shared queue,
  // where any worker takes it. A live worker polls its sticky queue all the time: healthy runs never wait 1 s.
  stickyQueueScheduleToStartTimeout: '1 second',
  // Activities beat every third of the heartbeat timeout their workflow declares
  // (activities/activity-context.ts); the SDK would hold a beat back for up to 0.8 × that timeout, this sends
  // each within a second. With the workflows' 3 s (workflows/agent-loop.ts) a beat reaches the server every
  // second, and two may be missed before the attempt is given up.
  maxHeartbeatThrottleInterval: '1 second',
} as const satisfies Partial<WorkerOptions>;

export async function createProjectWorker(options: ProjectWorkerOptions): Promise<Worker> {
  // While the worker starts: a run's first model call then costs what the later ones do (never fails).
  const warmUp = warmUpModelProviders();
  const worker = await Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? DEFAULT_NAMESPACE,
    taskQueue: options.taskQueue ?? DEFAULT_TASK_QUEUE,
    // Without a prebuilt bundle, bundled here rather than by Worker.create: the same work, with progress.
    workflowBundle:
      options.workflowBundleCode === undefined && options.workflowBundlePath
        ? { codePath: options.workflowBundlePath }
        : { code: options.workflowBundleCode ?? (await bundleProjectWorkflows()) },
    activities,
    dataConverter: projectDataConverter(options.payloads),
    ...RECOVERY_TUNING,
    ...options.tuning,
  });
  await warmUp;
  return worker;
}
