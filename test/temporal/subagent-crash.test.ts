/**
 * A subagent whose worker is SIGKILLed mid-run finishes on a new worker with the same result as an
 * uninterrupted run, and a tool that is not idempotent does not run twice.
 */
import { once } from 'node:events';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { subagentStepsQuery } from '../../contracts/queries';
import { subagentWorkflow } from '../../workflows/subagent';
import {
  connectClient,
  startProjectWorkerProcess,
  uniqueTaskQueue,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { subagentInput, tempDir, writeScript } from '../support/subagent-input';

const script: ModelScriptFileInput = {
  scripts: [
    {
      turns: [
        {
          content: 'Recording the start.',
          tool_calls: [
            { name: 'write_file', args: { path: 'journal.txt', content: 'started\n', append: true } },
          ],
          usage: { input_tokens: 50, output_tokens: 5 },
        },
        {
          content: 'Thinking hard.',
          tool_calls: [{ name: 'ls', args: {} }],
          usage: { input_tokens: 60, output_tokens: 5 },
          // The worker is killed while this call is in flight.
          delay_ms: 4000,
        },
        { content: 'All done: journal written.', usage: { input_tokens: 70, output_tokens: 6 } },
      ],
    },
  ],
};

function setUp() {
  const dir = tempDir('subagent-crash');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return { workspace, input: subagentInput({ workspace, scriptFile: writeScript(dir, script) }) };
}

it('finishes on a new worker after a SIGKILL with the result of an uninterrupted run', async () => {
  const { client, close } = await connectClient();
  const workers: ChildProcess[] = [];
  try {
    const reference = setUp();
    const referenceQueue = uniqueTaskQueue('crash-ref');
    const expected = await withProjectWorker(referenceQueue, () =>
      client.workflow.execute(subagentWorkflow, {
        taskQueue: referenceQueue,
        workflowId: `${referenceQueue}/task/call_1`,
        args: [reference.input],
      }),
    );
    expect(expected.status).toBe('completed');

    const { input, workspace } = setUp();
    const taskQueue = uniqueTaskQueue('crash');
    workers.push(await startProjectWorkerProcess(taskQueue));
    const handle = await client.workflow.start(subagentWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}/task/call_1`,
      args: [input],
    });
    // Turn 1 and its (non-idempotent) append are done; turn 2's slow model call is running.
    await waitFor(
      'the first tool result',
      async () => (await handle.query(subagentStepsQuery, 0)).length >= 3,
    );
    workers[0].kill('SIGKILL');
    await once(workers[0], 'exit');
    workers.push(await startProjectWorkerProcess(taskQueue));

    const result = await handle.result();
    expect(result).toEqual(expected);
    expect(readFileSync(join(workspace, 'journal.txt'), 'utf8')).toBe('started\n');
    const history = await handle.fetchHistory();
    const modelCalls = history.events?.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
    );
    expect(modelCalls).toHaveLength(3);
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
    await close();
  }
});
