/**
 * DeerFlow's circuit breaker for model calls (`circuit_breaker:` — `failure_threshold`, `recovery_timeout_sec`),
 * one per provider endpoint in each worker process: after `failure_threshold` failures in a row that time could
 * fix (HTTP 408/409/429/5xx, network), the breaker opens and every call to that endpoint fails at once, without a
 * request, for `recovery_timeout_sec`; then one call is let through (half-open): its success closes the breaker,
 * its failure opens it for another window. A call refused by an open breaker fails as the provider's own
 * transient errors do (`ModelProviderRetryable`), its next retry no sooner than the window's end, so the agent's
 * retry policy rides the outage out instead of every run hammering the provider. Each change of state is said
 * once in the worker's log and measured (`subagents_model_circuit_state`, `subagents_model_circuit_rejections`).
 */
import { Context } from '@temporalio/activity';
import type { MetricMeter } from '@temporalio/common';
import { circuitOpenMessage } from '../../contracts/circuit-breaker';
import { MODEL_CIRCUIT_REJECTIONS, MODEL_CIRCUIT_STATE } from '../../contracts/metrics';
import type { ModelSettings } from '../../contracts/model';
import { ProviderError } from './errors';

export interface CircuitBreakerSettings {
  failure_threshold: number;
  recovery_timeout_sec: number;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** The state as the metric gauge reads it. */
const STATE_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

function activityMeter(): MetricMeter | undefined {
  try {
    return Context.current().metricMeter;
  } catch {
    return undefined;
  }
}

/** The breaker of one provider endpoint. */
export class CircuitBreaker {
  private state: CircuitState = 'closed';
  private failures = 0;
  private openedAt = 0;
  private openUntil = 0;
  private probing = false;

  constructor(
    readonly endpoint: string,
    private readonly settings: CircuitBreakerSettings,
    private readonly say: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  get current(): CircuitState {
    return this.state;
  }

  /** The window of the latest opening (epoch ms): since when, until when. */
  get window(): { since: number; until: number } {
    return { since: this.openedAt, until: this.openUntil };
  }

  /**
   * Whether a call may go out now: undefined when it may, else how long until the breaker lets one through
   * (ms). The first call after the window is the half-open probe; others wait while it is out.
   */
  refusal(): number | undefined {
    const now = this.now();
    if (this.state === 'open') {
      if (now < this.openUntil) return this.openUntil - now;
      this.move('half_open', 'recovery window over: one call goes through');
    }
    if (this.state === 'half_open') {
      if (this.probing) return this.settings.recovery_timeout_sec * 1000;
      this.probing = true;
    }
    return undefined;
  }

  succeeded(): void {
    this.failures = 0;
    this.probing = false;
    if (this.state !== 'closed') this.move('closed', 'a call succeeded: calls go through again');
  }

  /** A failure time could fix (a transient one); others say nothing of the provider's health. */
  failed(): void {
    this.probing = false;
    const window = this.settings.recovery_timeout_sec;
    if (this.state === 'half_open') {
      this.openedAt = this.now();
      this.openUntil = this.openedAt + window * 1000;
      this.move('open', `the probe failed: calls fail fast for ${window} s`);
      return;
    }
    this.failures += 1;
    if (this.state === 'closed' && this.failures >= this.settings.failure_threshold) {
      this.openedAt = this.now();
      this.openUntil = this.openedAt + window * 1000;
      this.move('open', `${this.failures} failures in a row: calls fail fast for ${window} s`);
    }
  }

  /** A call that ended without an answer or an error (cancelled): a probe may go out again. */
  released(): void {
    this.probing = false;
  }

  private move(state: CircuitState, why: string): void {
    this.state = state;
    this.say(`circuit breaker ${state.replace('_', '-')} for ${this.endpoint}: ${why}`);
    activityMeter()
      ?.createGauge(
        MODEL_CIRCUIT_STATE,
        'int',
        'state',
        'Model circuit breaker: 0 closed, 1 half-open, 2 open',
      )
      .set(STATE_VALUE[state], { endpoint: this.endpoint });
  }
}

/** The error a refused call fails with: transient, its retry no sooner than the breaker allows. */
export function circuitOpenError(breaker: CircuitBreaker, waitMs: number): ProviderError {
  activityMeter()
    ?.createCounter(MODEL_CIRCUIT_REJECTIONS, 'calls', 'Model calls an open circuit breaker refused')
    .add(1, { endpoint: breaker.endpoint });
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const { since, until } = breaker.window;
  return new ProviderError(
    circuitOpenMessage({ endpoint: breaker.endpoint, since: iso(since), until: iso(until) }, waitMs),
    undefined,
    true,
    waitMs,
  );
}

/** A worker process's breakers, one per provider endpoint (its provider and base URL). */
export class CircuitBreakers {
  private readonly breakers = new Map<string, CircuitBreaker>();

  constructor(
    private readonly settings: CircuitBreakerSettings,
    private readonly say: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  of(model: Pick<ModelSettings, 'provider' | 'base_url'>): CircuitBreaker {
    const endpoint = model.base_url ? `${model.provider} ${model.base_url}` : model.provider;
    let breaker = this.breakers.get(endpoint);
    if (!breaker) {
      breaker = new CircuitBreaker(endpoint, this.settings, this.say, this.now);
      this.breakers.set(endpoint, breaker);
    }
    return breaker;
  }
}
