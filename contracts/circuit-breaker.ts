/**
 * The words of an open circuit breaker (issue 48, `circuit_breaker:`): a model call it refuses fails with a
 * message naming the endpoint and the window it is open for, and `status` reads the window back from a run's
 * pending model call. One definition for both sides. Pure: no Node APIs.
 */

/** An open breaker as a refused call names it: which endpoint, since when, until when (ISO times, UTC). */
export interface OpenCircuitBreaker {
  endpoint: string;
  since: string;
  until: string;
}

/** The failure message of a call an open breaker refused; `waitMs` until the breaker lets one through. */
export function circuitOpenMessage(open: OpenCircuitBreaker, waitMs: number): string {
  return (
    `circuit breaker open for ${open.endpoint} since ${open.since} until ${open.until} after repeated ` +
    `failures: not called; next try in ${Math.ceil(waitMs / 1000)} s`
  );
}

const OPEN = /circuit breaker open for (.+?) since (\S+) until (\S+) after repeated failures/;

/** The open breaker a failure message names, if it is a refusal's. */
export function openCircuitBreakerIn(message: string): OpenCircuitBreaker | undefined {
  const match = OPEN.exec(message);
  if (!match) return undefined;
  const [, endpoint, since, until] = match;
  return { endpoint, since, until };
}
