/**
 * DeerFlow's circuit breaker against the real server: a model endpoint returning HTTP 500s opens its breaker in
 * the worker after `failure_threshold` failures, so the activity's further attempts fail at once without a
 * request (fewer requests reach the provider than attempts were made); while it is open `subagents status` says
 * so once (the endpoint, since when, until when); once the provider answers again the next probe closes it and
 * the run completes. Each change is said once in the worker's log.
 */
import { leadRunWorkflow } from '../../workflows/lead-run';
import { ModelProviders } from '../../activities/model';
import type { OpenCircuitBreaker } from '../../contracts/circuit-breaker';
import { FakeOpenAI } from '../support/fake-openai';
import { emptyWorkspace, leadInput } from '../support/subagent-input';
import { suiteCli, uniqueTaskQueue, useTestClient, waitFor, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();
const KEY_ENV = 'FAKE_BREAKER_API_KEY';
const WINDOW_SECONDS = 10;

it('a provider returning 500s opens the breaker (said once in status); a later success closes it', async () => {
  process.env[KEY_ENV] = 'sk-test-key';
  const fake = await FakeOpenAI.start({ respond: () => ({ content: 'Recovered.' }) });
  const lines: string[] = [];
  const providers = new ModelProviders({
    circuitBreaker: { failure_threshold: 2, recovery_timeout_sec: WINDOW_SECONDS },
    say: (line) => lines.push(line),
  });
  try {
    const model = {
      name: 'fake',
      provider: 'openai',
      model: 'fake-model',
      base_url: fake.url,
      api_key: `$${KEY_ENV}`,
      retry: { initial_interval_seconds: 0.5, max_interval_seconds: 1 },
    };
    const input = leadInput({ workspace: emptyWorkspace('breaker').workspace, config: { models: [model] } });
    const taskQueue = uniqueTaskQueue('breaker');
    const endpoint = `openai ${fake.url}`;
    // Down until the test has read the status.
    fake.startOutage(3600);
    const { result, attempts, status, statusJson } = await withProjectWorker(
      taskQueue,
      async () => {
        const handle = await testClient().workflow.start(leadRunWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}-lead`,
          args: [input],
        });
        await waitFor(
          'a model call refused by the open breaker',
          async () => {
            const { raw } = await handle.describe();
            return (raw.pendingActivities ?? []).some((a) =>
              a.lastFailure?.message?.includes('circuit breaker open for'),
            );
          },
          120_000,
        );
        const shown = await suiteCli(['status', handle.workflowId]);
        const shownJson = await suiteCli(['status', handle.workflowId, '--json']);
        fake.startOutage(0);
        const done = await handle.result();
        const events = (await handle.fetchHistory()).events ?? [];
        const started = events.flatMap((e) => e.activityTaskStartedEventAttributes ?? []);
        return {
          result: done,
          attempts: Math.max(...started.map((s) => s.attempt ?? 1)),
          status: shown,
          statusJson: shownJson,
        };
      },
      { providers },
    );

    expect(result).toMatchObject({ status: 'completed', final_output: 'Recovered.' });
    // Refused attempts sent nothing: more attempts were made than requests reached the provider.
    expect(attempts).toBeGreaterThan(fake.chatRequests.length);

    expect(status.code).toBe(0);
    const said = status.stdout.split('\n').filter((line) => line.startsWith('circuit breaker'));
    expect(said).toHaveLength(1);
    const match = new RegExp(
      `^circuit breaker open for ${endpoint.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} since (\\S+) until (\\S+): ` +
        'model calls to it wait instead of being sent$',
    ).exec(said[0]);
    expect(match).not.toBeNull();
    const [, since, until] = match ?? [];
    expect(Date.parse(until) - Date.parse(since)).toBe(WINDOW_SECONDS * 1000);
    const breakers = (JSON.parse(statusJson.stdout) as { circuit_breakers?: OpenCircuitBreaker[] })
      .circuit_breakers;
    expect(breakers).toHaveLength(1);
    expect(breakers?.[0].endpoint).toBe(endpoint);

    expect(lines[0]).toBe(
      `circuit breaker open for ${endpoint}: 2 failures in a row: calls fail fast for ${WINDOW_SECONDS} s`,
    );
    expect(lines.at(-1)).toBe(
      `circuit breaker closed for ${endpoint}: a call succeeded: calls go through again`,
    );
  } finally {
    await fake.close();
  }
}, 240_000);
