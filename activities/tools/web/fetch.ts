/**
 * `web_fetch` (`{url}`): through a reader service (Jina's reader, DeerFlow's default; Firecrawl; Exa), or
 * `direct` (this worker GETs the page itself, behind the address guard). A URL handed to a reader is checked
 * lexically (scheme, no literal private address, no local name): the reader resolves it, not this worker; a
 * direct fetch judges every address the host resolves to, on every redirect, and connects to the one judged.
 */
import { keyVariable, type WebFetchProvider } from '../../../contracts/config/tools';
import type { WebFetchArgs } from '../../../contracts/tool-specs';
import { lexicalUrlProblem } from './addresses';
import { TransientWebError, WebRefusal } from './errors';
import { guardedGet } from './guarded-fetch';
import { htmlTitle, htmlToText } from './html';
import {
  callProvider,
  callProviderJson,
  endpoint,
  providerKey,
  records,
  str,
  timeoutMs,
  type WebCallContext,
} from './provider-http';

/** Redirects a direct fetch follows, each one judged again. */
const MAX_REDIRECTS = 5;
/** Bytes of a page a direct fetch reads at most. */
const MAX_PAGE_BYTES = 2_000_000;

/** The model's URL, parsed and checked for a reader service; a refusal says why. */
function readerUrl(args: WebFetchArgs, ctx: WebCallContext): string {
  let url: URL;
  try {
    url = new URL(args.url);
  } catch {
    throw new WebRefusal(
      `${JSON.stringify(args.url)} is not a URL (write it with its scheme, e.g. https://example.com)`,
    );
  }
  const problem = ctx.entry.allow_private_addresses ? undefined : lexicalUrlProblem(url, ctx.refused);
  if (problem !== undefined) throw new WebRefusal(`refusing to fetch ${url.href}: ${problem}`);
  return url.href;
}

function titled(title: string | undefined, text: string): string {
  return `# ${title || 'Untitled'}\n\n${text}`;
}

async function jinaFetch(args: WebFetchArgs, ctx: WebCallContext): Promise<string> {
  const url = readerUrl(args, ctx);
  const key = providerKey(ctx);
  const text = await callProvider(ctx, {
    provider: 'jina_ai',
    url: endpoint(ctx, 'https://r.jina.ai', '/'),
    headers: {
      accept: 'text/plain',
      'x-return-format': 'markdown',
      'x-timeout': String(timeoutMs(ctx.entry, 10) / 1000),
      ...(key !== undefined && { authorization: `Bearer ${key}` }),
    },
    json: { url },
    secrets: [key],
  });
  if (text.trim() === '') throw new WebRefusal('jina_ai returned an empty response');
  return text;
}

async function firecrawlFetch(args: WebFetchArgs, ctx: WebCallContext): Promise<string> {
  const url = readerUrl(args, ctx);
  const key = providerKey(ctx);
  if (key === undefined) throw new WebRefusal(`${keyVariable(ctx.entry)} is not configured`);
  const data = await callProviderJson(ctx, {
    provider: 'firecrawl',
    url: endpoint(ctx, 'https://api.firecrawl.dev', '/v2/scrape'),
    headers: { authorization: `Bearer ${key}` },
    json: { url, formats: ['markdown'] },
    secrets: [key],
  });
  if (data.success === false) throw new WebRefusal(`firecrawl: ${str(data.error) || 'the scrape failed'}`);
  const page = (data.data ?? {}) as { markdown?: unknown; metadata?: { title?: unknown } };
  const markdown = str(page.markdown);
  if (markdown === '') throw new WebRefusal('firecrawl found no content');
  return titled(str(page.metadata?.title), markdown);
}

async function exaFetch(args: WebFetchArgs, ctx: WebCallContext): Promise<string> {
  const url = readerUrl(args, ctx);
  const key = providerKey(ctx);
  if (key === undefined) throw new WebRefusal(`${keyVariable(ctx.entry)} is not configured`);
  const data = await callProviderJson(ctx, {
    provider: 'exa',
    url: endpoint(ctx, 'https://api.exa.ai', '/contents'),
    headers: { 'x-api-key': key },
    json: { urls: [url], text: { maxCharacters: ctx.entry.max_chars ?? ctx.outputCap } },
    secrets: [key],
  });
  const first = records(data.results)[0];
  if (first === undefined) throw new WebRefusal('exa found no results');
  return titled(str(first.title), str(first.text));
}

/** GETs the page on this worker, behind the guard; HTML comes back as text under its title. */
async function directFetch(args: WebFetchArgs, ctx: WebCallContext): Promise<string> {
  const page = await guardedGet(args.url, {
    lookup: ctx.lookup,
    refused: ctx.entry.allow_private_addresses ? () => false : ctx.refused,
    timeoutMs: timeoutMs(ctx.entry, 10),
    maxBytes: MAX_PAGE_BYTES,
    maxRedirects: MAX_REDIRECTS,
    ...(ctx.signal && { signal: ctx.signal }),
  });
  if (page.status === 429 || page.status >= 500)
    throw new TransientWebError(`${page.url} answered HTTP ${page.status}`);
  if (page.status < 200 || page.status >= 300)
    throw new WebRefusal(`${page.url} answered HTTP ${page.status}`);
  const type = page.contentType.toLowerCase();
  const text = page.body.toString('utf8');
  if (type.includes('html')) return titled(htmlTitle(text), htmlToText(text));
  if (type === '' || type.startsWith('text/') || type.includes('json') || type.includes('xml')) return text;
  throw new WebRefusal(`${page.url} is ${type}, not text`);
}

export const WEB_FETCH: Readonly<
  Record<WebFetchProvider, (args: WebFetchArgs, ctx: WebCallContext) => Promise<string>>
> = {
  jina_ai: jinaFetch,
  firecrawl: firecrawlFetch,
  exa: exaFetch,
  direct: directFetch,
};
