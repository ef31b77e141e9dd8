/**
 * An answer over the model's `max_answer_bytes` ends the subagent `failed` after one request: the stream is cut
 * at the cap, and the request is not sent again (a retry would be answered, and paid for, the same way).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { workflowResult } from '../../client/results';
import { subagentWorkflow } from '../../workflows/subagent';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { FakeOpenAI } from '../support/fake-openai';
import { subagentInput, tempDir } from '../support/subagent-input';

const testClient = useTestClient();

/** About `bytes` of text in 1,000-character words (the fake streams a word a chunk). */
const answerOf = (bytes: number) => `${'x'.repeat(999)} `.repeat(Math.ceil(bytes / 1000));

async function run(fake: FakeOpenAI, model: Record<string, unknown> = {}) {
  const workspace = join(tempDir('answer-cap'), 'workspace');
  mkdirSync(workspace);
  const input = subagentInput({
    workspace,
    config: {
      models: [{ name: 'fake', provider: 'openai', model: 'fake-model', base_url: fake.url, ...model }],
    },
  });
  const taskQueue = uniqueTaskQueue('answer-cap');
  return withProjectWorker(taskQueue, async () => {
    const handle = await testClient().workflow.start(subagentWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}/task/${input.task_id}`,
      args: [input],
    });
    const result = await workflowResult(handle);
    // Why a model call was attempted again, from its last attempt's start (none when it was not). The server
    // records the start of a retried activity's last attempt only: its number says how many came before, its
    // last failure why the one before it ended.
    const history = await handle.fetchHistory();
    const retried = (history.events ?? [])
      .map((event) => event.activityTaskStartedEventAttributes)
      .filter((started) => (started?.attempt ?? 1) > 1);
    const retriedAfter = retried.map((started) => started?.lastFailure?.message);
    const retries = retried.reduce((sum, started) => sum + (started?.attempt ?? 1) - 1, 0);
    return { ...result, retriedAfter, retries };
  });
}

it('fails a streamed 10 MB answer at the default 8 MiB cap, after one request', async () => {
  const fake = await FakeOpenAI.start({ respond: () => ({ content: answerOf(10_000_000) }) });
  try {
    const result = await run(fake);
    expect(result).toMatchObject({ status: 'failed', error_fallback: true, turns: 1 });
    expect(result.error).toMatch(
      /^model fake: the answer passed 8,38\d,\d{3} bytes, over the 8,388,608-byte cap \(models\[\]\.max_answer_bytes\)/,
    );
    expect(result.result).toBeUndefined();
    // Never sent again for the cap. A starved host may miss the 3 s heartbeat while it reads 10 MB (the attempt
    // is then retried as any lost one is, and meets the cap again): each request past the first is one of those.
    const lostBeats = result.retriedAfter.filter((reason) => reason === 'activity Heartbeat timeout');
    expect(lostBeats).toEqual(result.retriedAfter);
    expect(fake.chatRequests.length).toBeLessThanOrEqual(1 + result.retries);
  } finally {
    await fake.close();
  }
});

it('measures an answer that came whole (no stream) against the configured cap', async () => {
  const fake = await FakeOpenAI.start({ streaming: false, respond: () => ({ content: answerOf(100_000) }) });
  try {
    const result = await run(fake, { max_answer_bytes: 65_536 });
    expect(result).toMatchObject({ status: 'failed', error_fallback: true });
    expect(result.error).toContain('the answer passed 100,000 bytes, over the 65,536-byte cap');
    // The stream request answered without a stream, then the plain one: no retry after the cap.
    expect(fake.chatRequests.length).toBeLessThanOrEqual(2);
  } finally {
    await fake.close();
  }
});
