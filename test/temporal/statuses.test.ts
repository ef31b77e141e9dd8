/**
 * Temporal's own status tells the truth, against the real server: a failed or timed-out lead or subagent is a
 * Failed workflow (its failure type says which), a cancelled lead, subagent or batch is Canceled, a completed
 * or capped one is Completed. Every reader still gets the whole result (the client API, `status`, `ledger`),
 * and a closed workflow's current details and memo carry its final line, not a stale `Now:`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { leadStatusQuery, type LeadRunInput } from '../../contracts/lead';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { OUTCOME_MEMO } from '../../contracts/closing';
import { runSearchAttributes } from '../../contracts/search-attributes';
import { batchStatusQuery } from '../../contracts/batch';
import type { SubagentResult } from '../../contracts/subagent';
import { SubagentsClient, subagentResult } from '../../client/api';
import { BatchesClient } from '../../client/batches';
import { workflowResult } from '../../client/results';
import { leadInput, scriptedBatchInput, tempDir, writeScript } from '../support/subagent-input';
import {
  suiteCli,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import type { leadRunWorkflow } from '../../workflows/lead-run';

const testClient = useTestClient();
const usage = { input_tokens: 400, output_tokens: 100 };
const SLOW_MS = 600_000;

function lead(
  label: string,
  script: ModelScriptFileInput,
  config: Record<string, unknown> = {},
): LeadRunInput {
  const dir = tempDir(label);
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return leadInput({ workspace, scriptFile: writeScript(dir, script), config });
}

const task = (id: string, type: string) => ({
  name: 'task',
  id,
  args: { description: `Part ${id}`, prompt: `Work on part ${id}.`, subagent_type: type },
});

/** Each lead's input, by the outcome it ends with. */
function inputs(): Record<string, LeadRunInput> {
  const slowAgent = {
    description: 'Thinks for a long time.',
    system_prompt: 'You help.',
    tools: { allow: ['ls'] },
    timeout_seconds: 2,
  };
  return {
    completed: lead('st-completed', { scripts: [{ agent: 'lead', turns: [{ content: 'Done.', usage }] }] }),
    failed: lead('st-failed', {
      scripts: [{ agent: 'lead', turns: [{ error: { status: 401, message: 'invalid api key' } }] }],
    }),
    timed_out: {
      ...lead('st-timed-out', {
        scripts: [{ agent: 'lead', turns: [{ content: 'never', delay_ms: SLOW_MS }] }],
      }),
      timeout_seconds: 2,
    },
    // Its child times out on its own wall clock; the lead completes with what it has.
    child_timed_out: lead(
      'st-child-timed-out',
      {
        scripts: [
          {
            agent: 'lead',
            turns: [
              { tool_calls: [task('slow', 'sleeper')], usage },
              { content: 'Without it.', usage },
            ],
          },
          { agent: 'sleeper', turns: [{ content: 'never', delay_ms: SLOW_MS }] },
        ],
      },
      { subagents: { custom_agents: { sleeper: slowAgent } } },
    ),
    // Cancelled while its child runs: both end Canceled.
    cancelled: lead('st-cancelled', {
      scripts: [
        {
          agent: 'lead',
          turns: [{ tool_calls: [task('slow', 'general-purpose')], usage }, { content: 'never' }],
        },
        { agent: 'general-purpose', turns: [{ content: 'never', delay_ms: SLOW_MS }] },
      ],
    }),
    turn_capped: {
      ...lead('st-capped', {
        scripts: [
          {
            agent: 'lead',
            repeat_last: true,
            turns: [{ content: 'Looking.', tool_calls: [{ name: 'ls', args: { path: '.' } }], usage }],
          },
        ],
      }),
      max_turns: 2,
    },
  };
}

interface Ended {
  runIds: Record<string, string>;
  batchId: string;
  taskQueue: string;
}

async function start(
  client: Client,
  taskQueue: string,
  outcome: string,
  input: LeadRunInput,
): Promise<WorkflowHandle<typeof leadRunWorkflow>> {
  const runId = `${taskQueue}-${outcome}`;
  return client.workflow.start<typeof leadRunWorkflow>('leadRunWorkflow', {
    taskQueue,
    workflowId: runId,
    args: [{ ...input, run_id: runId }],
    typedSearchAttributes: runSearchAttributes(runId, 'lead', 0),
  });
}

/** Workflow id → Temporal's status name, for every workflow of the task queue. */
async function statuses(client: Client, taskQueue: string): Promise<Record<string, string>> {
  const seen: Record<string, string> = {};
  for await (const execution of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
    seen[execution.workflowId] = execution.status.name;
  }
  return seen;
}

/** Runs one lead of each outcome and a cancelled batch; returns once every one of them has closed. */
async function runAll(): Promise<Ended> {
  const client = testClient();
  const taskQueue = uniqueTaskQueue('statuses');
  const runIds: Record<string, string> = {};
  let batchId = '';
  await withProjectWorker(taskQueue, async () => {
    const handles = await Promise.all(
      Object.entries(inputs()).map(async ([outcome, input]) => {
        const handle = await start(client, taskQueue, outcome, input);
        runIds[outcome] = handle.workflowId;
        return [outcome, handle] as const;
      }),
    );
    const batch = await new BatchesClient(client).start(
      scriptedBatchInput(
        [{ key: 'a', prompt: 'Check a.' }],
        { max_live_items: 1, max_running_items: 1 },
        { scripts: [{ agent: 'general-purpose', turns: [{ content: 'never', delay_ms: SLOW_MS }] }] },
      ),
      { taskQueue },
    );
    batchId = batch.batchId;
    const batchHandle = client.workflow.getHandle(batchId);
    const cancelled = Object.fromEntries(handles)['cancelled'];
    await waitFor('the cancelled lead’s child to run', async () => {
      const status = await cancelled.query(leadStatusQuery);
      return status.counts.in_progress === 1;
    });
    await waitFor('the batch’s item to run', async () => {
      const status = await batchHandle.query(batchStatusQuery, {});
      return status.items.some((item) => item.state === 'running');
    });
    await Promise.all([cancelled.cancel(), batchHandle.cancel()]);
    // Every one closes (a lead after its children, the batch after its item); then the list holds them closed.
    await Promise.all([...handles.map(([, handle]) => workflowResult(handle)), workflowResult(batchHandle)]);
    const closing = [
      ...Object.values(runIds),
      batchId,
      `${runIds.cancelled}/task/slow`,
      `${runIds.child_timed_out}/task/slow`,
    ];
    let seen: Record<string, string> = {};
    await waitFor(
      'the list to hold every workflow closed',
      async () => {
        seen = await statuses(client, taskQueue);
        return closing.every((id) => seen[id] !== undefined && seen[id] !== 'RUNNING');
      },
      120_000,
    ).catch((err: unknown) => {
      throw new Error(`${String(err)}: ${JSON.stringify(seen)}`);
    });
    // A closed workflow's current details (answered by this worker) carry its final line.
    for (const id of [...Object.values(runIds), batchId, `${runIds.cancelled}/task/slow`]) {
      const metadata = await client.workflow
        .getHandle(id)
        .query<{ currentDetails?: string }>('__temporal_workflow_metadata');
      details[id] = metadata.currentDetails ?? '';
    }
  });
  return { runIds, batchId, taskQueue };
}

const details: Record<string, string> = {};

describe('Temporal’s own status for every ending', () => {
  let ended: Ended;
  beforeAll(async () => {
    ended = await runAll();
  }, 300_000);

  it('is Failed, TimedOut-typed or Canceled for every non-success; Completed for completed and capped runs', async () => {
    const { runIds, batchId, taskQueue } = ended;
    const seen = await statuses(testClient(), taskQueue);
    expect({
      completed: seen[runIds.completed],
      failed: seen[runIds.failed],
      timed_out: seen[runIds.timed_out],
      child_timed_out: seen[runIds.child_timed_out],
      slow_child: seen[`${runIds.child_timed_out}/task/slow`],
      cancelled: seen[runIds.cancelled],
      cancelled_child: seen[`${runIds.cancelled}/task/slow`],
      turn_capped: seen[runIds.turn_capped],
      batch: seen[batchId],
    }).toEqual({
      completed: 'COMPLETED',
      failed: 'FAILED',
      timed_out: 'FAILED',
      child_timed_out: 'COMPLETED',
      slow_child: 'FAILED',
      cancelled: 'CANCELLED',
      cancelled_child: 'CANCELLED',
      turn_capped: 'COMPLETED',
      batch: 'CANCELLED',
    });
    // The batch's item was cancelled with it.
    const items = Object.entries(seen).filter(([id]) => id.startsWith(`${batchId}/item/`));
    expect(items.map(([, status]) => status)).toEqual(['CANCELLED']);
  });

  it('the client API reads every run’s whole result, without a worker', async () => {
    const { runIds } = ended;
    const api = new SubagentsClient(testClient(), testNamespace());
    const read = async (outcome: string) => {
      const closed = await api.getRun(runIds[outcome]).inspect();
      if (closed.open) throw new Error(`${outcome} is still open`);
      return closed;
    };
    expect(await read('completed')).toMatchObject({ execution_status: 'COMPLETED', status: 'completed' });
    expect(await read('failed')).toMatchObject({
      execution_status: 'FAILED',
      status: 'failed',
      error: expect.stringContaining('invalid api key'),
      result: { status: 'failed', turns: 1 },
    });
    expect(await read('timed_out')).toMatchObject({
      execution_status: 'FAILED',
      status: 'timed_out',
      error: 'Run timed out after 2 seconds',
      result: { status: 'timed_out' },
    });
    const cancelled = await read('cancelled');
    expect(cancelled).toMatchObject({ execution_status: 'CANCELLED', status: 'cancelled' });
    expect(cancelled.result?.ledger.map((entry) => [entry.id, entry.status])).toEqual([
      ['slow', 'cancelled'],
    ]);
    expect(await read('turn_capped')).toMatchObject({
      execution_status: 'COMPLETED',
      status: 'completed',
      stop_reason: 'turn_capped',
    });
    // The lead read its timed-out child's whole result from the child's failure.
    const withChild = await read('child_timed_out');
    expect(withChild.result?.ledger[0]).toMatchObject({
      status: 'timed_out',
      error: 'Execution timed out after 2 seconds',
    });
    expect(withChild.result?.final_output).toBe('Without it.');

    // A subagent's result, however it ended.
    const child = (id: string) => testClient().workflow.getHandle(id);
    const timedOut: SubagentResult = await subagentResult(child(`${runIds.child_timed_out}/task/slow`));
    expect(timedOut).toMatchObject({ status: 'timed_out', error: 'Execution timed out after 2 seconds' });
    expect(await subagentResult(child(`${runIds.cancelled}/task/slow`))).toMatchObject({
      status: 'cancelled',
      error: 'Task cancelled by user',
    });
    // The batch's result, with its counts.
    const batch = await new BatchesClient(testClient()).get(ended.batchId).result();
    expect(batch).toMatchObject({ status: 'cancelled', total: 1, counts: { cancelled: 1 } });
  });

  it('`status` and `ledger` read each closed run', async () => {
    const { runIds } = ended;
    for (const [outcome, status] of [
      ['failed', 'failed'],
      ['timed_out', 'timed_out'],
      ['cancelled', 'cancelled'],
      ['turn_capped', 'completed'],
    ] as const) {
      const shown = await suiteCli(['status', runIds[outcome], '--json']);
      expect(shown.code).toBe(0);
      expect(JSON.parse(shown.stdout)).toMatchObject({ status });
    }
    const ledger = await suiteCli(['ledger', runIds.cancelled, '--json']);
    expect(ledger.code).toBe(0);
    expect(
      (JSON.parse(ledger.stdout) as { ledger: { id: string; status: string }[] }).ledger.map((e) => [
        e.id,
        e.status,
      ]),
    ).toEqual([['slow', 'cancelled']]);
  });

  it('a closed workflow’s current details and memo carry its final line, no `Now:`', async () => {
    const { runIds, batchId } = ended;
    for (const [id, line] of [
      [runIds.completed, '**lead** · completed · 1 turn · 500 tokens'],
      [runIds.failed, '**lead** · failed · 1 turn'],
      [runIds.timed_out, '**lead** · timed_out · 0 turns'],
      [runIds.cancelled, '**lead** · cancelled · 1 turn · 500 tokens'],
      [runIds.turn_capped, '**lead** · completed · 2 turns · 1,000 tokens'],
      [`${runIds.cancelled}/task/slow`, '**general-purpose** · cancelled · 0 turns'],
      [batchId, '**general-purpose batch** · cancelled · 1 items: 0 completed, 0 failed, 1 cancelled'],
    ] as const) {
      expect(details[id]).toContain(line);
      expect(details[id]).not.toContain('Now:');
      const memo = (await testClient().workflow.getHandle(id).describe()).memo ?? {};
      expect(memo[OUTCOME_MEMO]).toBe(details[id]);
    }
    expect(details[runIds.failed]).toContain('Error: ');
    expect(details[runIds.turn_capped]).toContain('Stop reason: `turn_capped`');
  });
});
