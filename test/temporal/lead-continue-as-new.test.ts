/**
 * A long lead run continues as new when the server suggests it, between turns, carrying its transcript,
 * counters, ledger and events: the user sees one run with one result.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import {
  leadEventsQuery,
  leadStatusQuery,
  type LeadRunInput,
  type LeadRunResult,
} from '../../contracts/lead';
import { createProjectWorker } from '../../worker/worker';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { executionHistories } from '../support/histories';
import { testWorkflowBundle, uniqueTaskQueue } from '../harness/temporal';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';
import type { RemoteActivityDeps } from '../../activities/remote';
import { EAGER_CONTINUE_AS_NEW, useServerOfItsOwn } from '../harness/server-of-its-own';

// One server for the file: a history of ~30 events suggests continue-as-new, every few turns here instead of
// every few thousand events.
const own = useServerOfItsOwn(EAGER_CONTINUE_AS_NEW);

/** Runs a lead on this file's server, then `inspect`s it while the worker still polls (queries need one). */
async function runLead<T>(
  input: LeadRunInput,
  label: string,
  inspect: (handle: WorkflowHandleWithFirstExecutionRunId<typeof leadRunWorkflow>) => Promise<T>,
  remote?: RemoteActivityDeps,
): Promise<{ result: LeadRunResult; workflowId: string } & T> {
  const taskQueue = uniqueTaskQueue(label);
  const worker = await createProjectWorker({
    connection: own.native,
    namespace: own.server.namespace,
    taskQueue,
    workflowBundlePath: testWorkflowBundle(),
    ...(remote && { remote }),
  });
  return worker.runUntil(async () => {
    const handle = await own.client.workflow.start(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-lead`,
      args: [input],
    });
    const result = await handle.result();
    return { result, workflowId: handle.workflowId, ...(await inspect(handle)) };
  });
}

const ls = (k: number) => ({
  content: `Looking at p${k}.`,
  tool_calls: [{ name: 'ls', args: { path: `p${k}` } }],
});

it('continues a long lead run as new, carrying turns, ledger and events, and ends with one result', async () => {
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
  const { result, workflowId, runs, events, status } = await runLead(input, 'lead-can', async (handle) => {
    // Follow the chain of executions (describe and history are consistent at once; the list is not).
    const runs: string[] = [];
    for (const { runId } of await executionHistories(
      own.client,
      handle.workflowId,
      handle.firstExecutionRunId,
    )) {
      runs.push((await own.client.workflow.getHandle(handle.workflowId, runId).describe()).status.name);
    }
    const latest = own.client.workflow.getHandle(handle.workflowId);
    return {
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
    run_id: workflowId,
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
});

it('keeps the tools its remote providers gave the run when it started, across continue-as-new', async () => {
  const dir = tempDir('lead-can-remote');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  let probes = 0;
  const remote: RemoteActivityDeps = {
    protocols: {
      acp: {
        // Available when the run starts, never after: a second probe would take the tool away.
        probe: () =>
          Promise.resolve(probes++ === 0 ? { available: true } : { available: false, reason: 'gone' }),
        run: () => Promise.resolve({ end: 'completed', text: 'Remote part done.', messages: [] }),
      },
    },
  };
  const input = leadInput({
    workspace,
    config: {
      subagent_providers: { local_acp: { type: 'acp', command: 'node', args: ['agent.mjs'], env: {} } },
      subagent_tools: [{ tool_name: 'subagent_acp', provider: 'local_acp' }],
    },
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
            ls(6),
            {
              content: 'Delegating remotely.',
              tool_calls: [
                {
                  name: 'subagent_acp',
                  id: 'remote',
                  args: { description: 'Remote part', prompt: 'Do it.' },
                },
              ],
            },
            { content: 'Remote: {{tool_result:remote}}' },
          ],
        },
      ],
    }),
  });
  const { result, probed } = await runLead(
    input,
    'lead-can-remote',
    async (handle) => {
      const probed: number[] = [];
      for (const { history } of await executionHistories(
        own.client,
        handle.workflowId,
        handle.firstExecutionRunId,
      )) {
        probed.push(
          (history.events ?? []).filter(
            (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'probeSubagentProviders',
          ).length,
        );
      }
      return { probed };
    },
    remote,
  );
  expect(probed.length).toBeGreaterThanOrEqual(2);
  // Probed once, by the first execution; the later ones took its answer from the carry.
  expect(probed).toEqual([1, ...probed.slice(1).map(() => 0)]);
  expect(probes).toBe(1);
  expect(result).toMatchObject({
    status: 'completed',
    final_output: 'Remote: Task Succeeded. Result: Remote part done.',
  });
});

it('continues a lead whose transcript grows by ~95 KB a turn, each execution started from about one turn', async () => {
  // Before transcripts travelled by reference, the carry held the whole transcript and a lead reading five
  // ~19 KB files a turn was killed at its sixth continuation ("Input exceeds size limit", ~2 MB).
  {
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
    const { result, startBytes } = await runLead(input, 'lead-can-big', async (handle) => {
      const startBytes: number[] = [];
      for (const { history } of await executionHistories(
        own.client,
        handle.workflowId,
        handle.firstExecutionRunId,
      )) {
        // The input as the workflow sees it (decoded): what the codec would otherwise hide behind a reference.
        const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
        const decoded = await decodeFromPayloadsAtIndex(own.client.options.loadedDataConverter, 0, started);
        startBytes.push(JSON.stringify(decoded).length);
      }
      return { startBytes };
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
  }
});
