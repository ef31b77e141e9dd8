/**
 * The project's dev server (devserver/temporal-server.ts) against the real `temporal server start-dev`: it keeps
 * its state on its SQLite file across a restart, one server a file, and its Web UI answers. (That workflows,
 * activities and crashed workers behave is Temporal's to test; the project's own crash tests cover its
 * workflows.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { CLI, cliEnv, runCli, startProcess, stop } from '../support/cli-process';
import { DbLockedError, dbLockPath } from '../../devserver/dev-server-lock';
import { startDevServer, type TemporalServer } from '../../devserver/temporal-server';
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
  it("serving one run, runs under the Go runtime's memory limit; kept up, under Go's defaults", async () => {
    const goEnv = (pid: number | undefined) =>
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter((entry) => /^(GOGC|GOMEMLIMIT)=/.test(entry));
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => name !== 'GOGC' && name !== 'GOMEMLIMIT'),
    );
    for (const oneShot of [true, false]) {
      const server = await startDevServer({ headless: true, oneShot, env });
      try {
        expect(goEnv(server.pid)).toEqual(oneShot ? [expect.stringMatching(/^GOMEMLIMIT=\d+MiB$/)] : []);
      } finally {
        await server.stop();
      }
    }
  });

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

  it('gets a search attribute added since its SQLite file was made when it starts on that file again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smoke-sqlite-'));
    const dbFilename = join(dir, 'temporal.db');
    const userIdType = async (client: Client) => {
      const { customAttributes } = await client.connection.operatorService.listSearchAttributes({
        namespace: client.options.namespace,
      });
      return customAttributes?.UserId;
    };
    try {
      // A file from before `UserId` existed: the server made it with every attribute, then one is removed.
      await withServerOn(dbFilename, async (_before, client) => {
        await client.connection.operatorService.removeSearchAttributes({
          namespace: client.options.namespace,
          searchAttributes: ['UserId'],
        });
        expect(await userIdType(client)).toBeUndefined();
      });
      await withServerOn(dbFilename, async (_after, client) => {
        expect(await userIdType(client)).toBe(
          temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
        );
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

  it('refuses a second server on a SQLite file a live one uses, and takes over the lock of a dead one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smoke-lock-'));
    const dbFilename = join(dir, 'temporal.db');
    const lockPath = dbLockPath(dbFilename);
    try {
      // Held by a live process (this one): refused before anything starts.
      writeFileSync(lockPath, JSON.stringify({ pid: process.pid, address: '127.0.0.1:1', token: 'other' }));
      await expect(startDevServer({ dbFilename, headless: true })).rejects.toThrow(DbLockedError);
      await expect(startDevServer({ dbFilename, headless: true })).rejects.toThrow(
        `${dbFilename} is in use by the dev server on 127.0.0.1:1 (pid ${process.pid})`,
      );
      expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ token: 'other' });

      // Left by a process that is gone (a killed dev server): taken over, and released on stop.
      const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
      writeFileSync(lockPath, JSON.stringify({ pid: Number(gone.stdout), token: 'stale' }));
      await withServerOn(dbFilename, async (server) => {
        expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({
          pid: process.pid,
          address: server.address,
          server_pid: server.pid,
        });
      });
      expect(existsSync(lockPath)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('`subagents dev-server` on a file another one serves exits 1 naming it; the first keeps its record', async () => {
    const env = cliEnv();
    const dbFilename = join(mkdtempSync(join(tmpdir(), 'smoke-second-')), 'temporal.db');
    const recordPath = join(env.DURABLE_SUBAGENTS_CACHE as string, 'dev-server.json');
    const first = await startProcess([CLI, 'dev-server', '--db-filename', dbFilename], env, /"address"/);
    try {
      const { address, ui_url } = JSON.parse(first.line) as { address: string; ui_url: string };
      const recorded = readFileSync(recordPath, 'utf8');
      expect(JSON.parse(recorded)).toMatchObject({ address, ui_url, pid: first.child.pid });

      const second = await runCli(['dev-server', '--db-filename', dbFilename], env);
      expect(second.code).toBe(1);
      expect(second.stdout).toBe('');
      expect(second.stderr).toContain(
        `subagents: dev-server: ${dbFilename} is in use by the dev server on ${address}, Web UI ${ui_url} ` +
          `(pid ${first.child.pid})`,
      );
      expect(second.stderr).not.toMatch(/\n\s+at /);
      // The first is still the one other commands find.
      expect(readFileSync(recordPath, 'utf8')).toBe(recorded);
      const status = await runCli(['status', 'no-such-run'], env);
      expect(status.stderr).toContain(`status: no run no-such-run on ${address}`);
    } finally {
      await stop(first.child);
    }
    // Its own exit erases its record and its lock.
    expect(existsSync(recordPath)).toBe(false);
    expect(existsSync(dbLockPath(dbFilename))).toBe(false);
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
