/**
 * Honest endings (issue 25): an answer the provider cut off at its output limit (`finish_reason: length`) or
 * refused (`content_filter`) is not a success. Through the OpenAI-compatible provider, against a local fake
 * Chat Completions server: the subagent ends `failed` with an error naming the cause and its text kept as
 * partial, the lead reads `Task failed …`, and the lead's own cut-off answer fails its run the same way.
 */
import { workflowResult } from '../../client/results';
import type { LeadRunResult } from '../../contracts/lead';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { subagentWorkflow } from '../../workflows/subagent';
import { FakeOpenAI, type FakeChatRequest, type FakeReply } from '../support/fake-openai';
import { emptyWorkspace, leadInput, subagentInput } from '../support/subagent-input';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();

async function runSubagent(reply: FakeReply) {
  const fake = await FakeOpenAI.start({ replies: [reply] });
  try {
    const input = subagentInput({
      workspace: emptyWorkspace('unfinished').workspace,
      config: fake.modelsConfig(),
    });
    const taskQueue = uniqueTaskQueue('unfinished');
    return await withProjectWorker(taskQueue, async () =>
      workflowResult(
        await testClient().workflow.start(subagentWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}/task/${input.task_id}`,
          args: [input],
        }),
      ),
    );
  } finally {
    await fake.close();
  }
}

it('a subagent whose answer was cut off at the output limit fails, its text kept as partial', async () => {
  const result = await runSubagent({ content: 'The three causes are: first, the', finish_reason: 'length' });
  expect(result).toMatchObject({ status: 'failed', result: 'The three causes are: first, the' });
  expect(result.error).toMatch(/cut off at its output limit \(finish_reason: length\)/);
  expect(result.error_fallback).toBeUndefined();
});

it('a subagent whose answer the provider filtered fails with the cause named', async () => {
  const result = await runSubagent({ content: '', finish_reason: 'content_filter' });
  expect(result.status).toBe('failed');
  expect(result.error).toMatch(/refused or filtered the answer \(finish_reason: content_filter\)/);
});

it('the lead reads "Task failed" for a cut-off subagent, and its own cut-off answer fails the run', async () => {
  const isLead = (request: FakeChatRequest) =>
    request.tools?.some((t) => t.function.name === 'task') ?? false;
  const fake = await FakeOpenAI.start({
    respond: (request) => {
      if (!isLead(request)) return { content: 'Half of the survey', finish_reason: 'length' };
      if (!request.messages.some((m) => m.role === 'tool')) {
        return {
          tool_calls: [
            {
              name: 'task',
              id: 'call_survey',
              args: {
                description: 'Survey the repo',
                prompt: 'Survey the repository.',
                subagent_type: 'general-purpose',
              },
            },
          ],
        };
      }
      return { content: 'Summary so far: the survey', finish_reason: 'length' };
    },
  });
  try {
    const input = leadInput({
      workspace: emptyWorkspace('unfinished-lead').workspace,
      config: fake.modelsConfig(),
    });
    const taskQueue = uniqueTaskQueue('unfinished-lead');
    const result: LeadRunResult = await withProjectWorker(taskQueue, async () =>
      workflowResult(
        await testClient().workflow.start(leadRunWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}-lead`,
          args: [input],
        }),
      ),
    );
    expect(result.ledger.map((e) => [e.id, e.status])).toEqual([['call_survey', 'failed']]);
    const toolMessage = fake.chatRequests
      .filter(isLead)
      .flatMap((r) => r.messages)
      .find((m) => m.role === 'tool' && m.tool_call_id === 'call_survey');
    expect(String(toolMessage?.content)).toMatch(/^Task failed\. Error: The model's answer was cut off/);
    expect(String(toolMessage?.content)).toContain('Partial result');
    expect(String(toolMessage?.content)).toContain('Half of the survey');
    expect(result).toMatchObject({
      status: 'failed',
      stop_reason: 'model_length_capped',
      final_output: 'Summary so far: the survey',
    });
    expect(result.error).toMatch(/cut off at its output limit/);
  } finally {
    await fake.close();
  }
});
