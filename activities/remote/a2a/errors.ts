/**
 * How an A2A call can go wrong, in the three kinds the activity tells apart: the agent refused the
 * credentials (the delegation ends `auth_required`), the agent is unavailable for now (Temporal retries), or
 * the agent cannot be used at all (`failed`). SDK protocol errors and network faults are recognised here too.
 */

/** The failure type of a retryable A2A fault (unreachable, 5xx…); workflows see it on the ActivityFailure's cause. */
export const A2A_UNAVAILABLE_ERROR_TYPE = 'RemoteAgentUnavailable';

/** The agent refused the credentials (HTTP 401/403): the delegation ends `auth_required`. */
export class A2AAuthError extends Error {
  override name = 'A2AAuthError';

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The agent could not be reached, or answered with a fault that passes with time: worth another attempt. */
export class A2AUnavailableError extends Error {
  override name = 'A2AUnavailableError';
}

/** No usable agent card where the settings point: no other attempt would find one. */
export class A2ACardError extends Error {
  override name = 'A2ACardError';
}

const firstLine = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value.split('\n')[0] : undefined;

/** The first line of an error's message, with what its causes say (`fetch failed (ECONNREFUSED)`). */
export function reasonOf(err: unknown): string {
  const first = firstLine((err as { message?: unknown } | null)?.message) ?? (String(err) || 'unknown error');
  const causes: string[] = [];
  let at = (err as { cause?: unknown } | null)?.cause as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
  };
  for (let depth = 0; typeof at === 'object' && at !== null && depth < 4; depth += 1) {
    const said = typeof at.code === 'string' ? at.code : firstLine(at.message);
    if (said !== undefined && !causes.includes(said)) causes.push(said);
    at = at.cause as typeof at;
  }
  return causes.length > 0 ? `${first} (${causes.join('; ')})` : first;
}

/** An SDK protocol error (duck-typed by the SDK's own brand: its classes may come from another bundle). */
export function protocolReason(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || !(Symbol.for('@a2a-js/sdk.A2AError') in err))
    return undefined;
  const reason = (err as { reason?: unknown }).reason;
  return typeof reason === 'string' ? reason : 'A2A_ERROR';
}

/** A failure of the connection itself (reset, closed mid-stream, timed out), not an answer of the agent. */
export function isNetworkFault(err: unknown): boolean {
  if (err instanceof A2AUnavailableError) return true;
  if (protocolReason(err) !== undefined) return false;
  let at = err as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown } | null | undefined;
  for (let depth = 0; typeof at === 'object' && at !== null && depth < 5; depth += 1) {
    if (at.name === 'TimeoutError') return true;
    if (typeof at.code === 'string' && (/^E[A-Z]+$/.test(at.code) || at.code.startsWith('UND_ERR')))
      return true;
    if (at.message === 'terminated' || at.message === 'fetch failed') return true;
    at = at.cause as typeof at;
  }
  return false;
}
