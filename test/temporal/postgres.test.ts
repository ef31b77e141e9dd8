/**
 * The project on a Temporal server backed by PostgreSQL (devserver/temporal-postgres.ts: a throwaway PostgreSQL
 * cluster and Temporal's own server from deploy/temporal-postgres, built with Go on first use), not the suite's
 * SQLite dev server: a lead run that delegates three subagents completes though the server and PostgreSQL are
 * stopped and started again while the subagents run, and what a finished run left (its result, its history,
 * its delegations found by the project's search attributes) is still there after another restart.
 *
 * Skipped, with the reason on stderr, only where the pieces are absent (no PostgreSQL server binaries, no Go
 * and no built binaries); SUBAGENTS_REQUIRE_POSTGRES=1 turns that skip into a failure (CI).
 */
import { Client, Connection, ServiceError } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { SubagentsClient, type RunHandle } from '../../client/api';
import type { LeadRunResult } from '../../contracts/lead';
import { projectDataConverter } from '../../payloads/data-converter';
import {
  postgresServerMissing,
  startPostgresServer,
  type PostgresTemporalServer,
} from '../../devserver/temporal-postgres';
import { fanOutLeadInput } from '../support/subagent-input';
import { uniqueTaskQueue, waitFor, withProjectWorker } from '../harness/temporal';

const missing = postgresServerMissing();
const required = process.env.SUBAGENTS_REQUIRE_POSTGRES === '1';
if (missing && !required) {
  process.stderr.write(`[postgres] SKIPPED, the PostgreSQL-backed server cannot start here: ${missing}\n`);
}
const SUBAGENT_TYPE = defineSearchAttributeKey('SubagentType', SearchAttributeType.KEYWORD);

const describeIfAvailable = missing && !required ? describe.skip : describe;

/** The first start may build the server with Go: minutes on two busy cores (see its README). */
const FIRST_START_TIMEOUT_MS = 40 * 60_000;

interface ServerClient {
  api: SubagentsClient;
  client: Client;
  close(): Promise<void>;
}

async function connect(server: PostgresTemporalServer): Promise<ServerClient> {
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({
    connection,
    namespace: server.namespace,
    dataConverter: projectDataConverter(),
  });
  return { api: new SubagentsClient(client, server.namespace), client, close: () => connection.close() };
}

/** Both stopped, both started again on the same data; the server on the same address. */
async function restartAll(server: PostgresTemporalServer): Promise<void> {
  await server.stopTemporal();
  await server.stopPostgres();
  await server.startPostgres();
  await server.startTemporal();
}

async function childStarts(client: Client, runId: string): Promise<string[]> {
  const events = (await client.workflow.getHandle(runId).fetchHistory()).events ?? [];
  return events.flatMap(
    (e) => e.childWorkflowExecutionStartedEventAttributes?.workflowExecution?.workflowId ?? [],
  );
}

function expectThreeDelegationsCompleted(result: LeadRunResult): void {
  expect(result).toMatchObject({ status: 'completed', final_output: 'Combined.', turns: 2 });
  expect(result.ledger.map((e) => [e.id, e.status, e.result_brief])).toEqual([
    ['a', 'completed', 'Part done.'],
    ['b', 'completed', 'Part done.'],
    ['c', 'completed', 'Part done.'],
  ]);
}

describeIfAvailable('a Temporal server on PostgreSQL', () => {
  let server: PostgresTemporalServer | undefined;
  const log = (line: string) => process.stderr.write(`[postgres] ${line}\n`);

  beforeAll(async () => {
    server = await startPostgresServer({ log, startTimeoutMs: 180_000 });
  }, FIRST_START_TIMEOUT_MS);
  afterAll(() => server?.stop());

  const started = (): PostgresTemporalServer => {
    if (!server) throw new Error('the server is started in beforeAll');
    return server;
  };

  it('completes a lead run with 3 delegations though the server and PostgreSQL restart while they run', async () => {
    const pg = started();
    const taskQueue = uniqueTaskQueue('postgres-restart');
    const runId = `${taskQueue}-lead`;
    // Each subagent's model call takes 5 s: the restart happens while all three are in it.
    const input = fanOutLeadInput(['a', 'b', 'c'], 5000);
    let { api, client, close } = await connect(pg);
    try {
      const { result, outageMs, startsBefore } = await withProjectWorker(
        taskQueue,
        async () => {
          const run: RunHandle = await api.startRun(input, { taskQueue, runId });
          await waitFor(
            'three subagents to start',
            async () => (await childStarts(client, runId)).length === 3,
          );
          const startsBefore = await childStarts(client, runId);
          expect((await run.status()).state).toBe('running');

          const outageStarted = Date.now();
          await restartAll(pg);
          const outageMs = Date.now() - outageStarted;
          // A client of the restarted server: nothing of the run's lives in this process.
          await close();
          ({ api, client, close } = await connect(pg));
          const result = await client.workflow.getHandle(runId).result();
          return { result: result as LeadRunResult, outageMs, startsBefore };
        },
        { server: pg },
      );
      log(`server and PostgreSQL down and up again in ${outageMs} ms while the subagents ran`);

      expectThreeDelegationsCompleted(result);
      // The restart started no subagent twice: the three of before, each once.
      expect((await childStarts(client, runId)).sort()).toEqual([...startsBefore].sort());
      expect(startsBefore.sort()).toEqual(['a', 'b', 'c'].map((id) => `${runId}/task/${id}`));
    } finally {
      await close();
    }
  });

  it('keeps a finished run across a restart: its result, its history, its delegations by search attribute', async () => {
    const pg = started();
    const taskQueue = uniqueTaskQueue('postgres-kept');
    const runId = `${taskQueue}-lead`;
    const before = await connect(pg);
    let result: LeadRunResult;
    let historyLength: number;
    try {
      result = await withProjectWorker(
        taskQueue,
        async () =>
          (await before.api.startRun(fanOutLeadInput(['a', 'b', 'c']), { taskQueue, runId })).result(),
        { server: pg },
      );
      expectThreeDelegationsCompleted(result);
      historyLength = (await before.client.workflow.getHandle(runId).fetchHistory()).events?.length ?? 0;
    } finally {
      await before.close();
    }

    await restartAll(pg);

    // No worker runs now: all of this is read from PostgreSQL by the restarted server.
    const after = await connect(pg);
    try {
      const handle = after.client.workflow.getHandle(runId);
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      expect(await handle.result()).toEqual(result);
      expect((await handle.fetchHistory()).events?.length).toBe(historyLength);
      // Visibility is PostgreSQL too: the lead and its three delegations by the project's search attributes.
      let listed: [string, string, string | undefined][] = [];
      await waitFor(
        'the run and its delegations to be listed',
        async () => {
          listed = [];
          for await (const execution of after.client.workflow.list({ query: `LeadRunId = "${runId}"` })) {
            const type = execution.typedSearchAttributes.get(SUBAGENT_TYPE);
            listed.push([execution.workflowId, execution.status.name, type]);
          }
          return listed.length === 4;
        },
        30_000,
      );
      expect(listed.sort()).toEqual([
        [runId, 'COMPLETED', 'lead'],
        ...['a', 'b', 'c'].map((id): [string, string, string] => [
          `${runId}/task/${id}`,
          'COMPLETED',
          'general-purpose',
        ]),
      ]);
    } finally {
      await after.close();
    }
  });

  it('refuses at once a workflow id longer than the 255 characters its database column holds', async () => {
    const { client, close } = await connect(started());
    try {
      const taskQueue = uniqueTaskQueue('postgres-ids');
      const longest = `${taskQueue}-`.padEnd(255, 'x');
      // Never run (no worker polls this task queue): the start alone is what is asked.
      const handle = await client.workflow.start('neverRuns', { taskQueue, workflowId: longest });
      await handle.terminate();
      const refused = await client.workflow.start('neverRuns', { taskQueue, workflowId: `${longest}x` }).then(
        () => undefined,
        (err: unknown) => err,
      );
      // INVALID_ARGUMENT: not the UNAVAILABLE of the database's own refusal, which a client or the server retries.
      expect(refused).toBeInstanceOf(ServiceError);
      expect(String((refused as Error).cause)).toMatch(/INVALID_ARGUMENT: WorkflowId length exceeds limit/);
    } finally {
      await close();
    }
  });
});
