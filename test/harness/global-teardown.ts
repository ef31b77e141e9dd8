import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  await globalThis.__TEMPORAL_TEST_SERVER__?.stop();
  globalThis.__TEMPORAL_TEST_SERVER__ = undefined;
  if (globalThis.__TEMPORAL_TEST_PAYLOAD_DIR__)
    rmSync(globalThis.__TEMPORAL_TEST_PAYLOAD_DIR__, { recursive: true, force: true });
  globalThis.__TEMPORAL_TEST_PAYLOAD_DIR__ = undefined;
}
