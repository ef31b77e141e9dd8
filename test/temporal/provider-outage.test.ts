/**
 * A model endpoint that fails for a while (the fake Chat Completions server's outage mode), against the real
 * server: retries outlast the old 8-attempt policy, `max_retry_seconds` ends the run with the provider's own
 * message, the agent's wall clock bounds the default (no attempt cap), and a 429's `Retry-After` sets the wait.
 * Intervals are configured short so that what takes minutes in production takes seconds here.
 */
import { workflowResult } from '../../client/results';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import type { SubagentResult } from '../../contracts/subagent';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { subagentWorkflow } from '../../workflows/subagent';
import { connectClient, uniqueTaskQueue, withProjectWorker, type TestClient } from '../harness/temporal';
import { FakeOpenAI, OUTAGE_MESSAGE } from '../support/fake-openai';
import { leadInput, subagentInput, tempDir } from '../support/subagent-input';

const KEY_ENV = 'FAKE_PROVIDER_API_KEY';
/** What the retry policy this project shipped with allowed: 8 attempts (backoff 1 s ×2 to 1 min). */
const OLD_MAX_ATTEMPTS = 8;

let testClient: TestClient;
const fakes: FakeOpenAI[] = [];
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-test-key';
  testClient = await connectClient();
});
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});
afterAll(() => testClient.close());

async function startFake(): Promise<FakeOpenAI> {
  const fake = await FakeOpenAI.start({ respond: () => ({ content: 'Recovered: the answer.' }) });
  fakes.push(fake);
  return fake;
}

function modelConfig(fake: FakeOpenAI, retry?: Record<string, number>): Record<string, unknown> {
  return {
    name: 'fake',
    provider: 'openai',
    model: 'fake-model',
    base_url: fake.url,
    api_key: `$${KEY_ENV}`,
    ...(retry && { retry }),
  };
}

function workspace(label: string): string {
  const dir = join(tempDir(label), 'workspace');
  mkdirSync(dir);
  return dir;
}

async function runSubagent(config: Record<string, unknown>): Promise<SubagentResult> {
  const input = subagentInput({ workspace: workspace('outage'), config });
  const taskQueue = uniqueTaskQueue('outage');
  return withProjectWorker(taskQueue, async () =>
    workflowResult(
      await testClient.client.workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/${input.task_id}`,
        args: [input],
      }),
    ),
  );
}

function gaps(times: number[]): number[] {
  return times.slice(1).map((at, i) => at - times[i]);
}

it('rides out a 40 s outage of HTTP 500s, past the old policy’s 8 attempts, and completes', async () => {
  const fake = await startFake();
  // Long enough for 9 attempts 2 s apart on a loaded machine, where the worker's own start takes part of it
  // (a 20 s outage saw only 8 in one CI run beside other suites).
  fake.startOutage(40);
  const outageEnds = Date.now() + 40_000;
  const result = await runSubagent({
    models: [modelConfig(fake, { initial_interval_seconds: 1, max_interval_seconds: 2 })],
  });

  expect(result).toMatchObject({ status: 'completed', result: 'Recovered: the answer.', turns: 1 });
  const times = fake.chatRequestTimes;
  const failed = times.filter((at) => at < outageEnds);
  expect(failed.length).toBeGreaterThan(OLD_MAX_ATTEMPTS);
  expect(times[times.length - 1]).toBeGreaterThanOrEqual(outageEnds);
  // The backoff stops growing at max_interval_seconds (2 s), plus the server's timer slack and what a loaded
  // machine adds; uncapped it would have doubled to 8 s and 16 s within the outage.
  expect(Math.max(...gaps(times))).toBeLessThan(7000);
}, 150_000);

it('with max_retry_seconds, ends failed with the provider’s message, not a bare activity timeout', async () => {
  const fake = await startFake();
  fake.startOutage(120);
  const begun = Date.now();
  const result = await runSubagent({
    models: [
      modelConfig(fake, { initial_interval_seconds: 0.5, max_interval_seconds: 1, max_retry_seconds: 4 }),
    ],
  });

  expect(result).toMatchObject({ status: 'failed', error_fallback: true });
  expect(result.error).toContain(`model fake (HTTP 500): ${OUTAGE_MESSAGE}`);
  expect(result.error).toContain('max_retry_seconds: 4 s');
  expect(result.error).not.toMatch(/ScheduleToClose|activity .*timeout/i);
  expect(result.result).toBeUndefined();
  expect(fake.chatRequests.length).toBeGreaterThanOrEqual(3);
  expect(Date.now() - begun).toBeLessThan(15_000);
});

it('with max_retry_seconds, names the last failure even when the deadline passes during a hanging attempt', async () => {
  const fake = await startFake();
  fake.enqueue(
    { status: 502, error_message: 'Bad gateway: upstream reset.' },
    { content: 'Too late.', delay_ms: 20_000 },
  );
  const result = await runSubagent({
    models: [
      modelConfig(fake, { initial_interval_seconds: 0.5, max_interval_seconds: 1, max_retry_seconds: 3 }),
    ],
  });

  expect(result).toMatchObject({ status: 'failed', error_fallback: true });
  expect(result.error).toBe(
    'model fake (HTTP 502): Bad gateway: upstream reset. (gave up retrying, max_retry_seconds: 3 s)',
  );
  expect(fake.chatRequests).toHaveLength(2);
});

it('with max_retry_seconds, the lead run ends failed with the provider’s message too', async () => {
  const fake = await startFake();
  fake.startOutage(120);
  const input = leadInput({
    workspace: workspace('outage-lead'),
    config: {
      models: [
        modelConfig(fake, { initial_interval_seconds: 0.5, max_interval_seconds: 1, max_retry_seconds: 3 }),
      ],
    },
  });
  const taskQueue = uniqueTaskQueue('outage-lead');
  const result: LeadRunResult = await withProjectWorker(taskQueue, async () =>
    workflowResult(
      await testClient.client.workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      }),
    ),
  );

  expect(result.status).toBe('failed');
  expect(result.error).toContain(`model fake (HTTP 500): ${OUTAGE_MESSAGE}`);
  expect(result.error).toContain('max_retry_seconds: 3 s');
});

it('by default keeps retrying (no attempt cap) until the agent’s own wall-clock budget ends the run', async () => {
  const fake = await startFake();
  fake.startOutage(120);
  const result = await runSubagent({
    models: [modelConfig(fake)],
    subagents: { agents: { 'general-purpose': { timeout_seconds: 4 } } },
  });

  expect(result).toMatchObject({ status: 'timed_out', error: 'Execution timed out after 4 seconds' });
  // Default backoff 1 s, 2 s, …: attempts at about 0, 1 and 3 s before the clock ran out.
  expect(fake.chatRequests.length).toBeGreaterThanOrEqual(3);
});

it('still fails at once, with no retry, on an error retrying cannot fix (HTTP 400)', async () => {
  const fake = await startFake();
  fake.failNext(1, 400, "Invalid 'messages': bad request.");
  const result = await runSubagent({ models: [modelConfig(fake)] });

  expect(result).toMatchObject({ status: 'failed', error_fallback: true, turns: 1 });
  expect(result.error).toContain("Invalid 'messages': bad request.");
  expect(fake.chatRequests).toHaveLength(1);
});

it('waits what a 429’s Retry-After asks (2 s) before the next attempt, not the 0.2 s backoff', async () => {
  const fake = await startFake();
  // Two refusals by count, not by time: on a loaded machine the first attempt may start late.
  const limited = { status: 429, error_message: 'Rate limit reached for fake-model.', retry_after: 2 };
  fake.enqueue(limited, limited);
  const result = await runSubagent({
    models: [modelConfig(fake, { initial_interval_seconds: 0.2, max_interval_seconds: 10 })],
  });

  expect(result).toMatchObject({ status: 'completed', result: 'Recovered: the answer.' });
  const waits = gaps(fake.chatRequestTimes);
  expect(waits.length).toBeGreaterThanOrEqual(2);
  for (const wait of waits) {
    expect(wait).toBeGreaterThanOrEqual(1900);
    // Not the 10 s the backoff allows at most, either (a loaded machine adds its own delay to the 2 s).
    expect(wait).toBeLessThan(8000);
  }
});
