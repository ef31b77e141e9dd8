/**
 * The A2A SDK's client (`@a2a-js/sdk`, an optional package), loaded when a worker first calls or probes an
 * A2A provider: a worker whose config names none never loads it, and a light install says which package to add.
 *
 * Its CommonJS build requires `jose`, an ES module: Node loads that with `require` from 20.19 on. An older
 * Node refuses (ERR_REQUIRE_ESM), and the SDK's ES module build is imported instead.
 */
import type * as A2AClientModule from '@a2a-js/sdk/client' with { 'resolution-mode': 'require' };
import { loadOptional } from '../../../payloads/optional-packages';

const PACKAGE = ['@a2a-js/sdk'];
const NEEDED_BY = 'an A2A subagent provider (subagent_providers: type a2a)';

/** The SDK's client module (Node caches it: `require` and `import()` load it once). */
export async function a2aClientSdk(): Promise<typeof A2AClientModule> {
  try {
    /* eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy; import() needs --experimental-vm-modules under jest */
    return loadOptional(NEEDED_BY, () => require('@a2a-js/sdk/client') as typeof A2AClientModule, PACKAGE);
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code !== 'ERR_REQUIRE_ESM') throw err;
    return (await import('@a2a-js/sdk/client')) as unknown as typeof A2AClientModule;
  }
}
