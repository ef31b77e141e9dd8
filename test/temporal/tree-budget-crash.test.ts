/**
 * The tree budget across a worker kill (issue 45), on the real server: a lead and two children spend under a
 * tree budget, the worker is SIGKILLed while the children's model calls are in flight, another worker finishes
 * the run, and the tree's spend is exactly the usage of the model calls that completed, each counted once: a
 * call lost with the worker is neither dropped nor counted twice when its retry completes.
 */
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { subagentStepsQuery } from '../../contracts/queries';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { connectClient, startProjectWorkerProcess, uniqueTaskQueue, waitFor } from '../harness/temporal';
import { leadInput, partTaskCalls, scriptedWorkspace } from '../support/subagent-input';

/** Every model call spends 400 in and 100 out. */
const CALL = { input_tokens: 400, output_tokens: 100 };
const CALL_TOKENS = 500;

function script(): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: partTaskCalls(2, (i) => `Work on part ${i}.`), usage: CALL },
          { content: 'Combined.', usage: CALL },
        ],
      },
      {
        agent: 'general-purpose',
        turns: [
          { content: 'Looking.', tool_calls: [{ name: 'ls', args: { path: '.' } }], usage: CALL },
          // The worker is killed while this call is in flight.
          {
            content: 'Looking again.',
            tool_calls: [{ name: 'ls', args: { path: '.' } }],
            usage: CALL,
            delay_ms: 4000,
          },
          { content: 'Part done.', usage: CALL },
        ],
      },
    ],
  };
}

/** The model calls that completed in a workflow's history (a retried call once: its attempt that completed). */
async function completedModelCalls(
  client: Awaited<ReturnType<typeof connectClient>>['client'],
  workflowId: string,
): Promise<number> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const modelCalls = new Set(
    events
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
      .map((event) => String(event.eventId)),
  );
  return events.filter((event) => {
    const scheduled = event.activityTaskCompletedEventAttributes?.scheduledEventId;
    return scheduled !== undefined && scheduled !== null && modelCalls.has(String(scheduled));
  }).length;
}

it('neither loses nor double-counts a model call when the worker is killed mid-run', async () => {
  const { client, close } = await connectClient();
  const workers: ChildProcess[] = [];
  try {
    const { workspace, scriptFile } = scriptedWorkspace('tree-budget-crash', script());
    const input = leadInput({
      workspace,
      scriptFile,
      config: { loop_detection: { enabled: false }, token_budget: { enabled: true, max_tokens: 100_000 } },
    });
    const taskQueue = uniqueTaskQueue('tree-budget-crash');
    workers.push(await startProjectWorkerProcess(taskQueue));
    const handle = await client.workflow.start(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-lead`,
      args: [input],
    });
    // Both children made their first call and ran its tool; their second, slow calls are in flight.
    const children = [0, 1].map((i) => `${handle.workflowId}/task/part${i}`);
    await waitFor('both children past their first call', async () => {
      const steps = await Promise.all(
        children.map((id) =>
          client.workflow
            .getHandle(id)
            .query(subagentStepsQuery, 0)
            .catch(() => []),
        ),
      );
      return steps.every((list) => list.length >= 2);
    });
    workers[0].kill('SIGKILL');
    await once(workers[0], 'exit');
    workers.push(await startProjectWorkerProcess(taskQueue));

    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.stop_reason).toBeUndefined();
    const calls = await Promise.all(
      [handle.workflowId, ...children].map((id) => completedModelCalls(client, id)),
    );
    // Each turn of the script completed once: the lead's two, each child's three.
    expect(calls).toEqual([2, 3, 3]);
    const spent = result.tree_budget?.spent;
    expect(spent?.total_tokens).toBe(8 * CALL_TOKENS);
    expect(spent).toMatchObject({
      input_tokens: 8 * CALL.input_tokens,
      output_tokens: 8 * CALL.output_tokens,
    });
    expect(result.token_usage.total?.total_tokens).toBe(8 * CALL_TOKENS);
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
    await close();
  }
});
