export default async function globalTeardown(): Promise<void> {
  await globalThis.__TEMPORAL_TEST_SERVER__?.stop();
  globalThis.__TEMPORAL_TEST_SERVER__ = undefined;
}
