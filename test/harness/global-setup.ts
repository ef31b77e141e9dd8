/**
 * One real Temporal dev server for the whole `temporal` test project (the built binary, never a mock).
 * Tests that need their own server (a restart on one SQLite file) start one themselves.
 */
import { connectOrStartServer, type TemporalServer } from '../../worker/temporal-server';

declare global {
  var __TEMPORAL_TEST_SERVER__: TemporalServer | undefined;
}

export default async function globalSetup(): Promise<void> {
  const server = await connectOrStartServer({ log: (line) => process.stderr.write(`[temporal] ${line}\n`) });
  globalThis.__TEMPORAL_TEST_SERVER__ = server;
  // Jest workers start after this and inherit the environment.
  process.env.TEMPORAL_TEST_ADDRESS = server.address;
  process.env.TEMPORAL_TEST_NAMESPACE = server.namespace;
  if (server.uiUrl) process.env.TEMPORAL_TEST_UI_URL = server.uiUrl;
}
