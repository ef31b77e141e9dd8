/**
 * A long-running project worker: `subagents worker`, and a process of its own, `node
 * dist/worker/worker-main.js` (the crash tests kill and restart these). The process finds its server as every
 * Temporal SDK does (`@temporalio/envconfig`): TEMPORAL_ADDRESS (required, or a profile's),
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and TEMPORAL_CONFIG_FILE
 * (temporal.toml). Env besides: TASK_QUEUE, WORKFLOW_BUNDLE, WORKER_LOG_LEVEL (default INFO),
 * SUBAGENTS_PAYLOAD_DIR (the local payload store; the default settings apply otherwise), SUBAGENTS_CONFIG (a
 * config file whose `subagent_runtime`, `lead_runtime`, `worker` and `sandbox` the worker runs with; the
 * defaults otherwise).
 * Both print the start lines (`worker ready: …`, the bash sandbox, both admission bounds) on stdout once the worker polls, log
 * to stderr, and exit 0 after a clean shutdown on SIGINT or SIGTERM.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection } from '@temporalio/worker';
import { describeSandbox, type SandboxInUse } from '../activities/tools';
import { describeAdmission, type AdmissionSettings } from '../contracts/admission';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../contracts/config/temporal';
import type { SandboxSettings } from '../contracts/tools';
import { loadConfig } from './config';
import { installRuntime, logLevelFromEnv } from './runtime';
import { runWorkerUntilSignal } from './shutdown';
import { createProjectWorker, withdrawAdmission, workerTuning, type WorkerSettings } from './worker';

export interface WorkerService {
  connection: NativeConnection;
  /** host:port, for the start line. */
  address: string;
  namespace: string;
  taskQueue: string;
  /** A prebuilt workflow bundle; bundled from source when omitted. */
  workflowBundlePath?: string;
  /** The sandbox settings of the worker's config: what `bash` runs in unless a run's config says otherwise. */
  sandbox: SandboxSettings;
  /** `subagent_runtime`: declared to the task queue's admission workflow when the worker starts. */
  admission: AdmissionSettings;
  /** `lead_runtime`: declared to the task queue's lead-run admission workflow when the worker starts. */
  runAdmission: AdmissionSettings;
  /** The `worker:` section (the workflow cache's bound). */
  worker?: WorkerSettings;
  /** Where the lifecycle lines go (stderr). */
  say: (line: string) => void;
}

/** What the worker serves, printed once when it starts polling. */
export function workerStartLines(
  service: Omit<WorkerService, 'connection' | 'say' | 'sandbox'>,
  sandbox: SandboxInUse,
): string[] {
  const namespace = service.namespace === DEFAULT_NAMESPACE ? '' : `, namespace "${service.namespace}"`;
  return [
    `worker ready: task queue "${service.taskQueue}" on ${service.address}${namespace}`,
    `bash sandbox: ${sandbox.description}${sandbox.fix ? ` (to enable it, ${sandbox.fix})` : ''}`,
    `admission: ${describeAdmission(service.admission)} (every run on the task queue)`,
    `lead runs in flight: ${describeAdmission(service.runAdmission)} (lead_runtime)`,
  ];
}

/** Runs a project worker until SIGINT or SIGTERM, then shuts it down once; resolves when it has stopped. */
export async function serveWorker(service: WorkerService): Promise<void> {
  const worker = await createProjectWorker({
    connection: service.connection,
    namespace: service.namespace,
    taskQueue: service.taskQueue,
    workflowBundlePath: service.workflowBundlePath,
    admission: service.admission,
    runAdmission: service.runAdmission,
    tuning: workerTuning(service.worker),
    say: service.say,
  });
  const sandbox = await describeSandbox(service.sandbox);
  const stopped = runWorkerUntilSignal(worker, service.say);
  process.stdout.write(`${workerStartLines(service, sandbox).join('\n')}\n`);
  await stopped;
  await withdrawAdmission(worker);
  service.say('worker stopped');
}

async function main(): Promise<void> {
  installRuntime(logLevelFromEnv('WORKER_LOG_LEVEL', 'INFO'));
  const { connectionOptions, namespace } = loadClientConnectConfig();
  const address = connectionOptions.address;
  if (!address) {
    throw new Error(
      'TEMPORAL_ADDRESS must be set (host:port of the Temporal frontend), or a Temporal profile',
    );
  }
  const configFile = process.env.SUBAGENTS_CONFIG;
  const { config } = loadConfig(configFile === '' ? undefined : configFile);
  const connection = await NativeConnection.connect(connectionOptions);
  try {
    await serveWorker({
      connection,
      address,
      namespace: namespace ?? DEFAULT_NAMESPACE,
      taskQueue: process.env.TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
      workflowBundlePath: process.env.WORKFLOW_BUNDLE,
      sandbox: config.sandbox,
      admission: config.subagent_runtime,
      runAdmission: config.lead_runtime,
      worker: config.worker,
      say: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    await connection.close();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
