/**
 * `subagentWorkflow` on the `openai` provider, against a local fake Chat Completions server over real HTTP:
 * streamed tool calls and usage parsed into a finished run, and a 401 ending the run `failed` with the
 * provider's own message.
 */
import { workflowResult } from '../../client/results';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { subagentWorkflow } from '../../workflows/subagent';
import { connectClient, uniqueTaskQueue, withProjectWorker, type TestClient } from '../harness/temporal';
import { FakeOpenAI } from '../support/fake-openai';
import { subagentInput, tempDir } from '../support/subagent-input';

const KEY_ENV = 'FAKE_PROVIDER_API_KEY';
let testClient: TestClient;
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-test-key';
  testClient = await connectClient();
});
afterAll(() => testClient.close());

function inputFor(fake: FakeOpenAI) {
  const workspace = join(tempDir('subagent-openai'), 'workspace');
  mkdirSync(workspace);
  const input = subagentInput({
    workspace,
    config: {
      models: [
        { name: 'fake', provider: 'openai', model: 'fake-model', base_url: fake.url, api_key: `$${KEY_ENV}` },
      ],
    },
  });
  return { input, workspace };
}

async function run(fake: FakeOpenAI) {
  const { input, workspace } = inputFor(fake);
  const taskQueue = uniqueTaskQueue('openai');
  const result = await withProjectWorker(taskQueue, async () =>
    workflowResult(
      await testClient.client.workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/${input.task_id}`,
        args: [input],
      }),
    ),
  );
  return { result, workspace, input };
}

it('runs a subagent on an OpenAI-compatible endpoint: streamed tool calls, tool results sent back, usage summed', async () => {
  const fake = await FakeOpenAI.start({
    replies: [
      {
        content: 'Saving the summary.',
        tool_calls: [
          { name: 'write_file', args: { path: 'summary.txt', content: 'three items' }, id: 'call_w1' },
        ],
        usage: { input_tokens: 300, output_tokens: 20 },
      },
      { content: 'Wrote summary.txt: three items.', usage: { input_tokens: 360, output_tokens: 12 } },
    ],
    api_key: 'sk-test-key',
  });
  try {
    const { result, workspace, input } = await run(fake);
    expect(result).toMatchObject({
      status: 'completed',
      result: 'Wrote summary.txt: three items.',
      model_name: 'fake-model',
      turns: 2,
      token_usage: { input_tokens: 660, output_tokens: 32, total_tokens: 692 },
    });
    expect(readFileSync(join(workspace, 'summary.txt'), 'utf8')).toBe('three items');

    const [first, second] = fake.chatRequests;
    expect(first.stream).toBe(true);
    expect(first.stream_options).toEqual({ include_usage: true });
    expect(first.tools?.map((t) => t.function.name)).toEqual(input.agent.tools);
    const toolReply = second.messages.find((m) => m.role === 'tool');
    expect(toolReply).toMatchObject({ tool_call_id: 'call_w1' });
    expect(String(toolReply?.content)).toMatch(/summary\.txt/);
  } finally {
    await fake.close();
  }
});

it('ends the subagent failed, with the provider message, on a 401 (no retry, no success)', async () => {
  const fake = await FakeOpenAI.start({
    replies: [
      {
        status: 401,
        error_message: 'Incorrect API key provided: sk-test-***. You can find your key in your account.',
      },
    ],
  });
  try {
    const { result } = await run(fake);
    expect(result).toMatchObject({ status: 'failed', error_fallback: true, turns: 1 });
    expect(result.error).toContain('Incorrect API key provided');
    expect(result.result).toBeUndefined();
    expect(fake.chatRequests).toHaveLength(1);
  } finally {
    await fake.close();
  }
});
