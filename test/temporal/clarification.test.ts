/**
 * `ask_clarification` against the real server with the scripted model: a run that asks waits durably (no
 * activity, no worker slot), survives its worker's death while waiting, takes its answer from
 * `subagents answer` and goes on; a second answer, an unknown question and an answer to a run that is not
 * waiting are refused; a question nobody answers times out and the model is told; a subagent allowed the
 * tool asks, and the answer given with the lead's run id reaches it.
 */
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import type { WorkflowHandle } from '@temporalio/client';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { AnswerRefusedError, SubagentsClient } from '../../client/api';
import { answeredToolText, timedOutToolText, type RecordedAnswer } from '../../contracts/clarification';
import type { TaskEvent } from '../../contracts/events';
import { leadEventsQuery, leadStatusQuery, type LeadRunInput, type LeadStatus } from '../../contracts/lead';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import {
  startProjectWorkerProcess,
  suiteCli,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
  startLeadRun,
} from '../harness/temporal';

const testClient = useTestClient();

const ask = (id: string, question: string, extra: Record<string, unknown> = {}) => ({
  name: 'ask_clarification',
  id,
  args: { question, clarification_type: 'missing_info', ...extra },
});

function setUp(script: ModelScriptFileInput, config: Record<string, unknown> = {}): LeadRunInput {
  const { workspace, scriptFile } = scriptedWorkspace('clarification', script);
  return leadInput({ workspace, scriptFile, config });
}

function startLead(input: LeadRunInput, taskQueue: string): Promise<WorkflowHandle<typeof leadRunWorkflow>> {
  return startLeadRun(testClient(), input, taskQueue);
}

async function status(handle: WorkflowHandle<typeof leadRunWorkflow>): Promise<LeadStatus> {
  return handle.query(leadStatusQuery);
}

async function waitForQuestion(handle: WorkflowHandle<typeof leadRunWorkflow>, ref: string): Promise<void> {
  await waitFor(`question ${ref}`, async () =>
    ((await status(handle).catch(() => undefined))?.questions ?? []).some((q) => q.ref === ref),
  );
}

const eventTypes = (events: TaskEvent[]) => events.map((event) => `${event.type} ${event.task_id}`);

it('waits for an answer across a worker restart, takes it from the CLI, and refuses what does not fit', async () => {
  const input = setUp(
    {
      scripts: [
        {
          agent: 'lead',
          turns: [
            // The model thinks a while first: the run is open and not waiting yet.
            {
              tool_calls: [ask('ask1', 'Which region should the report cover?', { options: ['EU', 'US'] })],
              delay_ms: 6000,
            },
            {
              content: 'Noted.',
              tool_calls: [ask('ask2', 'Include drafts?', { clarification_type: 'risk_confirmation' })],
            },
            { content: 'Region: {{tool_result:ask1}} / Drafts: {{tool_result:ask2}}' },
          ],
        },
      ],
    },
    { clarification: { timeout_seconds: 600 } },
  );
  const taskQueue = uniqueTaskQueue('clarify');
  const workers: ChildProcess[] = [];
  try {
    workers.push(await startProjectWorkerProcess(taskQueue));
    const handle = await startLead(input, taskQueue);
    const runId = handle.workflowId;
    const run = new SubagentsClient(testClient(), testNamespace()).getRun(runId);

    // Open, thinking, no question yet: an answer is refused.
    await waitFor(
      'the run to answer its status',
      async () => (await status(handle).catch(() => undefined)) !== undefined,
    );
    const early = await run.answer('EU').catch((err: unknown) => err);
    expect(early).toBeInstanceOf(AnswerRefusedError);
    expect((early as AnswerRefusedError).kind).toBe('NotWaitingForAnswer');
    expect((early as Error).message).toBe(
      `run ${runId} is not waiting for an answer (it has no open question)`,
    );

    await waitForQuestion(handle, 'q1');
    const shown = await suiteCli(['status', runId]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(
      'question q1 (lead, missing_info): "Which region should the report cover?" [EU | US]',
    );
    expect(shown.stdout).toContain(`answer: subagents answer ${runId} "<answer>" (closes unanswered at `);
    expect(eventTypes(await handle.query(leadEventsQuery, 0))).toEqual(['clarification_requested q1']);
    // The Web UI's current details say what the run waits for, and how to answer.
    const { currentDetails } = await handle.query<{ currentDetails?: string }>(
      '__temporal_workflow_metadata',
    );
    // The question's text escaped (its quotes as they are: the UI's markdown takes no escape for them), the
    // command a code span: both survive the UI's markdown as written.
    expect(currentDetails).toContain(
      'Now: waiting for an answer to q1: "Which region should the report cover?"',
    );
    expect(currentDetails).toContain(`Answer with: \`subagents answer ${runId} "<answer>" --question q1\``);
    // The wait is the workflow's own: no tool activity was scheduled for the question.
    const scheduled = ((await handle.fetchHistory()).events ?? []).flatMap(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
    );
    expect(scheduled).not.toContain('executeToolCall');

    // The worker dies while the run waits; a new one takes over when the answer comes.
    workers[0].kill('SIGKILL');
    await once(workers[0], 'exit');
    workers.push(await startProjectWorkerProcess(taskQueue));

    const answered = await suiteCli(['answer', runId, 'EU only']);
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);
    expect(answered.stdout).toMatch(
      new RegExp(`^${runId}: answer to q1 \\(lead\\) recorded at \\S+ by \\S+@\\S+; the run goes on\\n$`),
    );

    await waitForQuestion(handle, 'q2');
    const again = await suiteCli(['answer', runId, 'US', '--question', 'q1']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      /^subagents: answer: question q1 was already answered at \S+ \("EU only"\); an answer is taken once\n$/,
    );
    const unknown = await suiteCli(['answer', runId, 'yes', '--question', 'q9']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      `subagents: answer: run ${runId} has no question "q9" (its questions: q1, q2)\n`,
    );
    const blank = await suiteCli(['answer', runId, '   ']);
    expect(blank.code).toBe(2);
    expect(blank.stderr).toBe('subagents: answer: the answer is empty (write what the run should know)\n');

    const second = await suiteCli(['answer', runId, 'yes', '--question', 'q2', '--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout) as RecordedAnswer).toMatchObject({
      ref: 'q2',
      question_id: 'q2',
      question: 'Include drafts?',
      asked_by: 'lead',
      workflow_id: runId,
      answer: 'yes',
    });

    const result = await handle.result();
    expect(result).toMatchObject({
      status: 'completed',
      turns: 3,
      final_output: `Region: ${answeredToolText('EU only')} / Drafts: ${answeredToolText('yes')}`,
    });
    expect(eventTypes(await handle.query(leadEventsQuery, 0))).toEqual([
      'clarification_requested q1',
      'clarification_answered q1',
      'clarification_requested q2',
      'clarification_answered q2',
    ]);
    const late = await suiteCli(['answer', runId, 'too late']);
    expect(late.code).toBe(1);
    expect(late.stderr).toBe(
      `subagents: answer: run ${runId} has ended (completed): it is not waiting for an answer\n`,
    );
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
  }
});

it('tells the model no answer came once the timeout passes, and refuses a late answer', async () => {
  const input = setUp(
    {
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: [ask('ask1', 'Which region?')] },
            // Thinking long enough for a late answer to arrive meanwhile.
            { content: 'Went on: {{tool_result}}', delay_ms: 8000 },
          ],
        },
      ],
    },
    { clarification: { timeout_seconds: 2 } },
  );
  const taskQueue = uniqueTaskQueue('clarify-timeout');
  await withProjectWorker(taskQueue, async () => {
    const handle = await startLead(input, taskQueue);
    const run = new SubagentsClient(testClient(), testNamespace()).getRun(handle.workflowId);
    await waitFor('the question to time out', async () =>
      (await handle.query(leadEventsQuery, 0).catch(() => [])).some(
        (e) => e.type === 'clarification_timed_out',
      ),
    );
    const late = await run.answer('EU', { question: 'q1' }).catch((err: unknown) => err);
    expect(late).toBeInstanceOf(AnswerRefusedError);
    expect((late as Error).message).toMatch(
      /^question q1 timed out at \S+ \(no answer within 2 s\); the run went on without it$/,
    );
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', final_output: `Went on: ${timedOutToolText(2)}` });
    expect(eventTypes(await handle.query(leadEventsQuery, 0))).toEqual([
      'clarification_requested q1',
      'clarification_timed_out q1',
    ]);
  });
});

it("answers a subagent's question given with the lead's run id", async () => {
  const input = setUp(
    {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'call_1',
                  args: {
                    description: 'Paint the shed',
                    prompt: 'Paint the shed.',
                    subagent_type: 'painter',
                  },
                },
              ],
            },
            { content: 'Lead: {{tool_result}}' },
          ],
        },
        {
          agent: 'painter',
          turns: [
            {
              tool_calls: [
                ask('p1', 'Which colour?', {
                  clarification_type: 'approach_choice',
                  options: ['Blue', 'Red'],
                }),
              ],
            },
            { content: 'Painted: {{tool_result}}' },
          ],
        },
      ],
    },
    {
      clarification: { timeout_seconds: 600 },
      subagents: {
        custom_agents: {
          painter: {
            description: 'Paints.',
            system_prompt: 'You paint.',
            tools: { allow: ['ls', 'ask_clarification'] },
          },
        },
      },
    },
  );
  const taskQueue = uniqueTaskQueue('clarify-child');
  await withProjectWorker(taskQueue, async () => {
    const handle = await startLead(input, taskQueue);
    const runId = handle.workflowId;
    await waitForQuestion(handle, 'call_1/q1');
    const [question] = (await status(handle)).questions ?? [];
    expect(question).toMatchObject({
      ref: 'call_1/q1',
      id: 'q1',
      asked_by: 'painter',
      workflow_id: `${runId}/task/call_1`,
      question: 'Which colour?',
      options: ['Blue', 'Red'],
    });
    const shown = await suiteCli(['status', runId]);
    expect(shown.stdout).toContain(`answer: subagents answer ${runId} "<answer>" --question call_1/q1`);

    // The only question of the run: no --question needed.
    const answered = await suiteCli(['answer', runId, 'Blue']);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain('answer to call_1/q1 (painter) recorded');

    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.final_output).toBe(`Lead: Task Succeeded. Result: Painted: ${answeredToolText('Blue')}`);
    expect(eventTypes(await handle.query(leadEventsQuery, 0))).toEqual([
      'task_started call_1',
      'clarification_requested call_1/q1',
      'clarification_answered call_1/q1',
      'task_completed call_1',
    ]);
    // The subagent has ended: a second answer to its question has nowhere to go.
    const run = new SubagentsClient(testClient(), testNamespace()).getRun(runId);
    const late = await run.answer('Red', { question: 'call_1/q1' }).catch((err: unknown) => err);
    expect(late).toBeInstanceOf(AnswerRefusedError);
    expect((late as AnswerRefusedError).kind).toBe('NotWaitingForAnswer');
    expect((late as Error).message).toBe(
      'the subagent that asked call_1/q1 has ended: it is not waiting for an answer',
    );
  });
});

/** A custom agent that may ask, and one that delegates to it. */
const painter = {
  description: 'Paints.',
  system_prompt: 'You paint.',
  tools: { allow: ['ls', 'ask_clarification'] },
};
const coordinator = {
  description: 'Coordinates.',
  system_prompt: 'You coordinate.',
  tools: { allow: ['task'] },
};
const delegate = (id: string, type: string) => ({
  name: 'task',
  id,
  args: { description: `Do ${id}`, prompt: `Do ${id}.`, subagent_type: type },
});

it("passes a nested subagent's question up to the lead, and its answer down to the subagent", async () => {
  const input = setUp(
    {
      scripts: [
        {
          agent: 'lead',
          turns: [{ tool_calls: [delegate('co', 'coordinator')] }, { content: 'Lead: {{tool_result}}' }],
        },
        {
          agent: 'coordinator',
          turns: [{ tool_calls: [delegate('paint', 'painter')] }, { content: 'Co: {{tool_result}}' }],
        },
        {
          agent: 'painter',
          turns: [{ tool_calls: [ask('p1', 'Which colour?')] }, { content: '{{tool_result}}' }],
        },
      ],
    },
    {
      clarification: { timeout_seconds: 600 },
      subagents: { max_depth: 2, custom_agents: { painter, coordinator } },
    },
  );
  const taskQueue = uniqueTaskQueue('clarify-nested');
  await withProjectWorker(taskQueue, async () => {
    const handle = await startLead(input, taskQueue);
    const runId = handle.workflowId;
    await waitForQuestion(handle, 'co/paint/q1');
    // By any workflow id on the way down to the one that asks: what it and the subagents under it wait on.
    const api = new SubagentsClient(testClient(), testNamespace());
    const refs = async (workflowId: string) => (await api.questions(workflowId)).map((q) => q.ref);
    expect(await refs(runId)).toEqual(['co/paint/q1']);
    expect(await refs(`${runId}/task/co`)).toEqual(['co/paint/q1']);
    expect(await refs(`${runId}/task/co/task/paint`)).toEqual(['co/paint/q1']);
    const answered = await suiteCli(['answer', runId, 'Green', '--question', 'co/paint/q1']);
    expect(answered.code).toBe(0);
    const result = await handle.result();
    expect(result.final_output).toBe(
      `Lead: Task Succeeded. Result: Co: Task Succeeded. Result: ${answeredToolText('Green')}`,
    );
    expect(eventTypes(await handle.query(leadEventsQuery, 0))).toEqual([
      'task_started co',
      'clarification_requested co/paint/q1',
      'clarification_answered co/paint/q1',
      'task_completed co',
    ]);
    expect(await refs(runId)).toEqual([]);
  });
});

it('ends a subagent whose own wall clock runs out while it waits, and its question with it', async () => {
  const input = setUp(
    {
      scripts: [
        {
          agent: 'lead',
          turns: [{ tool_calls: [delegate('paint', 'painter')] }, { content: 'Lead: {{tool_result}}' }],
        },
        { agent: 'painter', turns: [{ content: 'Asking.', tool_calls: [ask('p1', 'Which colour?')] }] },
      ],
    },
    {
      clarification: { timeout_seconds: 600 },
      subagents: { custom_agents: { painter: { ...painter, timeout_seconds: 8 } } },
    },
  );
  const taskQueue = uniqueTaskQueue('clarify-clock');
  await withProjectWorker(taskQueue, async () => {
    const handle = await startLead(input, taskQueue);
    const runId = handle.workflowId;
    await waitForQuestion(handle, 'paint/q1');
    const result = await handle.result();
    expect(result.ledger.map((e) => [e.id, e.status])).toEqual([['paint', 'timed_out']]);
    expect(result.final_output).toMatch(
      /^Lead: Task timed out\. Error: Execution timed out after 8 seconds\n/,
    );
    expect(eventTypes(await handle.query(leadEventsQuery, 0))).toEqual([
      'task_started paint',
      'clarification_requested paint/q1',
      'task_timed_out paint',
    ]);
    const late = await new SubagentsClient(testClient(), testNamespace())
      .getRun(runId)
      .answer('Red', { question: 'paint/q1' })
      .catch((err: unknown) => err);
    expect((late as Error).message).toBe(
      'the subagent that asked paint/q1 has ended: it is not waiting for an answer',
    );
  });
});
