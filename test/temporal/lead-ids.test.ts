/**
 * Tool-call ids are labels, not identities (issue: a reused, duplicated or oversized id from the model must
 * neither wedge a run nor let it pass `max_total_per_run`), and a subagent's wall clock counts from when the
 * server started it, as its hard backstop does.
 */
import { workflowResult } from '../../client/results';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { subagentWorkflow } from '../../workflows/subagent';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { leadInput, subagentInput, tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();

const task = (id: string, part: string) => ({
  name: 'task',
  id,
  args: { description: `Part ${part}`, prompt: `Work on part ${part}.`, subagent_type: 'general-purpose' },
});

function workspaceAndScript(script: ModelScriptFileInput): { workspace: string; scriptFile: string } {
  const dir = tempDir('lead-ids');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return { workspace, scriptFile: writeScript(dir, script) };
}

it('runs every delegation of reused, duplicated and oversized ids, each with its own result, within the limit', async () => {
  const { workspace, scriptFile } = workspaceAndScript({
    scripts: [
      {
        agent: 'lead',
        turns: [
          // A provider that numbers calls per response, a duplicate in one response, a 2,000-character id.
          { tool_calls: [task('call_0', 'A'), task('call_0', 'B')] },
          { tool_calls: [task('call_0', 'C'), task('x'.repeat(2000), 'D')] },
          { tool_calls: [task('call_0', 'E')] },
          { content: 'All parts done.' },
        ],
      },
      {
        agent: 'general-purpose',
        turns: [{ content: 'Part done.' }],
      },
    ],
  });
  const input = leadInput({ workspace, scriptFile, config: { subagents: { max_total_per_run: 4 } } });
  const taskQueue = uniqueTaskQueue('lead-ids');
  const result = await withProjectWorker(taskQueue, async () =>
    workflowResult(
      await testClient().workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      }),
    ),
  );
  // Four delegations ran, one per call, each under a workflow id of its own; the fifth was over the limit.
  expect(result.ledger.map((entry) => [entry.id, entry.description, entry.status])).toEqual([
    ['call_0', 'Part A', 'completed'],
    ['d2', 'Part B', 'completed'],
    ['d3', 'Part C', 'completed'],
    ['d4', 'Part D', 'completed'],
  ]);
  expect(new Set(result.ledger.map((entry) => entry.workflow_id)).size).toBe(4);
  expect(result.stop_reason).toBe('subagent_limit_capped');
});

it("counts a subagent's wall clock from the server's start, even when no worker took it at first", async () => {
  const { workspace, scriptFile } = workspaceAndScript({
    scripts: [
      {
        repeat_last: true,
        turns: [{ content: 'Still working.', tool_calls: [{ name: 'ls', args: '{}' }], delay_ms: 500 }],
      },
    ],
  });
  const input = subagentInput({
    workspace,
    scriptFile,
    config: {
      loop_detection: { enabled: false },
      subagents: { agents: { 'general-purpose': { timeout_seconds: 5 } } },
    },
  });
  const taskQueue = uniqueTaskQueue('wall-clock');
  // Started while no worker polls: the run waits 3 s for one, as under a long queue. (Only a setup: a busy host
  // makes the wait longer, which the assertions below allow for.)
  const handle = await testClient().workflow.start(subagentWorkflow, {
    taskQueue,
    workflowId: `${taskQueue}/task/call_1`,
    args: [input],
    workflowExecutionTimeout: '65 seconds',
  });
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const result = await withProjectWorker(taskQueue, () => workflowResult(handle));
  const history = await handle.fetchHistory();
  const events = history.events ?? [];
  const timeOf = (event: (typeof events)[number] | undefined) => {
    const time = event?.eventTime;
    return Number(time?.seconds ?? 0) * 1000 + Math.floor((time?.nanos ?? 0) / 1e6);
  };
  const startedAt = timeOf(events.at(0));
  const endedAt = timeOf(events.at(-1));
  // Its first step: the first workflow task a worker took (3 s or more after the server started it).
  const firstStepAt = timeOf(events.find((event) => event.workflowTaskStartedEventAttributes));
  expect(result).toMatchObject({ status: 'timed_out', result: 'Still working.' });
  expect(firstStepAt - startedAt).toBeGreaterThanOrEqual(3000);
  // Ended once 5 s had passed since the server started it, and before 5 s counted from its first step: the
  // server's times, so however late a busy host served the end, it tells one count from the other.
  expect(endedAt - startedAt).toBeGreaterThanOrEqual(5000);
  expect(endedAt).toBeLessThan(firstStepAt + 5000);
});
