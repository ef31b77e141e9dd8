/**
 * A worker as a process of its own: `node dist/worker/worker-main.js`. Env: TEMPORAL_ADDRESS (required),
 * TEMPORAL_NAMESPACE, TASK_QUEUE, WORKFLOW_BUNDLE, WORKER_LOG_LEVEL (default INFO), SUBAGENTS_PAYLOAD_DIR (the
 * local payload store; the default settings apply otherwise). Prints `worker ready` on stdout once it polls.
 */
import { NativeConnection } from '@temporalio/worker';
import { installRuntime, logLevelFromEnv } from './runtime';
import { createProjectWorker } from './worker';

async function main(): Promise<void> {
  installRuntime(logLevelFromEnv('WORKER_LOG_LEVEL', 'INFO'));
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) throw new Error('TEMPORAL_ADDRESS must be set (host:port of the Temporal frontend)');
  const connection = await NativeConnection.connect({ address });
  try {
    const worker = await createProjectWorker({
      connection,
      namespace: process.env.TEMPORAL_NAMESPACE,
      taskQueue: process.env.TASK_QUEUE,
      workflowBundlePath: process.env.WORKFLOW_BUNDLE,
    });
    const running = worker.run();
    process.stdout.write('worker ready\n');
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
    await running;
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
