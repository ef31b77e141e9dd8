/**
 * `startRun` against a real server that is down: it retries while the server restarts on its SQLite file (the
 * same address), saying so, and the run starts once and completes with a worker; when the server stays down
 * past the retry budget it says so, and nothing was started.
 *
 * The client's own gRPC retries (10 attempts over about 20 s) come first: a shorter outage never reaches
 * startRun's retry at all, so the server here comes back when startRun says it retries, not after a guessed
 * wait.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import { ServerUnavailableError, SubagentsClient } from '../../client/api';
import { freePort, startDevServer, type TemporalServer } from '../../devserver/temporal-server';
import { connectClient, uniqueTaskQueue, withProjectWorker, type TestClient } from '../harness/temporal';

it('rides out a server restart (started once, the retry said), and past its budget starts nothing', async () => {
  const { dir, workspace, scriptFile } = scriptedWorkspace('start-restart', {
    scripts: [{ agent: 'lead', turns: [{ content: 'Started after the restart.' }] }],
  });
  const input = leadInput({ scriptFile, workspace, prompt: 'Say when you started.' });
  const dbFilename = join(dir, 'temporal.db');
  const port = await freePort();
  const taskQueue = uniqueTaskQueue('start-restart');
  const runId = `${taskQueue}-run`;
  const lostId = `${taskQueue}-lost`;
  const clients: TestClient[] = [];
  let server: TemporalServer | undefined = await startDevServer({ dbFilename, port, headless: true });
  let restarting: Promise<TemporalServer> | undefined;
  try {
    const { address, namespace } = server;
    // One client a case, each connected while the server is up: the second one's channel has not been
    // backing off through the first case's outage.
    const [lost, kept] = [await connectClient(address), await connectClient(address)];
    clients.push(lost, kept);
    const api = (c: TestClient) => new SubagentsClient(c.client, namespace);
    await server.stop();
    server = undefined;

    const refused = await api(lost)
      .startRun(input, { taskQueue, runId: lostId, retryForMs: 1000 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(refused).toBeInstanceOf(ServerUnavailableError);
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^cannot start run ${lostId}: the Temporal server could not be reached for \\d+ s \\(.*UNAVAILABLE.*\\); ` +
          'nothing was started: try again once it is up$',
        's',
      ),
    );

    const lines: string[] = [];
    const handle = await api(kept).startRun(input, {
      taskQueue,
      runId,
      onRetry: (line) => {
        lines.push(line);
        restarting ??= startDevServer({ dbFilename, port, headless: true });
      },
    });
    server = await restarting;
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines[0]).toMatch(
      new RegExp(
        `^the Temporal server cannot be reached \\(.*UNAVAILABLE.*\\); trying again to start run ${runId} ` +
          'in 0\\.5 s \\(for up to \\d+ s more\\)$',
        's',
      ),
    );

    const result = await withProjectWorker(taskQueue, () => handle.result(), {
      server: { address, namespace },
    });
    expect(result).toMatchObject({ status: 'completed', final_output: 'Started after the restart.' });
    const { client } = kept;
    const executions = [];
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${runId}'` })) {
      executions.push(execution.runId);
    }
    expect(executions).toHaveLength(1);
    await expect(client.workflow.getHandle(lostId).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await (server ?? (await restarting?.catch(() => undefined)))?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}, 240_000);
