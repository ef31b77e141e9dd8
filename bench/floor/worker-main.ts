/**
 * The floor's worker, a process of its own as the project's worker is in `bench/load.ts`: a plain Temporal
 * worker with the SDK's defaults, the floor's bundle and its no-op activity. Arguments: the server's address,
 * the namespace, the task queue, the bundle's path (bench/floor/floor.ts passes them). Prints `worker ready`
 * on stdout once it polls; stops on SIGINT or SIGTERM.
 */
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import * as activities from './activities';

async function main(): Promise<void> {
  const [address, namespace, taskQueue, bundlePath] = process.argv.slice(2);
  if (!address || !namespace || !taskQueue || !bundlePath)
    throw new Error('the floor worker takes: <address> <namespace> <task queue> <bundle path>');
  // As the project's runtime does (worker/runtime.ts): the SDK's default list has SIGUSR2 too, which
  // bench/memory.ts sends to ask its probe for the modules loaded.
  Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: ['SIGINT', 'SIGTERM'] });
  const connection = await NativeConnection.connect({ address });
  try {
    const worker = await Worker.create({
      connection,
      namespace,
      taskQueue,
      workflowBundle: { codePath: bundlePath },
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
