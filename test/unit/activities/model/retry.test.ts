/**
 * The model's retry policy: `models[].retry` in config, the policy the workflow proxies the activity with,
 * `Retry-After` turned into the next retry's delay, and a run that ran out of retry time failing with the
 * provider's message.
 */
import { ActivityFailure, ApplicationFailure, RetryState, TimeoutFailure } from '@temporalio/common';
import { ProviderError, retryAfterMs, retryableModelFailure } from '../../../../activities/model/errors';
import { classifyProviderError } from '../../../../activities/model/provider-errors';
import { testActivities } from '../../../support/activities';
import { ConfigError, parseConfig } from '../../../../contracts/config';
import { DEFAULT_MODEL_RETRY, type ModelRetrySettings } from '../../../../contracts/model';
import { modelRetryPolicy, withProviderCause } from '../../../../workflows/model-activity';
import { FakeOpenAI } from '../../../support/fake-openai';
import { modelInput, retryableFailureOf } from './fixtures';

const { callModel } = testActivities();

const NOW = Date.parse('2025-01-01T00:00:00Z');

describe('Retry-After', () => {
  it.each([
    ['2', 2000],
    ['0.5', 500],
    [' 30 ', 30_000],
    ['Wed, 01 Jan 2025 00:00:07 GMT', 7000],
    ['Tue, 31 Dec 2024 23:59:00 GMT', 0],
  ])('reads %j on a 429 as %i ms', (value, expected) => {
    expect(retryAfterMs(429, new Headers({ 'retry-after': value }), NOW)).toBe(expected);
  });

  it('honours it on 503 too, and prefers OpenAI’s retry-after-ms', () => {
    expect(retryAfterMs(503, { 'Retry-After': '3' }, NOW)).toBe(3000);
    expect(retryAfterMs(429, new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }), NOW)).toBe(1500);
  });

  it.each([
    [500, { 'retry-after': '2' }],
    [400, { 'retry-after': '2' }],
    [429, {}],
    [429, { 'retry-after': 'soon' }],
    [429, { 'retry-after': '-1' }],
  ])('ignores it for HTTP %i %j', (status, headers) => {
    expect(retryAfterMs(status, headers, NOW)).toBeUndefined();
  });

  it('is read from the headers of the error the OpenAI client throws', () => {
    const apiError = Object.assign(new Error('429 Rate limit reached'), {
      status: 429,
      headers: new Headers({ 'retry-after': '4' }),
      error: { message: 'Rate limit reached for gpt-test.' },
    });
    const classified = classifyProviderError(apiError, 'http://x/v1');
    expect(classified).toBeInstanceOf(ProviderError);
    expect(classified).toMatchObject({ status: 429, retryable: true, retryAfterMs: 4000 });
  });

  it('becomes the next retry’s delay, capped at the max interval', () => {
    const error = ProviderError.fromStatus(429, 'slow down', 120_000);
    expect(retryableModelFailure('m', error, 30_000).nextRetryDelay).toBe(30_000);
    expect(retryableModelFailure('m', error).nextRetryDelay).toBe(120_000);
    expect(retryableModelFailure('m', ProviderError.fromStatus(500, 'boom')).nextRetryDelay).toBeUndefined();
  });
});

describe('Retry-After through the model activity', () => {
  let fake: FakeOpenAI;
  beforeEach(async () => {
    fake = await FakeOpenAI.start();
  });
  afterEach(() => fake.close());

  const openai = (retry?: ModelRetrySettings) => ({
    provider: 'openai' as const,
    name: 'fast',
    model: 'gpt-test',
    base_url: fake.url,
    ...(retry && { retry }),
  });
  const ask = [{ role: 'user' as const, content: 'go' }];

  it('throws a 429 with Retry-After: 2 as a retryable failure whose next retry comes in 2 s', async () => {
    fake.enqueue({ status: 429, error_message: 'Rate limit reached.', retry_after: 2 });
    const failure = await retryableFailureOf(callModel(modelInput(openai(), ask)));
    expect(failure.message).toBe('model fast (HTTP 429): Rate limit reached.');
    expect(failure.nextRetryDelay).toBe(2000);
  });

  it('caps a long Retry-After at the model’s max_interval_seconds', async () => {
    fake.enqueue({ status: 503, error_message: 'Overloaded.', retry_after: 3600 });
    const retry = { ...DEFAULT_MODEL_RETRY, max_interval_seconds: 5 };
    const failure = await retryableFailureOf(callModel(modelInput(openai(retry), ask)));
    expect(failure.nextRetryDelay).toBe(5000);
  });

  it('caps it at the default max interval when the model sets no retry', async () => {
    fake.enqueue({ status: 429, error_message: 'Rate limit reached.', retry_after: 3600 });
    const failure = await retryableFailureOf(callModel(modelInput(openai(), ask)));
    expect(failure.nextRetryDelay).toBe(DEFAULT_MODEL_RETRY.max_interval_seconds * 1000);
  });

  it('leaves the delay to the backoff when a 500 sends no Retry-After', async () => {
    fake.startOutage(60);
    const failure = await retryableFailureOf(callModel(modelInput(openai(), ask)));
    expect(failure.message).toContain('model fast (HTTP 500)');
    expect(failure.nextRetryDelay).toBeUndefined();
  });
});

describe('models[].retry in config', () => {
  const parseRetry = (retry: unknown) =>
    parseConfig({ models: [{ name: 'm', provider: 'scripted', retry }] }).config.models[0].retry;

  const problemsOf = (retry: unknown): string[] => {
    try {
      parseRetry(retry);
    } catch (err) {
      if (err instanceof ConfigError) return err.problems;
      throw err;
    }
    throw new Error('expected a ConfigError');
  };

  it('is absent unless written (the workflow then uses the default: no attempt cap)', () => {
    expect(parseConfig({}).config.models[0].retry).toBeUndefined();
    expect(DEFAULT_MODEL_RETRY).toEqual({
      initial_interval_seconds: 1,
      backoff_coefficient: 2,
      max_interval_seconds: 30,
    });
  });

  it('fills what is not written with the defaults', () => {
    expect(parseRetry({ max_retry_seconds: 600 })).toEqual({
      ...DEFAULT_MODEL_RETRY,
      max_retry_seconds: 600,
    });
    expect(
      parseRetry({
        initial_interval_seconds: 0.5,
        backoff_coefficient: 1.5,
        max_interval_seconds: 60,
        max_attempts: 20,
      }),
    ).toEqual({
      initial_interval_seconds: 0.5,
      backoff_coefficient: 1.5,
      max_interval_seconds: 60,
      max_attempts: 20,
    });
  });

  it.each([
    [{ backoff_coefficient: 0.5 }, 'models[0].retry.backoff_coefficient: 0.5 is out of range (≥ 1)'],
    [{ backoff_coefficient: 'fast' }, 'models[0].retry.backoff_coefficient: "fast" is not a number (≥ 1)'],
    [
      { initial_interval_seconds: 0 },
      'models[0].retry.initial_interval_seconds: 0 is out of range (more than 0)',
    ],
    [{ max_attempts: 0 }, 'models[0].retry.max_attempts: 0 is out of range (1 or more)'],
    [{ max_attempts: 2.5 }, 'models[0].retry.max_attempts: 2.5 is not a whole number (1 or more)'],
    [{ max_retry_seconds: -1 }, 'models[0].retry.max_retry_seconds: -1 is out of range (more than 0)'],
    [
      { initial_interval_seconds: 5, max_interval_seconds: 2 },
      'models[0].retry.max_interval_seconds: 2 is below initial_interval_seconds (at least 5)',
    ],
    [
      { max_interval_seconds: 0.5 },
      'models[0].retry.max_interval_seconds: 0.5 is below initial_interval_seconds (at least 1)',
    ],
  ])('refuses %j', (retry, message) => {
    expect(problemsOf(retry)).toEqual([message]);
  });

  it('refuses an unknown key and lists the accepted ones', () => {
    expect(problemsOf({ max_retries: 3 })).toEqual([
      'models[0].retry.max_retries: unknown key (accepted: initial_interval_seconds, backoff_coefficient, ' +
        'max_interval_seconds, max_attempts, max_retry_seconds)',
    ]);
  });
});

describe('the workflow’s retry policy', () => {
  it('by default retries without an attempt cap, backing off 1 s ×2 up to 30 s', () => {
    expect(modelRetryPolicy()).toEqual({
      initialInterval: 1000,
      backoffCoefficient: 2,
      maximumInterval: 30_000,
    });
    expect(modelRetryPolicy()).not.toHaveProperty('maximumAttempts');
  });

  it('carries what the config says', () => {
    expect(
      modelRetryPolicy({
        initial_interval_seconds: 0.25,
        backoff_coefficient: 1.5,
        max_interval_seconds: 2,
        max_attempts: 4,
      }),
    ).toEqual({ initialInterval: 250, backoffCoefficient: 1.5, maximumInterval: 2000, maximumAttempts: 4 });
  });

  it('makes a policy the server would refuse valid (an input that skipped the config check)', () => {
    expect(
      modelRetryPolicy({ initial_interval_seconds: 3, backoff_coefficient: 0.5, max_interval_seconds: 1 }),
    ).toEqual({ initialInterval: 3000, backoffCoefficient: 1, maximumInterval: 3000 });
  });
});

describe('a model call that ran out of retry time', () => {
  const retry: ModelRetrySettings = { ...DEFAULT_MODEL_RETRY, max_retry_seconds: 5 };
  const provider = ApplicationFailure.create({
    message: 'model fake (HTTP 500): The server had an error.',
    type: 'ModelProviderRetryable',
  });
  const activityFailure = (state: RetryState, cause: Error) =>
    new ActivityFailure('Activity task timed out', 'callModel', '1', state, 'worker', cause);

  const scheduleToClose = () =>
    new TimeoutFailure('activity ScheduleToClose timeout', undefined, 'SCHEDULE_TO_CLOSE');

  it('shows the last attempt’s provider message when the deadline passed during an attempt', () => {
    // As SDK 1.24 hands it over: the TimeoutFailure's cause only in the failure as received.
    const timeout = scheduleToClose();
    timeout.failure = {
      message: timeout.message,
      cause: { message: provider.message, applicationFailureInfo: { type: 'ModelProviderRetryable' } },
    };
    const rebuilt = withProviderCause(
      activityFailure(RetryState.NON_RETRYABLE_FAILURE, timeout),
      'fake',
      retry,
    ) as ActivityFailure;
    expect(rebuilt).toBeInstanceOf(ActivityFailure);
    expect(rebuilt.cause?.message).toBe(
      'model fake (HTTP 500): The server had an error. (gave up retrying, max_retry_seconds: 5 s)',
    );
    expect(rebuilt.cause).toMatchObject({ type: 'ModelProviderRetryable', nonRetryable: true });
  });

  it('also takes a TimeoutFailure’s cause when the SDK fills it in', () => {
    const timeout = scheduleToClose();
    Object.assign(timeout, { cause: provider });
    const rebuilt = withProviderCause(activityFailure(RetryState.TIMEOUT, timeout), 'fake', retry);
    expect((rebuilt as ActivityFailure).cause?.message).toContain(
      'model fake (HTTP 500): The server had an error.',
    );
  });

  it('does the same when the server hands back the last failure itself, retry state TIMEOUT', () => {
    const rebuilt = withProviderCause(activityFailure(RetryState.TIMEOUT, provider), 'fake', retry);
    expect((rebuilt as ActivityFailure).cause?.message).toContain(
      'model fake (HTTP 500): The server had an error.',
    );
  });

  it('names the model when no attempt failed yet (the first still waiting when time ran out)', () => {
    const rebuilt = withProviderCause(
      activityFailure(RetryState.NON_RETRYABLE_FAILURE, scheduleToClose()),
      'fake',
      retry,
    );
    expect((rebuilt as ActivityFailure).cause?.message).toBe(
      'model fake: no answer (max_retry_seconds: 5 s)',
    );
  });

  it('passes anything else through untouched', () => {
    const maxed = activityFailure(RetryState.MAXIMUM_ATTEMPTS_REACHED, provider);
    expect(withProviderCause(maxed, 'fake', retry)).toBe(maxed);
    const heartbeat = activityFailure(
      RetryState.NON_RETRYABLE_FAILURE,
      new TimeoutFailure(undefined, undefined, 'HEARTBEAT'),
    );
    expect(withProviderCause(heartbeat, 'fake', retry)).toBe(heartbeat);
    const noBudget = activityFailure(RetryState.TIMEOUT, provider);
    expect(withProviderCause(noBudget, 'fake', DEFAULT_MODEL_RETRY)).toBe(noBudget);
    const plain = new Error('not an activity failure');
    expect(withProviderCause(plain, 'fake', retry)).toBe(plain);
  });
});
