/**
 * A response the provider stopped for safety (DeerFlow's `safety_finish_reason`, its issue #3028) may still carry
 * tool calls, truncated or unreliable: they never run, and the subagent ends failed, its reason named. Through
 * the real providers against local fakes (OpenAI-compatible `content_filter`, Gemini's `SAFETY`, a custom
 * reason from the config's `detectors`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { workflowResult } from '../../client/results';
import { subagentWorkflow } from '../../workflows/subagent';
import { FakeOpenAI, type FakeReply } from '../support/fake-openai';
import { setFakeProviderEnv, startProviderFake } from '../support/fake-providers';
import { emptyWorkspace, subagentInput } from '../support/subagent-input';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();
let restoreEnv: () => void;
beforeAll(() => {
  restoreEnv = setFakeProviderEnv();
});
afterAll(() => restoreEnv());

/** A bash call that leaves a file behind if it runs. */
const WRITE_MARKER = { name: 'bash', args: { command: 'echo ran > ran.txt' } };

interface FakeServer {
  modelsConfig(): Record<string, unknown>;
  close(): Promise<void>;
  requests: unknown[];
}

async function runSubagent(fake: FakeServer, config: Record<string, unknown> = {}) {
  try {
    const { workspace } = emptyWorkspace('safety');
    const input = subagentInput({ workspace, config: { ...fake.modelsConfig(), ...config } });
    const taskQueue = uniqueTaskQueue('safety');
    const result = await withProjectWorker(taskQueue, async () =>
      workflowResult(
        await testClient().workflow.start(subagentWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}/task/${input.task_id}`,
          args: [input],
        }),
      ),
    );
    return { result, ran: existsSync(join(workspace, 'ran.txt')), calls: fake.requests.length };
  } finally {
    await fake.close();
  }
}

/** The stopped response, then (were its call run) an answer that would complete the subagent. */
const replies = (finishReason: string): FakeReply[] => [
  { content: 'Cleaning up first.', tool_calls: [WRITE_MARKER], finish_reason: finishReason },
  { content: 'Done.' },
];

it('an OpenAI-compatible content_filter with a bash call: the call never runs, the subagent fails naming why', async () => {
  const { result, ran, calls } = await runSubagent(
    await FakeOpenAI.start({ replies: replies('content_filter') }),
  );
  expect(ran).toBe(false);
  expect(calls).toBe(1);
  expect(result.status).toBe('failed');
  expect(result.error).toBe(
    'The model provider stopped the answer for safety (finish_reason: content_filter); its tool call (bash) did not run.',
  );
});

it("Gemini's SAFETY with a tool call: the call never runs", async () => {
  const gemini = await startProviderFake('google', { replies: replies('SAFETY') });
  const fake = {
    ...gemini.server,
    modelsConfig: () => ({ models: [gemini.model()] }),
    requests: gemini.server.requests,
    close: () => gemini.server.close(),
  };
  const { result, ran } = await runSubagent(fake);
  expect(ran).toBe(false);
  expect(result.status).toBe('failed');
  expect(result.error).toMatch(/stopped the answer for safety \(finish_reason: safety\)/i);
});

it("a reason from the config's detectors, as DeerFlow's users write them, stops the calls too", async () => {
  const config = {
    safety_finish_reason: {
      enabled: true,
      detectors: [
        {
          use: 'deerflow.agents.middlewares.safety_termination_detectors:OpenAICompatibleContentFilterDetector',
          config: { finish_reasons: ['content_filter', 'sensitive'] },
        },
      ],
    },
  };
  const { result, ran } = await runSubagent(
    await FakeOpenAI.start({ replies: replies('sensitive') }),
    config,
  );
  expect(ran).toBe(false);
  expect(result.error).toMatch(/finish_reason: sensitive/);
});

it('enabled: false runs the calls as before', async () => {
  const config = { safety_finish_reason: { enabled: false } };
  const { result, ran } = await runSubagent(
    await FakeOpenAI.start({ replies: replies('sensitive') }),
    config,
  );
  expect(ran).toBe(true);
  expect(result.status).toBe('completed');
});
