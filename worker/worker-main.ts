/**
 * A long-running project worker: `subagents worker`, and a process of its own, `node
 * dist/worker/worker-main.js` (the crash tests kill and restart these). The process finds its server as every
 * Temporal SDK does (`@temporalio/envconfig`): TEMPORAL_ADDRESS (required, or a profile's),
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and TEMPORAL_CONFIG_FILE
 * (temporal.toml). Env besides: TASK_QUEUE, WORKFLOW_BUNDLE, WORKER_LOG_LEVEL (default INFO),
 * SUBAGENTS_PAYLOAD_DIR (the local payload store; the default settings apply otherwise).
 * Both print the start line (`worker ready: …`, then the bash sandbox) on stdout once the worker polls, log
 * to stderr, and exit 0 after a clean shutdown on SIGINT or SIGTERM.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { NativeConnection } from '@temporalio/worker';
import { describeSandbox, type SandboxInUse } from '../activities/tools';
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from '../contracts/config/temporal';
import { DEFAULT_SANDBOX, type SandboxSettings } from '../contracts/tools';
import { installRuntime, logLevelFromEnv } from './runtime';
import { runWorkerUntilSignal } from './shutdown';
import { createProjectWorker } from './worker';

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
  ];
}

/** Runs a project worker until SIGINT or SIGTERM, then shuts it down once; resolves when it has stopped. */
export async function serveWorker(service: WorkerService): Promise<void> {
  const worker = await createProjectWorker({
    connection: service.connection,
    namespace: service.namespace,
    taskQueue: service.taskQueue,
    workflowBundlePath: service.workflowBundlePath,
  });
  const sandbox = await describeSandbox(service.sandbox);
  const stopped = runWorkerUntilSignal(worker, service.say);
  process.stdout.write(`${workerStartLines(service, sandbox).join('\n')}\n`);
  await stopped;
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
  const connection = await NativeConnection.connect(connectionOptions);
  try {
    await serveWorker({
      connection,
      address,
      namespace: namespace ?? DEFAULT_NAMESPACE,
      taskQueue: process.env.TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
      workflowBundlePath: process.env.WORKFLOW_BUNDLE,
      sandbox: DEFAULT_SANDBOX,
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
