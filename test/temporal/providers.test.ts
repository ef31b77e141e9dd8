/**
 * The same scenarios through every network model provider, against its fake server over real HTTP and the
 * real Temporal server: a lead that fans out to two subagents and combines their answers (usage summed, the
 * prompt cache's counts where the provider reports them); a 401 that fails a subagent at once with the
 * provider's message; a rate limit (Anthropic: an overload) retried after the wait the provider asked for; an
 * answer over `max_answer_bytes` cut; a cancel that closes the request while it waits; an answer cut off at
 * the output limit ending the subagent `failed`.
 */
import { subagentResult } from '../../client/api';
import { workflowResult } from '../../client/results';
import type { LeadRunResult } from '../../contracts/lead';
import type { NetworkModelProvider } from '../../contracts/model';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { subagentWorkflow } from '../../workflows/subagent';
import type { AnthropicRequest } from '../support/fake-anthropic';
import type { FakeReply, FakeRequestView } from '../support/fake-model-server';
import {
  CACHE_COUNTS_REPORTED,
  NETWORK_PROVIDERS,
  setFakeProviderEnv,
  startProviderFake,
  type ProviderFake,
} from '../support/fake-providers';
import { emptyWorkspace, leadInput, subagentInput } from '../support/subagent-input';
import { uniqueTaskQueue, useTestClient, waitFor, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();
let restoreEnv: () => void;
beforeAll(() => {
  restoreEnv = setFakeProviderEnv();
});
afterAll(() => restoreEnv());

const fakes: ProviderFake[] = [];
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.server.close()));
});

/** Short waits, so that a retry test takes seconds; a provider's Retry-After is still honoured up to 5 s. */
const RETRY = { initial_interval_seconds: 0.2, max_interval_seconds: 5 };

async function start(
  provider: NetworkModelProvider,
  options: { replies?: FakeReply[]; respond?: (view: FakeRequestView) => FakeReply } = {},
): Promise<ProviderFake> {
  const respond = options.respond;
  const fake = await startProviderFake(provider, {
    replies: options.replies ?? [],
    ...(respond && { respond: (_body: never, _index: number, view: FakeRequestView) => respond(view) }),
  });
  fakes.push(fake);
  return fake;
}

function config(fake: ProviderFake) {
  return { models: [{ ...fake.model(), retry: RETRY }] };
}

async function runSubagent(fake: ProviderFake) {
  const input = subagentInput({ workspace: emptyWorkspace('providers').workspace, config: config(fake) });
  const taskQueue = uniqueTaskQueue(`providers-${fake.provider}`);
  return withProjectWorker(taskQueue, async () =>
    workflowResult(
      await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/${input.task_id}`,
        args: [input],
      }),
    ),
  );
}

const TASK = (part: string) => ({
  name: 'task',
  args: {
    description: `Survey part ${part}`,
    prompt: `Survey part ${part}.`,
    subagent_type: 'general-purpose',
  },
});

describe.each(NETWORK_PROVIDERS)('through the %s provider', (provider) => {
  it('a lead fans out to two subagents and combines their answers; usage summed, cache counts kept', async () => {
    const cached = CACHE_COUNTS_REPORTED[provider];
    const fake = await start(provider, {
      respond: (view) => {
        if (!view.tools.includes('task')) {
          return { content: `Done: ${view.last_user_text}`, usage: { input_tokens: 200, output_tokens: 20 } };
        }
        if (view.tool_results.length === 0) {
          return {
            content: 'Delegating both parts.',
            tool_calls: [TASK('A'), TASK('B')],
            usage: { input_tokens: 1000, output_tokens: 50, cache_read_tokens: 600, cache_write_tokens: 300 },
          };
        }
        return {
          content: `Combined ${view.tool_results.length} results.`,
          usage: { input_tokens: 1300, output_tokens: 30, cache_read_tokens: 900, cache_write_tokens: 0 },
        };
      },
    });
    const input = leadInput({ workspace: emptyWorkspace('providers-lead').workspace, config: config(fake) });
    const taskQueue = uniqueTaskQueue(`providers-lead-${provider}`);
    const result: LeadRunResult = await withProjectWorker(taskQueue, async () =>
      workflowResult(
        await testClient().workflow.start(leadRunWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}-lead`,
          args: [input],
        }),
      ),
    );

    expect(result).toMatchObject({ status: 'completed', final_output: 'Combined 2 results.', turns: 2 });
    expect(result.ledger.map((entry) => entry.status)).toEqual(['completed', 'completed']);
    expect(result.ledger.map((entry) => entry.result_brief)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Survey part A.'),
        expect.stringContaining('Survey part B.'),
      ]),
    );
    // Anthropic's cache writes of the second turn are 0, which it reports; the others report no writes at all.
    expect(result.token_usage).toEqual({
      lead: {
        input_tokens: 2300,
        output_tokens: 80,
        total_tokens: 2380,
        ...(cached.read && { cache_read_tokens: 1500 }),
        ...(cached.write && { cache_write_tokens: 300 }),
      },
      subagents: { input_tokens: 400, output_tokens: 40, total_tokens: 440 },
      total: {
        input_tokens: 2700,
        output_tokens: 120,
        total_tokens: 2820,
        ...(cached.read && { cache_read_tokens: 1500 }),
        ...(cached.write && { cache_write_tokens: 300 }),
      },
    });
    expect(fake.server.chatRecords).toHaveLength(4);
  });

  it('a 401 fails the subagent at once, with the provider’s message (no retry, no success)', async () => {
    const fake = await start(provider, {
      replies: [{ status: 401, error_message: 'Invalid API key for this account.' }],
    });
    const result = await runSubagent(fake);
    expect(result).toMatchObject({ status: 'failed', error_fallback: true, turns: 1 });
    expect(result.error).toContain('Invalid API key for this account.');
    expect(result.result).toBeUndefined();
    expect(fake.server.chatRecords).toHaveLength(1);
  });

  it('a rate limit or overload is retried after the wait the provider asked for, then the subagent completes', async () => {
    const status = provider === 'anthropic' ? 529 : 429;
    const fake = await start(provider, {
      replies: [
        { status, error_message: 'Slow down, please.', retry_after: 2 },
        { content: 'Recovered.', usage: { input_tokens: 50, output_tokens: 5 } },
      ],
    });
    const result = await runSubagent(fake);
    expect(result).toMatchObject({
      status: 'completed',
      result: 'Recovered.',
      token_usage: { input_tokens: 50, output_tokens: 5, total_tokens: 55 },
    });
    const [failed, succeeded] = fake.server.chatRequestTimes;
    expect(fake.server.chatRecords).toHaveLength(2);
    // Ollama sends no wait: the model's own backoff (0.2 s) applies.
    if (provider !== 'ollama') expect(succeeded - failed).toBeGreaterThanOrEqual(1900);
  });

  it('an answer over max_answer_bytes ends the subagent failed, read no further, not retried', async () => {
    const fake = await start(provider, { replies: [{ content: 'word '.repeat(600) }] });
    const input = subagentInput({
      workspace: emptyWorkspace('providers-cap').workspace,
      config: { models: [{ ...fake.model(), max_answer_bytes: 1000, retry: RETRY }] },
    });
    const taskQueue = uniqueTaskQueue(`providers-cap-${provider}`);
    const result = await withProjectWorker(taskQueue, async () =>
      workflowResult(
        await testClient().workflow.start(subagentWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}/task/${input.task_id}`,
          args: [input],
        }),
      ),
    );
    expect(result).toMatchObject({ status: 'failed', error_fallback: true });
    expect(result.error).toMatch(/the answer passed [\d,]+ bytes, over the 1,000-byte cap/);
    expect(fake.server.chatRecords).toHaveLength(1);
  });

  it('a cancel reaches the request while the model is still thinking: cancelled, the connection closed', async () => {
    const fake = await start(provider, { replies: [{ content: 'Too late.', delay_ms: 60_000 }] });
    const input = subagentInput({
      workspace: emptyWorkspace('providers-cancel').workspace,
      config: config(fake),
    });
    const taskQueue = uniqueTaskQueue(`providers-cancel-${provider}`);
    const result = await withProjectWorker(taskQueue, async () => {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/${input.task_id}`,
        args: [input],
      });
      await waitFor('the model request', () => fake.server.chatRecords.length > 0);
      await handle.cancel();
      const cancelled = await subagentResult(handle);
      // The activity hears of the cancel at its next heartbeat (within a second) and aborts its request.
      await waitFor('the request aborted', () => fake.server.chatRecords[0].aborted === true, 15_000);
      return cancelled;
    });
    expect(result).toMatchObject({ status: 'cancelled' });
    expect(fake.server.chatRecords).toHaveLength(1);
  });

  it('an answer cut off at the output limit ends the subagent failed, its text kept as partial', async () => {
    const cutOff =
      { google: 'MAX_TOKENS', anthropic: 'max_tokens', bedrock: 'max_tokens' }[provider as string] ??
      'length';
    const fake = await start(provider, {
      replies: [{ content: 'The three causes are: first, the', finish_reason: cutOff }],
    });
    const result = await runSubagent(fake);
    expect(result).toMatchObject({ status: 'failed', result: 'The three causes are: first, the' });
    expect(result.error).toMatch(/cut off at its output limit \(finish_reason: (length|max_tokens)\)/);
  });
});

it('an Anthropic model with thinking on: each turn’s thinking goes back with it through the workflow', async () => {
  const fake = await start('anthropic', {
    replies: [
      {
        thinking: 'List the workspace first.',
        content: 'Listing.',
        tool_calls: [{ name: 'ls', args: { path: '.' }, id: 'toolu_ls' }],
      },
      { thinking: 'Nothing there.', content: 'The workspace is empty.' },
    ],
  });
  const model = { ...fake.model(), max_tokens: 8000, thinking: { type: 'enabled', budget_tokens: 2048 } };
  const input = subagentInput({
    workspace: emptyWorkspace('providers-thinking').workspace,
    config: { models: [{ ...model, retry: RETRY }] },
  });
  const taskQueue = uniqueTaskQueue('providers-thinking');
  const result = await withProjectWorker(taskQueue, async () =>
    workflowResult(
      await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/${input.task_id}`,
        args: [input],
      }),
    ),
  );
  // The fake refuses a tool-using turn sent back without its thinking block: the run completing says it went.
  expect(result).toMatchObject({ status: 'completed', result: 'The workspace is empty.', turns: 2 });
  const second = fake.server.chatRequests[1] as AnthropicRequest;
  const assistant = second.messages.find((m) => m.role === 'assistant');
  expect(assistant?.content).toEqual(
    expect.arrayContaining([
      { type: 'thinking', thinking: 'List the workspace first.', signature: 'sig-fake-0' },
    ]),
  );
});
