/**
 * The floor's worker, a process of its own as the project's worker is in `bench/load.ts`: a plain Temporal
 * worker with the SDK's defaults, the floor's bundle (WORKFLOW_BUNDLE) and its no-op activity. Env:
 * TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TASK_QUEUE. Prints `worker ready` on stdout once it polls; stops on
 * SIGINT or SIGTERM.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set for the floor's worker`);
  return value;
}

async function main(): Promise<void> {
  // As the project's runtime does (worker/runtime.ts): the SDK's default list has SIGUSR2 too, which
  // bench/memory.ts sends to ask its probe for the modules loaded.
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: ['SIGINT', 'SIGTERM'] });
  const connection = await NativeConnection.connect({ address: required('TEMPORAL_ADDRESS') });
  try {
    const worker = await Worker.create({
      connection,
      namespace: process.env.TEMPORAL_NAMESPACE ?? 'default',
      taskQueue: required('TASK_QUEUE'),
      workflowBundle: { codePath: required('WORKFLOW_BUNDLE') },
      activities,
    });
    const running = worker.run();
    process.stdout.write('worker ready\n');
    await running;
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
