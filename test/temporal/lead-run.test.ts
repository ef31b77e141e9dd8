/**
 * `leadRunWorkflow` against the real server with the scripted model: delegations as child workflows, the
 * per-response and per-run limits, nested delegation up to max_depth, and cancellation.
 */
import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { workflowResult } from '../../client/results';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { LeadRunInput } from '../../contracts/lead';
import { subagentStepsQuery } from '../../contracts/queries';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { depthRefusalText, subagentResultText } from '../../contracts/delegation-result';
import { SUBAGENT_LIMIT_NOTE } from '../../workflows/delegation/limits';
import type { subagentWorkflow } from '../../workflows/subagent';
import {
  childStarts,
  startLeadRun,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';

const testClient = useTestClient();

type ScriptedCall = { name: string; args: Record<string, unknown>; id?: string };
const task = (id: string, subagentType = 'general-purpose'): ScriptedCall => ({
  name: 'task',
  id,
  args: { description: `Part ${id}`, prompt: `Work on part ${id}.`, subagent_type: subagentType },
});
/** A custom agent allowed to delegate in turn (nested delegation). */
const coordinator = {
  description: 'Splits work and delegates parts.',
  system_prompt: 'You coordinate.',
  tools: { allow: ['task', 'ls'] },
};
const childAnswers = { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Part done.' }] };
const usage = { input_tokens: 400, output_tokens: 100 };
const childUsage = { ...usage, total_tokens: 500 };
/** What a child has said when it is cancelled. */
const PARTIAL = 'Half of it: the inventory lists 12 suppliers.';
/** A child that answers part of its task in its first turn, then waits on the model until it is cancelled. */
const halfDone = {
  agent: 'general-purpose',
  turns: [
    { content: PARTIAL, tool_calls: [{ name: 'ls', args: { path: '.' } }], usage },
    { content: 'never', delay_ms: 600_000 },
  ],
};

/** Whether the subagent has run a tool (its first turn has ended); false while it does not exist yet. */
async function toolStepSeen(child: WorkflowHandle): Promise<boolean> {
  const steps = await child.query(subagentStepsQuery, 0).catch(() => []);
  return steps.some((step) => step.kind === 'tool');
}

function setUp(script: ModelScriptFileInput, config?: Record<string, unknown>): LeadRunInput {
  const { workspace, scriptFile } = scriptedWorkspace('lead', script);
  return leadInput({ workspace, scriptFile, config });
}

function startLead(input: LeadRunInput, taskQueue: string): Promise<WorkflowHandle<typeof leadRunWorkflow>> {
  return startLeadRun(testClient(), input, taskQueue);
}

describe('leadRunWorkflow', () => {
  it('starts only max_running children when one response asks for five', async () => {
    const input = setUp(
      {
        scripts: [
          {
            agent: 'lead',
            turns: [
              { tool_calls: ['a', 'b', 'c', 'd', 'e'].map((id) => task(id)) },
              { content: 'Combined.' },
            ],
          },
          childAnswers,
        ],
      },
      { subagent_runtime: { max_running: 3 } },
    );
    const taskQueue = uniqueTaskQueue('lead-concurrency');
    const { result, starts } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      return { result: await handle.result(), starts: await childStarts(handle) };
    });

    // Children start as their slots are granted, in whatever order the grants arrive.
    expect([...starts].sort()).toEqual(['a', 'b', 'c'].map((id) => `${taskQueue}-lead/task/${id}`));
    expect(result).toMatchObject({ status: 'completed', final_output: 'Combined.', turns: 2 });
    expect(result.ledger.map((e) => [e.id, e.status, e.result_brief])).toEqual([
      ['a', 'completed', 'Part done.'],
      ['b', 'completed', 'Part done.'],
      ['c', 'completed', 'Part done.'],
    ]);
  });

  it('stops a lead that keeps delegating at six, with the limit note and subagent_limit_capped', async () => {
    const batch = (n: number) => ({
      content: `Batch ${n}.`,
      tool_calls: [1, 2, 3].map((k) => task(`t${n}${k}`)),
    });
    const input = setUp({
      scripts: [
        { agent: 'lead', turns: [batch(1), batch(2), batch(3), { content: 'never reached' }] },
        childAnswers,
      ],
    });
    const taskQueue = uniqueTaskQueue('lead-total');
    const { result, starts } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      return { result: await handle.result(), starts: await childStarts(handle) };
    });

    expect(starts).toHaveLength(6);
    expect(result.stop_reason).toBe('subagent_limit_capped');
    expect(result.status).toBe('completed');
    expect(result.turns).toBe(3);
    expect(result.ledger).toHaveLength(6);
    expect(result.final_output).toBe(`Batch 3.\n\n${SUBAGENT_LIMIT_NOTE}`);
    expect(result.token_usage).toEqual({});
  });

  it('refuses delegation past max_depth with an error result, the tool still visible', async () => {
    const input = setUp(
      {
        scripts: [
          {
            agent: 'lead',
            turns: [{ tool_calls: [task('lvl1', 'coordinator')] }, { content: 'Lead done.' }],
          },
          {
            agent: 'coordinator',
            prompt_contains: 'part lvl1',
            turns: [{ tool_calls: [task('lvl2', 'coordinator')] }, { content: 'Level one done.' }],
          },
          {
            agent: 'coordinator',
            prompt_contains: 'part lvl2',
            turns: [{ tool_calls: [task('lvl3')] }, { content: 'Level two did it directly.' }],
          },
          childAnswers,
        ],
      },
      { subagents: { max_depth: 2, custom_agents: { coordinator } } },
    );
    const taskQueue = uniqueTaskQueue('lead-depth');
    const levelTwo = `${taskQueue}-lead/task/lvl1/task/lvl2`;
    const { result, steps } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      const result = await handle.result();
      return { result, steps: await testClient().workflow.getHandle(levelTwo).query(subagentStepsQuery, 0) };
    });

    expect(result.ledger.map((e) => [e.id, e.status, e.result_brief])).toEqual([
      ['lvl1', 'completed', 'Level one done.'],
    ]);
    const refusal = steps.find((s) => s.kind === 'tool');
    expect(refusal).toMatchObject({ kind: 'tool', name: 'task', is_error: true, text: depthRefusalText(2) });
    await expect(testClient().workflow.getHandle(`${levelTwo}/task/lvl3`).describe()).rejects.toBeInstanceOf(
      WorkflowNotFoundError,
    );
  });

  it("offers the run's tool loads to a subagent that delegates, each bounded by its own max_depth", async () => {
    const load = (name: string, id: string) => ({
      name,
      id,
      args: { description: `Through ${name}`, prompt: `Work through ${name}.` },
    });
    const input = setUp(
      {
        scripts: [
          {
            agent: 'lead',
            turns: [{ tool_calls: [task('co', 'coordinator')] }, { content: 'Lead: {{tool_result:co}}' }],
          },
          {
            agent: 'coordinator',
            turns: [
              { tool_calls: [load('subagent_helper', 'h1'), load('subagent_shallow', 's1')] },
              { content: 'Co: {{tool_result:h1}} | {{tool_result:s1}}' },
            ],
          },
          { agent: 'subagent_helper', turns: [{ content: 'Helper looked.' }] },
        ],
      },
      {
        subagents: { max_depth: 2, custom_agents: { coordinator } },
        subagent_tools: [
          { tool_name: 'subagent_helper', provider: 'spawn' },
          { tool_name: 'subagent_shallow', provider: 'spawn', max_depth: 1 },
        ],
      },
    );
    const taskQueue = uniqueTaskQueue('nested-loads');
    const coordinatorId = `${taskQueue}-lead/task/co`;
    const { result, helper } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      const result = await handle.result();
      const helper = await testClient().workflow.getHandle(`${coordinatorId}/task/h1`).describe();
      return { result, helper };
    });
    expect(result.final_output).toContain('Helper looked.');
    expect(result.final_output).toContain(depthRefusalText(1));
    expect(helper.memo).toMatchObject({ subagent_type: 'subagent_helper' });
    await expect(
      testClient().workflow.getHandle(`${coordinatorId}/task/s1`).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('ends a delegating subagent whose total is spent as completed, with the limit note and no guard label', async () => {
    const input = setUp(
      {
        scripts: [
          {
            agent: 'lead',
            turns: [{ tool_calls: [task('co', 'coordinator')] }, { content: 'Lead done.' }],
          },
          {
            agent: 'coordinator',
            turns: [
              { content: 'First part.', tool_calls: [task('p1')] },
              { content: 'Second part.', tool_calls: [task('p2')] },
              { content: 'never reached' },
            ],
          },
          childAnswers,
        ],
      },
      { subagents: { max_depth: 2, max_total_per_run: 1, custom_agents: { coordinator } } },
    );
    const taskQueue = uniqueTaskQueue('nested-total');
    const coordinatorId = `${taskQueue}-lead/task/co`;
    const { result, child } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      const result = await handle.result();
      return {
        result,
        child: await testClient().workflow.getHandle<typeof subagentWorkflow>(coordinatorId).result(),
      };
    });

    // The coordinator's own delegation cap is not a guard's: its result says so in words, never as a label.
    expect(child).toMatchObject({ status: 'completed', result: `Second part.\n\n${SUBAGENT_LIMIT_NOTE}` });
    expect(child.stop_reason).toBeUndefined();
    expect(subagentResultText(child, 900)).toBe(
      `Task Succeeded. Result: Second part.\n\n${SUBAGENT_LIMIT_NOTE}`,
    );
    expect(result.ledger.map((e) => [e.id, e.status, e.stop_reason])).toEqual([
      ['co', 'completed', undefined],
    ]);
    expect(result.final_output).toBe('Lead done.');
  });

  it('hands a cancelled subagent’s partial text and usage to a lead that goes on without it', async () => {
    const input = setUp({
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: [task('part')], usage },
            { content: `Went on. It said: {{tool_result:part}}`, usage },
          ],
        },
        halfDone,
      ],
    });
    const taskQueue = uniqueTaskQueue('child-cancel');
    const { result, child } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      const childHandle = testClient().workflow.getHandle(`${taskQueue}-lead/task/part`);
      await waitFor('the child’s first turn', () => toolStepSeen(childHandle));
      // As `subagents cancel <run-id>/task/part` and the Web UI do: the child alone.
      await childHandle.cancel();
      return { result: await handle.result(), child: (await childHandle.describe()).status.name };
    });

    // The child still ends Canceled; its lead reads what it had and goes on.
    expect(child).toBe('CANCELLED');
    const text = subagentResultText(
      { status: 'cancelled', error: 'Task cancelled by user', result: PARTIAL, turns: 1 },
      900,
    );
    expect(text).toContain(
      `Partial result (the subagent stopped before finishing; this is incomplete):\n${PARTIAL}`,
    );
    expect(result).toMatchObject({
      status: 'completed',
      final_output: `Went on. It said: ${text}`,
      turns: 2,
    });
    expect(result.ledger).toEqual([
      expect.objectContaining({
        id: 'part',
        status: 'cancelled',
        error: 'Task cancelled by user',
        result_brief: PARTIAL,
        token_usage: childUsage,
      }),
    ]);
    expect(result.token_usage.subagents).toEqual(childUsage);
  });

  it('cancels running children with the lead: every entry ends cancelled with its partial, no child keeps running', async () => {
    const input = setUp({
      scripts: [
        { agent: 'lead', turns: [{ tool_calls: [task('slow1'), task('slow2')] }, { content: 'never' }] },
        halfDone,
      ],
    });
    const taskQueue = uniqueTaskQueue('lead-cancel');
    const { result, children } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      for (const id of ['slow1', 'slow2']) {
        const child = testClient().workflow.getHandle(`${taskQueue}-lead/task/${id}`);
        await waitFor(`${id}’s first turn`, () => toolStepSeen(child));
      }
      await handle.cancel();
      // The run ends Canceled, its result in its memo.
      expect(await handle.result().catch((err: unknown) => err)).toBeInstanceOf(WorkflowFailedError);
      const result = await workflowResult(handle);
      const children = await Promise.all(
        result.ledger.map(
          async (e) => (await testClient().workflow.getHandle(e.workflow_id).describe()).status.name,
        ),
      );
      return { result, children };
    });

    expect(result.status).toBe('cancelled');
    expect(result.ledger.map((e) => [e.id, e.status, e.result_brief, e.token_usage])).toEqual([
      ['slow1', 'cancelled', PARTIAL, childUsage],
      ['slow2', 'cancelled', PARTIAL, childUsage],
    ]);
    expect(result.token_usage.subagents?.total_tokens).toBe(2 * childUsage.total_tokens);
    expect(children).toEqual(['CANCELLED', 'CANCELLED']);
  });
});
