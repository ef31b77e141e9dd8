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
import type { FakeResponder } from '../support/fake-model-server';
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

async function run(replies: FakeReply[] | FakeResponder, summarization: boolean) {
  const fake = await FakeOpenAI.start(typeof replies === 'function' ? { respond: replies } : { replies });
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
  // Answered by what each request holds, not by its place: a model call retried on a loaded machine is asked
  // again and gets the same answer.
  const summary = 'Listed twice, found nothing.';
  const { result, requests } = await run((_body, _index, view) => {
    if (view.system === DEFAULT_SUMMARY_PROMPT) return { content: summary };
    if (view.system.includes(summary)) return { content: 'Done after the summary.' };
    return [LS('call_1'), LS('call_2')][view.tool_results.length] ?? OVERFLOW;
  }, true);
  expect(result).toMatchObject({ status: 'completed', result: 'Done after the summary.' });
  const isSummarizer = (request: (typeof requests)[number]) =>
    JSON.stringify(request.messages[0]) ===
    JSON.stringify({ role: 'system', content: DEFAULT_SUMMARY_PROMPT });
  // Summarized once (a retried call sends the same request again), then the turn again, with the summary in its
  // system message and fewer messages than the refused one.
  expect(new Set(requests.filter(isSummarizer).map((request) => JSON.stringify(request))).size).toBe(1);
  const before = requests.filter(
    (request) => !isSummarizer(request) && !String(request.messages[0].content).includes(summary),
  );
  const again = requests.at(-1)!;
  expect(String(again.messages[0].content)).toContain(summary);
  expect(again.messages.length).toBeLessThan(Math.max(...before.map((request) => request.messages.length)));
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
