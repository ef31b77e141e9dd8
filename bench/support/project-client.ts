/** A benchmark's client of its server, made as `subagents` makes one: the project's data converter. */
import { Client, Connection } from '@temporalio/client';
import { SubagentsClient } from '../../client/api';
import { projectDataConverter } from '../../payloads/data-converter';
import type { TemporalServer } from '../../devserver/temporal-server';

export interface ProjectClient {
  /** Closed by the caller once the benchmark is done. */
  connection: Connection;
  client: Client;
  api: SubagentsClient;
}

export async function connectProjectClient(
  server: Pick<TemporalServer, 'address' | 'namespace'>,
): Promise<ProjectClient> {
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({
    connection,
    namespace: server.namespace,
    dataConverter: projectDataConverter(),
  });
  return { connection, client, api: new SubagentsClient(client, server.namespace) };
}
