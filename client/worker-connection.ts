/**
 * A worker's connection to the Temporal server: the SDK's native one (its Rust core). Apart from
 * `connection.ts` so that a client command, which needs only `@temporalio/client`, never loads
 * `@temporalio/worker` and its native library.
 */
import { NativeConnection } from '@temporalio/worker';
import { requireAddress, unreachable, type ConnectionSettings } from './connection';

export async function connectWorker(settings: ConnectionSettings): Promise<NativeConnection> {
  const address = requireAddress(settings);
  try {
    return await NativeConnection.connect({
      address,
      ...(settings.tls !== undefined && { tls: settings.tls }),
      ...(settings.apiKey && { apiKey: settings.apiKey }),
      ...(settings.metadata && { metadata: settings.metadata }),
    });
  } catch (err) {
    throw unreachable(address, err);
  }
}
