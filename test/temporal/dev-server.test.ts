/**
 * The project's dev server (worker/temporal-server.ts) against the real `temporal server start-dev`: it keeps
 * its state on its SQLite file across a restart, and its Web UI answers. (That workflows, activities and
 * crashed workers behave is Temporal's to test; the project's own crash tests cover its workflows.)
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { startDevServer, type TemporalServer } from '../../worker/temporal-server';
import { connectClient, uniqueTaskQueue, waitFor, withWorker } from '../harness/temporal';
import * as activities from '../fixtures/smoke/activities';
import { echo } from '../fixtures/smoke/workflows';

const workflowsPath = require.resolve('../fixtures/smoke/workflows');

/** Runs the echo workflow to completion on `address` with a worker of its own; its result. */
function echoOn(client: Client, address: string, taskQueue: string, workflowId: string, name: string) {
  return withWorker(
    { taskQueue, workflowsPath, activities },
    () => client.workflow.execute(echo, { taskQueue, workflowId, args: [name] }),
    address,
  );
}

/** A dev server on `dbFilename` while `body` runs with a client of it; both always closed. */
async function withServerOn<T>(
  dbFilename: string,
  body: (server: TemporalServer, client: Client) => Promise<T>,
): Promise<T> {
  const server = await startDevServer({ dbFilename, headless: true });
  try {
    const { client, close } = await connectClient(server.address);
    try {
      return await body(server, client);
    } finally {
      await close();
    }
  } finally {
    await server.stop();
  }
}

describe('the dev server', () => {
  it('still lists a workflow completed before the dev server restarted on the same SQLite file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smoke-sqlite-'));
    const dbFilename = join(dir, 'temporal.db');
    const taskQueue = uniqueTaskQueue('restart');
    const workflowId = `${taskQueue}-wf`;
    try {
      await withServerOn(dbFilename, async (before, client) => {
        expect(await echoOn(client, before.address, taskQueue, workflowId, 'before restart')).toBe(
          'Hello, before restart!',
        );
      });

      await withServerOn(dbFilename, async (_after, client) => {
        // Listing reads the visibility store, which may trail a moment behind: wait for it, bounded.
        let listed: [string, string][] = [];
        await waitFor(
          'the workflow to be listed',
          async () => {
            listed = [];
            for await (const execution of client.workflow.list({ query: `WorkflowId = "${workflowId}"` })) {
              listed.push([execution.workflowId, execution.status.name]);
            }
            return listed.length > 0;
          },
          10_000,
        );
        expect(listed).toEqual([[workflowId, 'COMPLETED']]);
        expect(await client.workflow.getHandle(workflowId).result()).toBe('Hello, before restart!');
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('journals its SQLite file ahead of writes, and a SIGKILLed server loses nothing it had answered', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smoke-wal-'));
    const dbFilename = join(dir, 'temporal.db');
    const taskQueue = uniqueTaskQueue('wal');
    const workflowId = `${taskQueue}-wf`;
    try {
      await withServerOn(dbFilename, async (before, client) => {
        // DEV_SERVER_SQLITE_PRAGMAS: the write-ahead log sits beside the file while the server runs.
        expect(existsSync(`${dbFilename}-wal`)).toBe(true);
        expect(await echoOn(client, before.address, taskQueue, workflowId, 'before the kill')).toBe(
          'Hello, before the kill!',
        );
        // A crash, not a shutdown: no checkpoint, no clean close of the file.
        process.kill(before.pid!, 'SIGKILL');
      });

      await withServerOn(dbFilename, async (_after, client) => {
        expect(await client.workflow.getHandle(workflowId).result()).toBe('Hello, before the kill!');
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Against an existing server (TEMPORAL_ADDRESS) the suite started no UI of its own.
  const uiUrl = process.env.TEMPORAL_TEST_UI_URL;
  (uiUrl ? it : it.skip)(
    'serves the Web UI: its page, the script the page loads, and its API wired to the server',
    async () => {
      const page = await fetch(uiUrl as string);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/text\/html/);
      const html = await page.text();
      const entry = html.match(/\/_app\/immutable\/entry\/start\.[\w-]+\.js/)?.[0];
      expect(entry).toBeDefined();

      const script = await fetch(`${uiUrl}${entry}`);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toMatch(/javascript/);

      const namespaces = (await (await fetch(`${uiUrl}/api/v1/namespaces`)).json()) as {
        namespaces: { namespaceInfo: { name: string } }[];
      };
      expect(namespaces.namespaces.map((n) => n.namespaceInfo.name)).toContain('default');
    },
  );
});
