/**
 * A batch outlives its server: the dev server stopped mid-batch and started again on its SQLite file (the same
 * address), a new worker finishes the batch, every item once, the counters matching the children.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedBatchInput } from '../support/subagent-input';
import { BatchesClient } from '../../client/batches';
import { freePort, startDevServer, type TemporalServer } from '../../devserver/temporal-server';
import {
  connectClient,
  testNamespace,
  uniqueTaskQueue,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

/** A dev server on `dbFilename` and `port` while `body` runs with a worker and a batches client of it. */
async function onServer<T>(
  dbFilename: string,
  port: number,
  taskQueue: string,
  body: (batches: BatchesClient) => Promise<T>,
): Promise<T> {
  const server: TemporalServer = await startDevServer({ dbFilename, port, headless: true });
  try {
    const { client, close } = await connectClient(server.address);
    try {
      return await withProjectWorker(taskQueue, () => body(new BatchesClient(client)), {
        server: { address: server.address, namespace: testNamespace() },
      });
    } finally {
      await close();
    }
  } finally {
    await server.stop();
  }
}

it('finishes a batch after the dev server restarted on its SQLite file mid-batch, each item once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'batch-restart-'));
  const dbFilename = join(dir, 'temporal.db');
  const port = await freePort();
  const taskQueue = uniqueTaskQueue('batch-restart');
  const keys = Array.from({ length: 12 }, (_, i) => `r${String(i).padStart(2, '0')}`);
  const input = scriptedBatchInput(
    keys.map((key) => ({ key, prompt: `Check ${key}.` })),
    { max_running_items: 2, max_live_items: 3 },
    {
      scripts: [
        { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Checked.', delay_ms: 200 }] },
      ],
    },
    'Survive a restart',
  );
  try {
    const batchId = await onServer(dbFilename, port, taskQueue, async (batches) => {
      const batch = await batches.start(input, { taskQueue });
      await waitFor('three items done', async () => (await batch.status({ limit: 0 })).counts.completed >= 3);
      return batch.batchId;
    });

    const { end, lines } = await onServer(dbFilename, port, taskQueue, async (batches) => {
      const batch = batches.get(batchId);
      const end = await batch.result();
      const lines = [];
      for await (const line of batch.results()) lines.push(line);
      return { end, lines };
    });
    expect(end).toMatchObject({ status: 'completed', counts: { completed: 12, failed: 0 } });
    // The items running when the server stopped went on after it came back: one attempt each, none lost.
    expect(lines.map((line) => [line.key, line.status, line.attempts, line.result])).toEqual(
      keys.map((key) => [key, 'completed', 1, 'Checked.']),
    );
    expect(end.counters.attempts).toBe(12);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
