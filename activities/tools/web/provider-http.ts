/**
 * One request to a provider's API (plain `fetch`: each API is one JSON call, no provider's client library is
 * needed for it). The endpoint is the configured `base_url` or the provider's own; the operator chose it, so it is
 * not judged by the address guard (a self-hosted SearXNG on the local network is the point of `base_url`).
 */
import { keyVariable, type ToolEntry } from '../../../contracts/config/tools';
import type { AddressPolicy, HostLookup } from './addresses';
import { TransientWebError, WebRefusal, withoutSecrets } from './errors';

/** Everything a web tool call may use besides its arguments. */
export interface WebCallContext {
  entry: ToolEntry;
  /** Where `$NAME` keys are read (the worker's environment). */
  env: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal;
  /** The most characters of result the model gets. */
  outputCap: number;
  lookup: HostLookup;
  /** Which addresses a direct fetch refuses (addresses.ts). */
  refused: AddressPolicy;
}

/** The default request time limit, and the most the config may set (the tool activity's own bound is 2 minutes). */
export const DEFAULT_TIMEOUT_SECONDS = 30;
const MAX_TIMEOUT_SECONDS = 90;
/** Provider answers larger than this are refused rather than held in memory. */
const MAX_RESPONSE_CHARS = 5_000_000;

export function timeoutMs(entry: ToolEntry, fallbackSeconds = DEFAULT_TIMEOUT_SECONDS): number {
  return Math.min(entry.timeout ?? fallbackSeconds, MAX_TIMEOUT_SECONDS) * 1000;
}

/** The key a provider sends: the entry's `api_key` variable, else the provider's own variable; undefined if unset. */
export function providerKey(ctx: WebCallContext): string | undefined {
  const variable = keyVariable(ctx.entry);
  const value = variable === undefined ? undefined : ctx.env[variable]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** The entry's `base_url` (without a trailing slash) or the provider's own endpoint. */
export function endpoint(ctx: WebCallContext, fallback: string, path: string): string {
  return `${(ctx.entry.base_url ?? fallback).replace(/\/+$/, '')}${path}`;
}

export interface ProviderRequest {
  /** Named in messages: `tavily`, `brave`, … */
  provider: string;
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A JSON body (POST). */
  json?: unknown;
  /** A form body (POST). */
  form?: Record<string, string>;
  /** Values masked in any message (the key). */
  secrets?: (string | undefined)[];
}

function bodyOf(request: ProviderRequest): { body?: string; type?: string } {
  if (request.json !== undefined) return { body: JSON.stringify(request.json), type: 'application/json' };
  if (request.form !== undefined) {
    return { body: new URLSearchParams(request.form).toString(), type: 'application/x-www-form-urlencoded' };
  }
  return {};
}

/** The provider's answer as text; 429, 5xx and network faults throw TransientWebError, other failures WebRefusal. */
export async function callProvider(ctx: WebCallContext, request: ProviderRequest): Promise<string> {
  const secrets = request.secrets ?? [];
  const { body, type } = bodyOf(request);
  const limit = timeoutMs(ctx.entry);
  const signals = [AbortSignal.timeout(limit), ...(ctx.signal ? [ctx.signal] : [])];
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method ?? (body === undefined ? 'GET' : 'POST'),
      headers: { accept: 'application/json', ...(type && { 'content-type': type }), ...request.headers },
      ...(body !== undefined && { body }),
      signal: AbortSignal.any(signals),
      redirect: 'follow',
    });
  } catch (err) {
    if (ctx.signal?.aborted) throw err;
    const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
    const reason =
      err instanceof Error && err.name === 'TimeoutError'
        ? `no answer within ${limit / 1000} s`
        : `${String(err)}${cause}`;
    throw new TransientWebError(
      withoutSecrets(`${request.provider} could not be reached (${reason})`, secrets),
    );
  }
  const text = await response.text();
  if (response.ok) {
    if (text.length > MAX_RESPONSE_CHARS)
      throw new WebRefusal(
        `${request.provider} answered with ${text.length} characters, more than this tool reads`,
      );
    return text;
  }
  const excerpt = withoutSecrets(text.slice(0, 300), secrets);
  const message = `${request.provider} answered HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`;
  if (response.status === 429 || response.status >= 500) throw new TransientWebError(message);
  throw new WebRefusal(message);
}

/** The provider's answer parsed as a JSON object; anything else is a refusal naming the provider. */
export async function callProviderJson(
  ctx: WebCallContext,
  request: ProviderRequest,
): Promise<Record<string, unknown>> {
  const text = await callProvider(ctx, request);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new WebRefusal(`${request.provider} returned an unexpected response format (not JSON)`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new WebRefusal(`${request.provider} returned an unexpected response format`);
  return parsed as Record<string, unknown>;
}

/** A list field of an answer: its objects, or [] when absent or null. */
export function records(value: unknown): Record<string, unknown>[] {
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is Record<string, unknown> => item !== null && typeof item === 'object');
}

/** A field as text ('' when absent or not text). */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
