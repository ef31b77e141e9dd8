/**
 * A dev server of a test file's own, for server settings the shared one must not take (a continue-as-new
 * suggested every few turns, say): started before the file's tests, stopped after them.
 */
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { startDevServer, type TemporalServer } from '../../devserver/temporal-server';
import { projectDataConverter } from '../../payloads/data-converter';

export interface ServerOfItsOwn {
  readonly server: TemporalServer;
  /** The connection a worker of this server takes. */
  readonly native: NativeConnection;
  /** A client with the project's data converter. */
  readonly client: Client;
}

/** A dynamic config under which a history of about 30 events suggests continue-as-new: every few turns. */
export const EAGER_CONTINUE_AS_NEW = { 'limit.historyCount.suggestContinueAsNew': 30 } as const;

/** Registers the server's start and stop with the enclosing `describe` (or file); read it inside tests only. */
export function useServerOfItsOwn(dynamicConfig: Record<string, unknown>): ServerOfItsOwn {
  let started: { server: TemporalServer; connection: Connection; native: NativeConnection; client: Client };
  beforeAll(async () => {
    const server = await startDevServer({ headless: true, dynamicConfig });
    const connection = await Connection.connect({ address: server.address });
    const native = await NativeConnection.connect({ address: server.address });
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    started = { server, connection, native, client };
  });
  afterAll(async () => {
    await started?.native.close();
    await started?.connection.close();
    await started?.server.stop();
  });
  return {
    get server() {
      return started.server;
    },
    get native() {
      return started.native;
    },
    get client() {
      return started.client;
    },
  };
}
