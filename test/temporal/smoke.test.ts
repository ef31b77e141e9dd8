/**
 * The foundation, against a real `temporal server start-dev`: workflows run activities and children, a
 * killed worker loses nothing, the server keeps its state on disk, and the Web UI answers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { startDevServer } from '../../worker/temporal-server';
import { connectClient, testAddress, uniqueTaskQueue, waitFor, withWorker } from '../harness/temporal';
import * as activities from '../fixtures/smoke/activities';
import { echo, greetWithChild, twoSteps } from '../fixtures/smoke/workflows';

const workflowsPath = require.resolve('../fixtures/smoke/workflows');

function runsOf(dir: string, step: string): string[] {
  try {
    return readFileSync(join(dir, `${step}.runs`), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

function startWorkerProcess(taskQueue: string): ChildProcess {
  const child = spawn(process.execPath, [require.resolve('../fixtures/smoke/worker-main')], {
    env: { ...process.env, TEMPORAL_ADDRESS: testAddress(), TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return child;
}

describe('a real Temporal dev server', () => {
  it('runs a workflow that calls an activity and a child workflow and returns both results', async () => {
    const taskQueue = uniqueTaskQueue('smoke');
    const { client, close } = await connectClient();
    try {
      const result = await withWorker({ taskQueue, workflowsPath, activities }, () =>
        client.workflow.execute(greetWithChild, { taskQueue, workflowId: `${taskQueue}-wf`, args: ['Ada'] }),
      );
      expect(result).toEqual({ activity: 'Hello, Ada!', child: 'Hello, child of Ada!' });

      const child = await client.workflow.getHandle(`${taskQueue}-wf/child`).describe();
      expect(child.status.name).toBe('COMPLETED');
      expect(child.parentExecution?.workflowId).toBe(`${taskQueue}-wf`);
    } finally {
      await close();
    }
  });

  it('finishes a workflow on a new worker after the first one is SIGKILLed, without re-running a completed activity', async () => {
    const taskQueue = uniqueTaskQueue('crash');
    const dir = mkdtempSync(join(tmpdir(), 'smoke-crash-'));
    const { client, close } = await connectClient();
    const workers: ChildProcess[] = [];
    try {
      workers.push(startWorkerProcess(taskQueue));
      const handle = await client.workflow.start(twoSteps, {
        taskQueue,
        workflowId: `${taskQueue}-wf`,
        args: [dir],
      });
      const runId = handle.firstExecutionRunId;

      // The first activity has completed and the second is running on the first worker: kill it there.
      await waitFor('the second activity to start', () => runsOf(dir, 'second').length === 1);
      const first = workers[0];
      const firstPid = String(first.pid);
      first.kill('SIGKILL');
      await once(first, 'exit');
      writeFileSync(join(dir, 'release'), 'release');

      workers.push(startWorkerProcess(taskQueue));
      const result = await handle.result();

      expect(result).toEqual(['first done', 'second done after release']);
      expect(runsOf(dir, 'first')).toEqual([firstPid]);
      // The interrupted activity ran again, on the new worker, in the same workflow execution.
      expect(runsOf(dir, 'second')).toEqual([firstPid, String(workers[1].pid)]);
      const description = await handle.describe();
      expect(description.runId).toBe(runId);
      expect(description.status.name).toBe('COMPLETED');
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
      await close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('still lists a workflow completed before the dev server restarted on the same SQLite file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smoke-sqlite-'));
    const dbFilename = join(dir, 'temporal.db');
    const taskQueue = uniqueTaskQueue('restart');
    const workflowId = `${taskQueue}-wf`;
    try {
      const before = await startDevServer({ dbFilename, headless: true });
      try {
        const { client, close } = await connectClient(before.address);
        try {
          const result = await withWorker(
            { taskQueue, workflowsPath, activities },
            () => client.workflow.execute(echo, { taskQueue, workflowId, args: ['before restart'] }),
            before.address,
          );
          expect(result).toBe('Hello, before restart!');
        } finally {
          await close();
        }
      } finally {
        await before.stop();
      }

      const after = await startDevServer({ dbFilename, headless: true });
      try {
        const { client, close } = await connectClient(after.address);
        try {
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
        } finally {
          await close();
        }
      } finally {
        await after.stop();
      }
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
