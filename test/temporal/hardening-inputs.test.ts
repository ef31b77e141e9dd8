/**
 * What a careless caller or a model sends, against the real server: bad workflow inputs are refused at the
 * client API (nothing starts) and at workflow start (the run fails at once with the reason); system folders
 * are never a workspace; a run id starts one run only, and a retried start gets that run back; answers,
 * tool arguments and prompts of 5 MB neither loop nor fail with a generic error.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { WorkflowFailedError, WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { RunIdTakenError, SubagentsClient } from '../../client/api';
import { INVALID_INPUT_FAILURE_TYPE, InvalidInputError } from '../../contracts/inputs';
import type { LeadRunInput } from '../../contracts/lead';
import type { SubagentInput } from '../../contracts/subagent';
import { projectDataConverter } from '../../payloads/data-converter';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { subagentWorkflow } from '../../workflows/subagent';
import {
  testNamespace,
  testWorkflowBundle,
  uniqueTaskQueue,
  useTestClient,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, subagentInput, tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();
const api = () => new SubagentsClient(testClient(), testNamespace());

const FIVE_MB = 5 * 1024 * 1024;

function setUp(
  script: ModelScriptFileInput,
  prompt?: string,
): { input: LeadRunInput; dir: string; workspace: string } {
  const dir = tempDir('hardening');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const input = leadInput({ workspace, scriptFile: writeScript(dir, script), ...(prompt && { prompt }) });
  return { input, dir, workspace };
}

const answers = (content: string, delayMs = 0): ModelScriptFileInput => ({
  scripts: [{ agent: 'lead', repeat_last: true, turns: [{ content, delay_ms: delayMs }] }],
});

async function expectNoRun(runId: string): Promise<void> {
  await expect(testClient().workflow.getHandle(runId).describe()).rejects.toBeInstanceOf(
    WorkflowNotFoundError,
  );
}

/** The failure a workflow ended with: an ApplicationFailure of the refused-input type, with its message. */
async function refusal(handle: WorkflowHandle): Promise<ApplicationFailure> {
  const err: unknown = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const cause = (err as WorkflowFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  const failure = cause as ApplicationFailure;
  expect(failure.type).toBe(INVALID_INPUT_FAILURE_TYPE);
  expect(failure.nonRetryable).toBe(true);
  return failure;
}

/**
 * A refused run's history is its first workflow task and the failure, nothing else; replayed (a query on the
 * closed run, a worker that lost it from its cache) it fails again the same way instead of running the loop,
 * whose first command would not match the recorded failure.
 */
async function replaysAsRefused(handle: WorkflowHandle): Promise<void> {
  const { EventType } = temporal.api.enums.v1;
  const history = await handle.fetchHistory();
  expect(history.events?.map((event) => event.eventType)).toEqual([
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
  ]);
  await expect(
    Worker.runReplayHistory(
      // The project's converter: its input's larger fields are in the payload store (payloads.shared_fields).
      { workflowBundle: { codePath: testWorkflowBundle() }, dataConverter: projectDataConverter() },
      history,
      handle.workflowId,
    ),
  ).resolves.toBeUndefined();
}

describe('bad inputs at the client API', () => {
  const cases: [string, (input: LeadRunInput, dir: string) => unknown, RegExp][] = [
    ['a missing prompt', (i) => ({ ...i, prompt: undefined }), /prompt: is missing \(text\)/],
    [
      'a relative workspace',
      (i) => ({ ...i, scope: { ...i.scope, workspace: 'work' } }),
      /workspace: "work" is not an absolute/,
    ],
    ['max_turns 0', (i) => ({ ...i, max_turns: 0 }), /max_turns: 0 is out of range \(1 or more\)/],
    [
      'max_total_per_run -1',
      (i) => ({ ...i, limits: { ...i.limits, max_total_per_run: -1 } }),
      /limits\.max_total_per_run: -1 is out of range \(1–50\)/,
    ],
    [
      'max_concurrent 0',
      (i) => ({ ...i, limits: { ...i.limits, max_concurrent: 0 } }),
      /limits\.max_concurrent: 0 is out of range \(1–4\)/,
    ],
    [
      // The config's range and words (subagents.max_concurrent: 5 is out of range (1–4)).
      'max_concurrent 5',
      (i) => ({ ...i, limits: { ...i.limits, max_concurrent: 5 } }),
      /^ {2}limits\.max_concurrent: 5 is out of range \(1–4\)$/m,
    ],
    ['a missing model', (i) => ({ ...i, model: undefined }), /model: is missing/],
    [
      'the root folder',
      (i) => ({ ...i, scope: { ...i.scope, workspace: '/' } }),
      /workspace: "\/" is a system folder/,
    ],
    [
      '/etc',
      (i) => ({ ...i, scope: { ...i.scope, workspace: '/etc' } }),
      /workspace: "\/etc" is a system folder/,
    ],
    [
      '/usr/lib',
      (i) => ({ ...i, scope: { ...i.scope, workspace: '/usr/lib' } }),
      /"\/usr\/lib" is a system folder/,
    ],
    ['the home folder', (i) => ({ ...i, scope: { ...i.scope, workspace: homedir() } }), /is a system folder/],
    [
      'a file',
      (i, dir) => {
        const file = join(dir, 'a-file');
        writeFileSync(file, 'x');
        return { ...i, scope: { ...i.scope, workspace: file } };
      },
      /is a file, not a folder/,
    ],
    [
      'a path under a file',
      (i, dir) => {
        const file = join(dir, 'b-file');
        writeFileSync(file, 'x');
        return { ...i, scope: { ...i.scope, workspace: join(file, 'sub') } };
      },
      /is a file, not a folder/,
    ],
  ];

  it.each(cases)('refuses %s before anything starts', async (_label, spoil, message) => {
    const { input, dir } = setUp(answers('never'));
    const runId = `${uniqueTaskQueue('bad-input')}`;
    const started = api().startRun(spoil(input, dir) as LeadRunInput, {
      taskQueue: 'nobody-polls',
      runId,
    });
    await expect(started).rejects.toBeInstanceOf(InvalidInputError);
    await expect(started).rejects.toThrow(message);
    await expectNoRun(runId);
  });

  it('makes a missing workspace folder', async () => {
    const { input, dir } = setUp(answers('Done.'));
    const workspace = join(dir, 'new', 'folder');
    const taskQueue = uniqueTaskQueue('new-ws');
    const result = await withProjectWorker(taskQueue, async () =>
      (await api().startRun({ ...input, scope: { ...input.scope, workspace } }, { taskQueue })).result(),
    );
    expect(result.status).toBe('completed');
    expect(statSync(workspace).isDirectory()).toBe(true);
  });
});

describe('bad inputs at workflow start', () => {
  it('fails a lead run at once with the reason, without retrying its task, and replays as that failure', async () => {
    const { input } = setUp(answers('never'));
    const taskQueue = uniqueTaskQueue('bad-lead');
    const failure = await withProjectWorker(taskQueue, async () => {
      const handle = await testClient().workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [
          {
            ...input,
            scope: { ...input.scope, workspace: 'relative' },
            limits: { ...input.limits, max_concurrent: 0 },
            prompt: undefined as unknown as string,
          },
        ],
      });
      const refused = await refusal(handle);
      await replaysAsRefused(handle);
      return refused;
    });
    expect(failure.message).toMatch(/lead run input is refused, 3 problems/);
    expect(failure.message).toMatch(/prompt: is missing/);
    expect(failure.message).toMatch(/workspace: "relative" is not an absolute path/);
    expect(failure.message).toMatch(/limits\.max_concurrent: 0 is out of range/);
  });

  it('fails a subagent at once with the reason, and replays as that failure', async () => {
    const dir = tempDir('bad-subagent');
    const input: SubagentInput = subagentInput({
      workspace: '/etc',
      scriptFile: writeScript(dir, answers('never')),
    });
    const taskQueue = uniqueTaskQueue('bad-subagent');
    const failure = await withProjectWorker(taskQueue, async () => {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/call_1`,
        args: [{ ...input, agent: { ...input.agent, max_turns: -1 } }],
      });
      const refused = await refusal(handle);
      await replaysAsRefused(handle);
      return refused;
    });
    expect(failure.message).toMatch(/subagent input is refused, 2 problems/);
    expect(failure.message).toMatch(/agent\.max_turns: -1 is out of range/);
    expect(failure.message).toMatch(/workspace: "\/etc" is a system folder/);
  });
});

describe('a run id starts one run', () => {
  it('returns the running run to a retried start, the finished run to a later one, and refuses another input', async () => {
    const { input } = setUp(answers('Slow answer.', 1500));
    const taskQueue = uniqueTaskQueue('idempotent');
    const runId = `${taskQueue}-run`;
    await withProjectWorker(taskQueue, async () => {
      const first = await api().startRun(input, { taskQueue, runId });
      const retried = await api().startRun(input, { taskQueue, runId });
      expect(retried.runId).toBe(runId);
      const running = await testClient().workflow.getHandle(runId).describe();
      expect(running.status.name).toBe('RUNNING');

      await expect(
        api().startRun({ ...input, prompt: 'Another request.' }, { taskQueue, runId }),
      ).rejects.toBeInstanceOf(RunIdTakenError);

      expect((await first.result()).final_output).toBe('Slow answer.');
      expect((await retried.result()).final_output).toBe('Slow answer.');

      // Finished: the same request again gets the same run back; nothing starts a second time.
      const again = await api().startRun(input, { taskQueue, runId });
      expect((await again.result()).final_output).toBe('Slow answer.');
      const other = api().startRun({ ...input, prompt: 'Another request.' }, { taskQueue, runId });
      await expect(other).rejects.toBeInstanceOf(RunIdTakenError);
      await expect(other).rejects.toThrow(/is taken by a run started with another input \(completed\)/);
    });
    const executions: string[] = [];
    for await (const execution of testClient().workflow.list({ query: `WorkflowId = '${runId}'` })) {
      executions.push(execution.runId);
    }
    expect(executions.length).toBeLessThanOrEqual(1);
    const description = await testClient().workflow.getHandle(runId).describe();
    expect(description.status.name).toBe('COMPLETED');
    const history = await testClient().workflow.getHandle(runId).fetchHistory();
    expect(history.events?.[0]?.workflowExecutionStartedEventAttributes?.firstExecutionRunId).toBe(
      description.runId,
    );
  });
});

describe('5 MB through a run', () => {
  const big = (label: string) => label.padEnd(FIVE_MB, 'x');

  it('a model answer of 5 MB', async () => {
    const content = big('answer:');
    const { input } = setUp(answers(content));
    const taskQueue = uniqueTaskQueue('big-answer');
    const startedAt = Date.now();
    const result = await withProjectWorker(taskQueue, async () =>
      (await api().startRun(input, { taskQueue })).result(),
    );
    const seconds = (Date.now() - startedAt) / 1000;
    process.stderr.write(`5 MB model answer: ${result.status} in ${seconds.toFixed(1)} s\n`);
    expect(result.status).toBe('completed');
    expect(result.final_output.length).toBe(FIVE_MB);
    expect(result.turns).toBe(1);
    expect(seconds).toBeLessThan(30);
  });

  it('tool-call arguments of 5 MB', async () => {
    const content = big('file:');
    const { input, workspace } = setUp({
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: [{ name: 'write_file', args: { path: 'big.txt', content } }] },
            { content: 'Written.' },
          ],
        },
      ],
    });
    const taskQueue = uniqueTaskQueue('big-args');
    const startedAt = Date.now();
    const result = await withProjectWorker(taskQueue, async () =>
      (await api().startRun(input, { taskQueue })).result(),
    );
    const seconds = (Date.now() - startedAt) / 1000;
    process.stderr.write(`5 MB tool-call arguments: ${result.status} in ${seconds.toFixed(1)} s\n`);
    expect(result).toMatchObject({ status: 'completed', final_output: 'Written.', turns: 2 });
    expect(statSync(join(workspace, 'big.txt')).size).toBe(FIVE_MB);
    expect(seconds).toBeLessThan(30);
  });

  it("a subagent's answer of 5 MB, handed back to the lead", async () => {
    const content = big('child:');
    const { input } = setUp({
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'big',
                  args: {
                    description: 'Big answer',
                    prompt: 'Answer at length.',
                    subagent_type: 'general-purpose',
                  },
                },
              ],
            },
            { content: 'Combined.' },
          ],
        },
        { agent: 'general-purpose', turns: [{ content }] },
      ],
    });
    const taskQueue = uniqueTaskQueue('big-child');
    const startedAt = Date.now();
    const result = await withProjectWorker(taskQueue, async () =>
      (await api().startRun(input, { taskQueue })).result(),
    );
    const seconds = (Date.now() - startedAt) / 1000;
    process.stderr.write(`5 MB subagent answer: ${result.status} in ${seconds.toFixed(1)} s\n`);
    expect(result).toMatchObject({ status: 'completed', final_output: 'Combined.' });
    expect(result.ledger).toEqual([expect.objectContaining({ status: 'completed' })]);
    expect(result.ledger[0].result_brief?.length).toBeLessThanOrEqual(2000);
    expect(seconds).toBeLessThan(30);
  });

  it('a prompt of 5 MB through the client API', async () => {
    const { input } = setUp(answers('Read it all.'), big('prompt:'));
    const taskQueue = uniqueTaskQueue('big-prompt');
    const startedAt = Date.now();
    const result = await withProjectWorker(taskQueue, async () =>
      (await api().startRun(input, { taskQueue })).result(),
    );
    const seconds = (Date.now() - startedAt) / 1000;
    process.stderr.write(`5 MB prompt: ${result.status} in ${seconds.toFixed(1)} s\n`);
    expect(result).toMatchObject({ status: 'completed', final_output: 'Read it all.' });
    expect(seconds).toBeLessThan(30);
  });
});
