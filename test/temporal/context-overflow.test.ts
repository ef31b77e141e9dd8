/**
 * A provider that refuses a request as longer than the model's context window (here an OpenAI-compatible
 * endpoint's `maximum context length` 400), against the real server: with summarization on, the older turns
 * are summarized and the turn tried again, once; with it off, or still too long after a summary, the run ends
 * `failed` saying so, never retried as is.
 */
import { workflowResult } from '../../client/results';
import { DEFAULT_SUMMARY_PROMPT } from '../../contracts/summarization';
import { subagentWorkflow } from '../../workflows/subagent';
import { FakeOpenAI, type FakeReply } from '../support/fake-openai';
import { emptyWorkspace, subagentInput } from '../support/subagent-input';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();

const OVERFLOW: FakeReply = {
  status: 400,
  error_message:
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9120 tokens.",
  error_type: 'invalid_request_error',
};
const LS = (id: string): FakeReply => ({ tool_calls: [{ name: 'ls', args: { path: '.' }, id }] });

async function run(replies: FakeReply[], summarization: boolean) {
  const fake = await FakeOpenAI.start({ replies });
  try {
    const input = subagentInput({
      workspace: emptyWorkspace('overflow').workspace,
      config: {
        ...fake.modelsConfig(),
        // Never triggered by size here: only the provider's refusal compacts.
        ...(summarization && {
          summarization: { enabled: true, keep_messages: 2, trigger_tokens: 1_000_000 },
        }),
      },
    });
    const taskQueue = uniqueTaskQueue('overflow');
    const result = await withProjectWorker(taskQueue, async () =>
      workflowResult(
        await testClient().workflow.start(subagentWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}/task/${input.task_id}`,
          args: [input],
        }),
      ),
    );
    return { result, requests: fake.chatRequests };
  } finally {
    await fake.close();
  }
}

it('with summarization on, summarizes the older turns and tries the refused turn again', async () => {
  const { result, requests } = await run(
    [
      LS('call_1'),
      LS('call_2'),
      OVERFLOW,
      { content: 'Listed twice, found nothing.' },
      { content: 'Done after the summary.' },
    ],
    true,
  );
  expect(result).toMatchObject({ status: 'completed', result: 'Done after the summary.' });
  expect(requests).toHaveLength(5);
  // The fourth request is the summarizer's; the fifth, the turn again, with the summary in its system message.
  expect(requests[3].messages[0]).toEqual({ role: 'system', content: DEFAULT_SUMMARY_PROMPT });
  expect(String(requests[4].messages[0].content)).toContain('Listed twice, found nothing.');
  expect(requests[4].messages.length).toBeLessThan(requests[2].messages.length);
});

it('with summarization off, fails at once saying the transcript passed the context window', async () => {
  const { result, requests } = await run([LS('call_1'), OVERFLOW], false);
  expect(result).toMatchObject({ status: 'failed', error_fallback: true });
  expect(result.error).toContain("This model's maximum context length is 8192 tokens.");
  expect(result.error).toContain("longer than the model's context window; turn summarization on");
  expect(requests).toHaveLength(2);
});

it('still too long right after a summary: fails, without summarizing again', async () => {
  const { result, requests } = await run(
    [LS('call_1'), LS('call_2'), OVERFLOW, { content: 'Listed twice.' }, OVERFLOW],
    true,
  );
  expect(result).toMatchObject({ status: 'failed', error_fallback: true });
  expect(result.error).toContain('even after summarizing it');
  expect(requests).toHaveLength(5);
});
