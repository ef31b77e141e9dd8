/**
 * The circuit breakers a run's model calls wait on (issue 48): a breaker lives in a worker process, and a call it
 * refuses fails with a message naming its endpoint and open window (contracts/circuit-breaker.ts), which the
 * server keeps as the pending activity's last failure. Read here from the run's pending activities and those of
 * its open children (its subagents' model calls), one entry per endpoint, only while the window lasts.
 */
import type { Client } from '@temporalio/client';
import { openCircuitBreakerIn, type OpenCircuitBreaker } from '../contracts/circuit-breaker';

/** The most open children described (a run's children running at once are bounded by its admission). */
const CHILDREN_READ = 20;

async function pendingFailures(
  client: Client,
  workflowId: string,
): Promise<{ messages: string[]; children: string[] }> {
  const { raw } = await client.workflow.getHandle(workflowId).describe();
  return {
    messages: (raw.pendingActivities ?? []).flatMap((a) =>
      a.lastFailure?.message ? [a.lastFailure.message] : [],
    ),
    children: (raw.pendingChildren ?? []).flatMap((c) => (c.workflowId ? [c.workflowId] : [])),
  };
}

/**
 * The breakers open now (by `nowMs`) that `workflowId`'s model calls, or its open children's, were refused by:
 * for each endpoint the latest window. Empty when none (or when the run cannot be described).
 */
export async function openCircuitBreakers(
  client: Client,
  workflowId: string,
  nowMs: number = Date.now(),
): Promise<OpenCircuitBreaker[]> {
  const lead = await pendingFailures(client, workflowId);
  const children = await Promise.all(
    lead.children.slice(0, CHILDREN_READ).map((id) => pendingFailures(client, id).catch(() => undefined)),
  );
  const latest = new Map<string, OpenCircuitBreaker>();
  for (const message of [...lead.messages, ...children.flatMap((c) => c?.messages ?? [])]) {
    const open = openCircuitBreakerIn(message);
    if (!open || Date.parse(open.until) <= nowMs) continue;
    const seen = latest.get(open.endpoint);
    if (!seen || Date.parse(seen.until) < Date.parse(open.until)) latest.set(open.endpoint, open);
  }
  return [...latest.values()];
}

/** `status`'s line for an open breaker. */
export function openCircuitBreakerLine(open: OpenCircuitBreaker): string {
  return (
    `circuit breaker open for ${open.endpoint} since ${open.since} until ${open.until}: ` +
    'model calls to it wait instead of being sent'
  );
}
