/**
 * A worker as a process of its own: `node dist/worker/worker-main.js`. The server as every Temporal SDK reads
 * it (`@temporalio/envconfig`): TEMPORAL_ADDRESS (required, or a profile's), TEMPORAL_NAMESPACE,
 * TEMPORAL_API_KEY, TEMPORAL_TLS_*, TEMPORAL_PROFILE and TEMPORAL_CONFIG_FILE (temporal.toml). Env besides:
 * TASK_QUEUE, WORKFLOW_BUNDLE, WORKER_LOG_LEVEL (default INFO), SUBAGENTS_PAYLOAD_DIR (the local payload store;
 * the default settings apply otherwise). Prints `worker ready` on stdout once it polls.
 */
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import { createProjectWorker } from './worker';

async function main(): Promise<void> {
  Runtime.install({
    logger: new DefaultLogger((process.env.WORKER_LOG_LEVEL as LogLevel | undefined) ?? 'INFO'),
  });
  const { connectionOptions, namespace } = loadClientConnectConfig();
  if (!connectionOptions.address) {
    throw new Error(
      'TEMPORAL_ADDRESS must be set (host:port of the Temporal frontend), or a Temporal profile',
    );
  }
  const connection = await NativeConnection.connect(connectionOptions);
  try {
    const worker = await createProjectWorker({
      connection,
      namespace,
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
