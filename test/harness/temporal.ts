/** What a workflow test needs: the suite's server, a task queue of its own, workers that always shut down. */
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';

export function testAddress(): string {
  const address = process.env.TEMPORAL_TEST_ADDRESS;
  if (!address) throw new Error('TEMPORAL_TEST_ADDRESS is not set: run workflow tests through `npm test`');
  return address;
}

export function testNamespace(): string {
  return process.env.TEMPORAL_TEST_NAMESPACE ?? 'default';
}

/** A task queue no other test uses, so workers of different tests never take each other's tasks. */
export function uniqueTaskQueue(label: string): string {
  return `test-${label}-${randomUUID().slice(0, 8)}`;
}

export interface TestClient {
  client: Client;
  close(): Promise<void>;
}

export async function connectClient(address = testAddress()): Promise<TestClient> {
  const connection = await Connection.connect({ address });
  return { client: new Client({ connection, namespace: testNamespace() }), close: () => connection.close() };
}

/** Runs `body` while an in-process worker polls; the worker and its connection are closed whatever happens. */
export async function withWorker<T>(
  options: Omit<WorkerOptions, 'connection' | 'namespace'>,
  body: (worker: Worker) => Promise<T>,
  address = testAddress(),
): Promise<T> {
  const connection = await NativeConnection.connect({ address });
  try {
    const worker = await Worker.create({ ...options, connection, namespace: testNamespace() });
    return await worker.runUntil(body(worker));
  } finally {
    await connection.close();
  }
}
