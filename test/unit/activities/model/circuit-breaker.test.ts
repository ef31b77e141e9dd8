import { CircuitBreakers, circuitOpenError } from '../../../../activities/model/circuit-breaker';
import { openCircuitBreakerIn } from '../../../../contracts/circuit-breaker';

function clocked() {
  let now = 1_000_000;
  const lines: string[] = [];
  const breakers = new CircuitBreakers(
    { failure_threshold: 3, recovery_timeout_sec: 10 },
    (line) => lines.push(line),
    () => now,
  );
  return { breakers, lines, tick: (ms: number) => (now += ms) };
}

describe('the model circuit breaker (DeerFlow circuit_breaker:)', () => {
  it('opens after failure_threshold failures in a row, refuses for the recovery window, then lets one probe through', () => {
    const { breakers, lines, tick } = clocked();
    const breaker = breakers.of({ provider: 'openai', base_url: 'http://x/v1' });
    breaker.failed();
    breaker.failed();
    expect(breaker.refusal()).toBeUndefined();
    breaker.failed();
    expect(breaker.current).toBe('open');
    expect(breaker.refusal()).toBe(10_000);
    tick(4_000);
    expect(breaker.refusal()).toBe(6_000);
    tick(6_000);
    // The window is over: one call goes, the next waits for it.
    expect(breaker.refusal()).toBeUndefined();
    expect(breaker.current).toBe('half_open');
    expect(breaker.refusal()).toBeDefined();
    breaker.succeeded();
    expect(breaker.current).toBe('closed');
    expect(breaker.refusal()).toBeUndefined();
    expect(lines).toEqual([
      'circuit breaker open for openai http://x/v1: 3 failures in a row: calls fail fast for 10 s',
      'circuit breaker half-open for openai http://x/v1: recovery window over: one call goes through',
      'circuit breaker closed for openai http://x/v1: a call succeeded: calls go through again',
    ]);
  });

  it('a failed probe opens it for another window; a success in between resets the count', () => {
    const { breakers, tick } = clocked();
    const breaker = breakers.of({ provider: 'openai' });
    breaker.failed();
    breaker.failed();
    breaker.succeeded();
    breaker.failed();
    breaker.failed();
    expect(breaker.current).toBe('closed');
    breaker.failed();
    tick(10_000);
    expect(breaker.refusal()).toBeUndefined();
    breaker.failed();
    expect(breaker.current).toBe('open');
    expect(breaker.refusal()).toBe(10_000);
  });

  it('keeps one breaker per endpoint, and refuses as a transient error that waits out the window', () => {
    const { breakers } = clocked();
    const a = breakers.of({ provider: 'openai', base_url: 'http://a/v1' });
    for (let i = 0; i < 3; i += 1) a.failed();
    expect(breakers.of({ provider: 'openai', base_url: 'http://a/v1' })).toBe(a);
    expect(breakers.of({ provider: 'openai', base_url: 'http://b/v1' }).refusal()).toBeUndefined();
    const error = circuitOpenError(a, 7_500);
    expect(error).toMatchObject({ retryable: true, retryAfterMs: 7_500 });
    expect(error.message).toBe(
      'circuit breaker open for openai http://a/v1 since 1970-01-01T00:16:40Z until 1970-01-01T00:16:50Z ' +
        'after repeated failures: not called; next try in 8 s',
    );
    // What `status` reads back from the run's pending model call.
    expect(openCircuitBreakerIn(`ModelProviderRetryable: ${error.message}`)).toEqual({
      endpoint: 'openai http://a/v1',
      since: '1970-01-01T00:16:40Z',
      until: '1970-01-01T00:16:50Z',
    });
    expect(openCircuitBreakerIn('HTTP 500 from openai')).toBeUndefined();
  });
});
