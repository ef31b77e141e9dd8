/**
 * A worker SIGKILLed while three children run: a new worker finishes the run with exactly three child
 * executions in history and the same ledger as an uninterrupted run.
 */
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { leadStatusQuery, type LeadRunResult } from '../../contracts/lead';
import { leadRunWorkflow } from '../../workflows/lead-run';
import {
  connectClient,
  startProjectWorkerProcess,
  uniqueTaskQueue,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';

const parts = ['north', 'south', 'east'];
const script: ModelScriptFileInput = {
  scripts: [
    {
      agent: 'lead',
      turns: [
        {
          content: 'Splitting by warehouse.',
          tool_calls: parts.map((part) => ({
            name: 'task',
            id: part,
            args: {
              description: `Audit ${part}`,
              prompt: `Audit the ${part} warehouse.`,
              subagent_type: 'general-purpose',
            },
          })),
          usage: { input_tokens: 500, output_tokens: 60 },
        },
        { content: 'All three warehouses audited.', usage: { input_tokens: 900, output_tokens: 30 } },
      ],
    },
    ...parts.map((part) => ({
      agent: 'general-purpose',
      prompt_contains: part,
      turns: [
        {
          content: `Listing ${part}.`,
          tool_calls: [{ name: 'ls', args: {} }],
          usage: { input_tokens: 100, output_tokens: 10 },
          // The worker dies while the three children wait on these calls.
          delay_ms: 3000,
        },
        { content: `The ${part} warehouse is in order.`, usage: { input_tokens: 150, output_tokens: 12 } },
      ],
    })),
  ],
};

function setUp() {
  const dir = tempDir('lead-crash');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return leadInput({ workspace, scriptFile: writeScript(dir, script) });
}

/** What must not depend on the crash: everything but clock readings and the run's own id. */
function comparable(result: LeadRunResult) {
  return {
    ...result,
    run_id: undefined,
    ledger: result.ledger.map(
      ({ created_at: _c, updated_at: _u, workflow_id: _w, run_id: _r, ...entry }) => entry,
    ),
  };
}

it('recovers a lead SIGKILLed while three children run: three child executions, the same ledger', async () => {
  const { client, close } = await connectClient();
  const workers: ChildProcess[] = [];
  try {
    const referenceQueue = uniqueTaskQueue('lead-crash-ref');
    const expected = await withProjectWorker(referenceQueue, () =>
      client.workflow.execute(leadRunWorkflow, {
        taskQueue: referenceQueue,
        workflowId: `${referenceQueue}-lead`,
        args: [setUp()],
      }),
    );
    expect(expected.ledger.map((e) => e.status)).toEqual(['completed', 'completed', 'completed']);

    const taskQueue = uniqueTaskQueue('lead-crash');
    workers.push(await startProjectWorkerProcess(taskQueue));
    const handle = await client.workflow.start(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-lead`,
      args: [setUp()],
    });
    await waitFor(
      'three children running',
      async () => (await handle.query(leadStatusQuery)).counts.in_progress === 3,
    );
    workers[0].kill('SIGKILL');
    await once(workers[0], 'exit');
    workers.push(await startProjectWorkerProcess(taskQueue));

    const result = await handle.result();
    expect(comparable(result)).toEqual(comparable(expected));
    const events = (await handle.fetchHistory()).events ?? [];
    const started = events.flatMap(
      (e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId ?? [],
    );
    // Each child once (in the order its slot was granted).
    expect([...started].sort()).toEqual(parts.map((part) => `${taskQueue}-lead/task/${part}`).sort());
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
    await close();
  }
});
