/**
 * A long lead run continues as new when the server suggests it, between turns, carrying its transcript,
 * counters, ledger and events: the user sees one run with one result.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { leadEventsQuery, leadStatusQuery } from '../../contracts/lead';
import { startDevServer } from '../../worker/temporal-server';
import { createProjectWorker } from '../../worker/worker';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { testWorkflowBundle, uniqueTaskQueue } from '../harness/temporal';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';
import { projectDataConverter } from '../../worker/payloads/data-converter';

type IHistory = temporal.api.history.v1.IHistory;

const ls = (k: number) => ({
  content: `Looking at p${k}.`,
  tool_calls: [{ name: 'ls', args: { path: `p${k}` } }],
});

it('continues a long lead run as new, carrying turns, ledger and events, and ends with one result', async () => {
  // A history of ~30 events suggests continue-as-new: every few turns here, instead of every few thousand events.
  const server = await startDevServer({
    headless: true,
    dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 },
  });
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const dir = tempDir('lead-can');
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace);
    const delegate = {
      content: 'Delegating one part.',
      tool_calls: [
        {
          name: 'task',
          id: 'part',
          args: { description: 'One part', prompt: 'Do the part.', subagent_type: 'general-purpose' },
        },
      ],
    };
    const input = leadInput({
      workspace,
      scriptFile: writeScript(dir, {
        scripts: [
          {
            agent: 'lead',
            turns: [
              ls(1),
              ls(2),
              ls(3),
              ls(4),
              ls(5),
              delegate,
              ls(6),
              ls(7),
              ls(8),
              ls(9),
              { content: 'All looked at.' },
            ],
          },
          { agent: 'general-purpose', turns: [{ content: 'Part done.' }] },
        ],
      }),
    });
    const taskQueue = uniqueTaskQueue('lead-can');
    const worker = await createProjectWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      workflowBundlePath: testWorkflowBundle(),
    });
    const { result, runs, events, status } = await worker.runUntil(async () => {
      const handle = await client.workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      });
      const result = await handle.result();
      // Follow the chain of executions (describe and history are consistent at once; the list is not).
      const runs: string[] = [];
      let runId: string | undefined = handle.firstExecutionRunId;
      while (runId) {
        const execution: WorkflowHandle = client.workflow.getHandle(handle.workflowId, runId);
        runs.push((await execution.describe()).status.name);
        const history: IHistory = await execution.fetchHistory();
        runId =
          (history.events ?? []).at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ??
          undefined;
      }
      const latest = client.workflow.getHandle(`${taskQueue}-lead`);
      return {
        result,
        runs,
        events: await latest.query(leadEventsQuery, 0),
        status: await latest.query(leadStatusQuery),
      };
    });

    expect(runs.length).toBeGreaterThanOrEqual(3);
    expect(runs.slice(0, -1).every((s) => s === 'CONTINUED_AS_NEW')).toBe(true);
    expect(runs.at(-1)).toBe('COMPLETED');
    expect(result).toMatchObject({
      status: 'completed',
      final_output: 'All looked at.',
      turns: 11,
      run_id: `${taskQueue}-lead`,
    });
    expect(result.ledger.map((e) => [e.id, e.status, e.result_brief])).toEqual([
      ['part', 'completed', 'Part done.'],
    ]);
    // Carried across executions: the log keeps its order and its numbering (a progress report may come too).
    const lifecycle = events.filter((e) => e.type !== 'task_running');
    expect(lifecycle.map((e) => [e.type, e.task_id])).toEqual([
      ['task_started', 'part'],
      ['task_completed', 'part'],
    ]);
    expect(events.map((e) => e.seq)).toEqual(events.map((_e, i) => i + 1));
    expect(status.turns).toBe(11);
  } finally {
    await native.close();
    await connection.close();
    await server.stop();
  }
});

it('continues a lead whose transcript grows by ~95 KB a turn, each execution started from about one turn', async () => {
  // Before transcripts travelled by reference, the carry held the whole transcript and a lead reading five
  // ~19 KB files a turn was killed at its sixth continuation ("Input exceeds size limit", ~2 MB).
  const server = await startDevServer({
    headless: true,
    dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 },
  });
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const dir = tempDir('lead-can-big');
    const workspace = join(dir, 'workspace');
    mkdirSync(workspace);
    const names = Array.from({ length: 5 }, (_, k) => `big-${k}.txt`);
    names.forEach((name, k) => writeFileSync(join(workspace, name), `${k} ${'x'.repeat(19_000)}\n`));
    const turns = 40;
    const input = leadInput({
      workspace,
      config: { loop_detection: { enabled: false } },
      scriptFile: writeScript(dir, {
        scripts: [
          {
            agent: 'lead',
            turns: [
              ...Array.from({ length: turns }, (_, t) => ({
                content: `Reading round ${t}.`,
                tool_calls: names.map((path) => ({ name: 'read_file', args: { path } })),
              })),
              { content: 'Read every round.' },
            ],
          },
        ],
      }),
    });
    const taskQueue = uniqueTaskQueue('lead-can-big');
    const worker = await createProjectWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      workflowBundlePath: testWorkflowBundle(),
    });
    const { result, startBytes } = await worker.runUntil(async () => {
      const handle = await client.workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      });
      const result = await handle.result();
      const startBytes: number[] = [];
      for (let runId: string | undefined = handle.firstExecutionRunId; runId;) {
        const history: IHistory = await client.workflow.getHandle(handle.workflowId, runId).fetchHistory();
        // The input as the workflow sees it (decoded): what the codec would otherwise hide behind a reference.
        const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
        const decoded = await decodeFromPayloadsAtIndex(client.options.loadedDataConverter, 0, started);
        startBytes.push(JSON.stringify(decoded).length);
        runId =
          (history.events ?? []).at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ??
          undefined;
      }
      return { result, startBytes };
    });
    expect(result).toMatchObject({
      status: 'completed',
      final_output: 'Read every round.',
      turns: turns + 1,
    });
    expect(startBytes.length).toBeGreaterThanOrEqual(6);
    // Every execution starts from an input of about one turn (its ~95 KB of tool results not yet sent to the
    // model travel in the carry), however long the transcript has grown (~3.8 MB by the end).
    console.log(`lead continue-as-new inputs (bytes): ${startBytes.join(', ')}`);
    for (const bytes of startBytes) expect(bytes).toBeLessThan(150 * 1024);
    expect(Math.max(...startBytes.slice(1))).toBeLessThan(2 * Math.min(...startBytes.slice(1)));
  } finally {
    await native.close();
    await connection.close();
    await server.stop();
  }
});
