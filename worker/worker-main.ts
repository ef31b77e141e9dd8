/**
 * A long-running project worker: `subagents worker`, and a process of its own, `node
 * dist/worker/worker-main.js` (the crash tests kill and restart these). Env of the process: TEMPORAL_ADDRESS
 * (required), TEMPORAL_NAMESPACE, TASK_QUEUE, WORKFLOW_BUNDLE, WORKER_LOG_LEVEL (default INFO),
 * SUBAGENTS_PAYLOAD_DIR (the local payload store; the default settings apply otherwise).
 * Both print the start line (`worker ready: …`) on stdout once the worker polls, log to stderr, and exit 0
 * after a clean shutdown on SIGINT or SIGTERM.
 */
import { NativeConnection } from '@temporalio/worker';
import { installRuntime, logLevelFromEnv } from './runtime';
import { runWorkerUntilSignal } from './shutdown';
import { createProjectWorker, DEFAULT_TASK_QUEUE } from './worker';

export interface WorkerService {
  connection: NativeConnection;
  /** host:port, for the start line. */
  address: string;
  namespace: string;
  taskQueue: string;
  /** A prebuilt workflow bundle; bundled from source when omitted. */
  workflowBundlePath?: string;
  /** Where the lifecycle lines go (stderr). */
  say: (line: string) => void;
}

/** What the worker serves, printed once when it starts polling. */
export function workerStartLines(service: Omit<WorkerService, 'connection' | 'say'>): string[] {
  const namespace = service.namespace === 'default' ? '' : `, namespace "${service.namespace}"`;
  return [`worker ready: task queue "${service.taskQueue}" on ${service.address}${namespace}`];
}

/** Runs a project worker until SIGINT or SIGTERM, then shuts it down once; resolves when it has stopped. */
export async function serveWorker(service: WorkerService): Promise<void> {
  const worker = await createProjectWorker({
    connection: service.connection,
    namespace: service.namespace,
    taskQueue: service.taskQueue,
    workflowBundlePath: service.workflowBundlePath,
  });
  const stopped = runWorkerUntilSignal(worker, service.say);
  process.stdout.write(`${workerStartLines(service).join('\n')}\n`);
  await stopped;
  service.say('worker stopped');
}

async function main(): Promise<void> {
  installRuntime(logLevelFromEnv('WORKER_LOG_LEVEL', 'INFO'));
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEMPORAL_ADDRESS must be set (host:port of the Temporal frontend)');
  const connection = await NativeConnection.connect({ address });
  try {
    await serveWorker({
      connection,
      address,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: process.env.TASK_QUEUE ?? DEFAULT_TASK_QUEUE,
      workflowBundlePath: process.env.WORKFLOW_BUNDLE,
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
