/**
 * Reaching an A2A agent: its agent card (from the card URL the settings give, or the well-known path under the
 * endpoint they give), a client for the transport the card offers (JSON-RPC or HTTP+JSON, A2A 1.0 or 0.3), and
 * every HTTP call made with the settings' headers and classified on the way back: 401/403 is an
 * authentication refusal, 408/409/429/5xx and network failures pass with time (Temporal retries), anything
 * else is the SDK's to read. No message made here carries a header value.
 */
import type { AgentCard } from '@a2a-js/sdk' with { 'resolution-mode': 'require' };
import type { Client } from '@a2a-js/sdk/client' with { 'resolution-mode': 'require' };
import type { A2AProviderSettings } from '../../../contracts/remote-subagent';
import { isRetryableStatus } from '../../model/errors';
import { redactSecrets, type ResolvedValues } from '../shared';
import { A2AAuthError, A2ACardError, A2AUnavailableError, reasonOf } from './errors';
import { a2aClientSdk } from './sdk';

/** The well-known path of an agent card (A2A 1.0 §8.2). */
const CARD_PATH = '.well-known/agent-card.json';
/** One call that is not a stream: how long it may take to answer before it counts as unreachable. */
const REQUEST_TIMEOUT_MS = 60_000;
/** How much of an error response's body a message quotes. */
const BODY_SNIPPET_CHARS = 300;

/**
 * Where the agent card is looked for: `url` itself when it names a JSON file; otherwise the well-known path
 * under it, then (for an endpoint below the root) the well-known path at the root of its origin.
 */
export function agentCardUrls(url: string): string[] {
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new A2ACardError(
      `url: ${JSON.stringify(url)} is not an http(s) URL (an agent card or an A2A endpoint)`,
    );
  }
  if (parsed.pathname.endsWith('.json')) return [parsed.href];
  const base = new URL(parsed.pathname.endsWith('/') ? parsed.pathname : `${parsed.pathname}/`, parsed);
  const under = new URL(CARD_PATH, base).href;
  const atRoot = new URL(`/${CARD_PATH}`, parsed).href;
  return under === atRoot ? [under] : [under, atRoot];
}

/** What a call is, for a message: its JSON-RPC method, else its HTTP method and path. */
function callName(input: string | URL | Request, init: RequestInit | undefined): string {
  if (typeof init?.body === 'string') {
    try {
      const method = (JSON.parse(init.body) as { method?: unknown }).method;
      if (typeof method === 'string') return method;
    } catch {
      // Not JSON-RPC: named by its path.
    }
  }
  const url = input instanceof Request ? input.url : String(input);
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // Named by the URL as given.
  }
  return `${init?.method ?? 'GET'} ${path}`;
}

async function bodySnippet(response: Response): Promise<string> {
  try {
    const text = (await response.text()).replace(/\s+/g, ' ').trim();
    return text.length > BODY_SNIPPET_CHARS ? `${text.slice(0, BODY_SNIPPET_CHARS)}…` : text;
  } catch {
    return '';
  }
}

/**
 * `fetch` with the provider's headers (the SDK's own protocol headers win over them) and the answer
 * classified: A2AAuthError, A2AUnavailableError, or the response for the SDK to read. A call that does not
 * ask for a stream gets REQUEST_TIMEOUT_MS to answer.
 */
export function agentFetch(label: string, resolved: ResolvedValues): typeof fetch {
  const clean = (text: string): string => redactSecrets(text, resolved.secrets);
  return async (input, init) => {
    const headers = new Headers(resolved.values);
    new Headers(init?.headers).forEach((value, key) => headers.set(key, value));
    const what = callName(input, init);
    const streaming = headers.get('accept')?.includes('text/event-stream') === true;
    const timeout = streaming ? undefined : AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const signals = [init?.signal ?? undefined, timeout].filter((s) => s !== undefined);
    let response: Response;
    try {
      response = await fetch(input, { ...init, headers, signal: AbortSignal.any(signals) });
    } catch (err) {
      if (init?.signal?.aborted) throw err;
      if (timeout?.aborted) {
        throw new A2AUnavailableError(
          `${label}: ${what} got no answer within ${REQUEST_TIMEOUT_MS / 1000} s`,
        );
      }
      throw new A2AUnavailableError(clean(`${label}: ${what} did not reach the agent: ${reasonOf(err)}`));
    }
    if (response.status === 401 || response.status === 403) {
      const body = await bodySnippet(response);
      throw new A2AAuthError(
        response.status,
        clean(`${label}: the agent refused ${what} (HTTP ${response.status})${body ? `: ${body}` : ''}`),
      );
    }
    if (isRetryableStatus(response.status)) {
      const body = await bodySnippet(response);
      throw new A2AUnavailableError(
        clean(`${label}: the agent answered ${what} with HTTP ${response.status}${body ? `: ${body}` : ''}`),
      );
    }
    return response;
  };
}

/** The agent card, as the SDK reads it (an A2A 0.3 card is translated), from the first place that has one. */
export async function fetchAgentCard(
  settings: A2AProviderSettings,
  label: string,
  http: typeof fetch,
  signal: AbortSignal,
): Promise<AgentCard> {
  let urls: string[];
  try {
    urls = agentCardUrls(settings.url);
  } catch (err) {
    throw new A2ACardError(`${label}: ${reasonOf(err)}`);
  }
  const resolver = new (await a2aClientSdk()).DefaultAgentCardResolver({ legacyCompat: { enabled: true } });
  for (const url of urls) {
    const response = await http(url, { headers: { Accept: 'application/json' }, signal });
    if (response.status === 404) {
      await response.body?.cancel();
      continue;
    }
    if (!response.ok) {
      throw new A2ACardError(`${label}: the agent card at ${url} answered HTTP ${response.status}`);
    }
    let card: unknown;
    try {
      card = await response.json();
    } catch (err) {
      if (signal.aborted) throw err;
      throw new A2ACardError(`${label}: the agent card at ${url} is not JSON`);
    }
    if (typeof card !== 'object' || card === null) {
      throw new A2ACardError(`${label}: the agent card at ${url} is not a JSON object`);
    }
    return resolver.normalizeAgentCard(card);
  }
  throw new A2ACardError(`${label}: no agent card at ${urls.join(' or ')} (HTTP 404)`);
}

/** A client for one agent, with what its card says it can do. */
export interface A2AConnection {
  client: Client;
  card: AgentCard;
  /** The card says it streams: the task is followed over a stream, else by polling `getTask`. */
  streaming: boolean;
}

/** The agent's card and a client on the transport it prefers among those this worker speaks. */
export async function connectA2A(
  settings: A2AProviderSettings,
  label: string,
  resolved: ResolvedValues,
  signal: AbortSignal,
): Promise<A2AConnection> {
  const sdk = await a2aClientSdk();
  const http = agentFetch(label, resolved);
  const card = await fetchAgentCard(settings, label, http, signal);
  const factory = new sdk.ClientFactory({
    transports: [
      new sdk.JsonRpcTransportFactory({ fetchImpl: http, legacyCompat: { enabled: true } }),
      new sdk.RestTransportFactory({ fetchImpl: http, legacyCompat: { enabled: true } }),
    ],
    // The card is read already (fetchAgentCard): the factory takes it as it is.
    cardResolver: {
      resolve: () => Promise.reject(new Error('the agent card is fetched before the client is made')),
      normalizeAgentCard: (read) => read as AgentCard,
    },
  });
  let client: Client;
  try {
    client = await factory.createFromAgentCard(card);
  } catch (err) {
    const offered = (card.supportedInterfaces ?? []).map((i) => i.protocolBinding).join(', ') || 'none';
    throw new A2ACardError(
      `${label}: the agent card offers no transport this worker speaks (offered: ${offered}; ` +
        `spoken: JSONRPC, HTTP+JSON): ${reasonOf(err)}`,
    );
  }
  return { client, card, streaming: card.capabilities?.streaming === true };
}
