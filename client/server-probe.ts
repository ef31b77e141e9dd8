/** One way to ask whether a Temporal server is there: connect, then ask it about the namespace. */
import { Connection, type ConnectionOptions } from '@temporalio/client';

/**
 * A client connection whose server has answered for `namespace`. Connecting alone is lazy about the server:
 * the question makes a wrong address, a server not yet up, or a missing namespace fail here. Closed again
 * when it fails; the caller closes it otherwise.
 */
export async function connectChecked(options: ConnectionOptions, namespace: string): Promise<Connection> {
  const connection = await Connection.connect(options);
  try {
    await connection.workflowService.describeNamespace({ namespace });
    return connection;
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
}

/** Whether the server at `address` answers for `namespace` within about `timeoutMs`. */
export async function serverAnswers(address: string, namespace: string, timeoutMs: number): Promise<boolean> {
  try {
    await (await connectChecked({ address, connectTimeout: timeoutMs }, namespace)).close();
    return true;
  } catch {
    return false;
  }
}
