/** The dev server a benchmark run shares (or TEMPORAL_ADDRESS's), quiet worker logs, always stopped. */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectOrStartServer, type TemporalServer } from '../../devserver/temporal-server';

export async function withBenchServer<T>(body: (server: TemporalServer) => Promise<T>): Promise<T> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await connectOrStartServer({
    headless: true,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  try {
    return await body(server);
  } finally {
    await server.stop();
  }
}
