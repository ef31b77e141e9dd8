/**
 * `web_search`, one function per provider DeerFlow ships, each returning the text DeerFlow's returns: DuckDuckGo,
 * Serper and Brave `{query, total_results, results: [{title, url, content}]}`; Tavily, Exa, Firecrawl and
 * SearXNG a list of `{title, url, snippet}`.
 */
import { keyVariable, type WebSearchProvider } from '../../../contracts/config/tools';
import type { WebSearchArgs } from '../../../contracts/tool-specs';
import { WebRefusal } from './errors';
import { decodeEntities, htmlToText } from './html';
import {
  callProvider,
  callProviderJson,
  endpoint,
  providerKey,
  records,
  str,
  type WebCallContext,
} from './provider-http';

export const DEFAULT_MAX_RESULTS = 5;

/** How many results: what the model asked for, within the configured max_results (default 5) and the API's cap. */
export function resultCount(ctx: WebCallContext, asked: number | undefined, apiCap = 50): number {
  const ceiling = ctx.entry.max_results ?? DEFAULT_MAX_RESULTS;
  return Math.max(1, Math.min(asked ?? ceiling, ceiling, apiCap));
}

interface Hit {
  title: string;
  url: string;
  content: string;
}

/** DuckDuckGo's, Serper's and Brave's shape. */
function withQuery(query: string, hits: Hit[]): string {
  if (hits.length === 0) return JSON.stringify({ error: 'No results found', query });
  return JSON.stringify({ query, total_results: hits.length, results: hits }, null, 2);
}

/** Tavily's, Exa's, Firecrawl's and SearXNG's shape. */
function snippets(hits: Hit[]): string {
  return JSON.stringify(
    hits.map(({ title, url, content }) => ({ title, url, snippet: content })),
    null,
    2,
  );
}

/** A keyed provider's answer when its key is not in the worker's environment (DeerFlow's words). */
export function missingKey(variable: string | undefined, query: string): string {
  return JSON.stringify({ error: `${variable ?? 'the API key'} is not configured`, query });
}

/** DuckDuckGo's HTML endpoint (no key): the results' links, titles and snippets read off the page. */
async function ddgSearch(args: WebSearchArgs, ctx: WebCallContext): Promise<string> {
  const count = resultCount(ctx, args.max_results);
  const form: Record<string, string> = { q: args.query, kl: ctx.entry.region ?? 'wt-wt' };
  if (ctx.entry.safesearch === 'off') form.kp = '-2';
  else if (ctx.entry.safesearch === 'on' || ctx.entry.safesearch === 'strict') form.kp = '1';
  const html = await callProvider(ctx, {
    provider: 'ddg_search',
    url: endpoint(ctx, 'https://html.duckduckgo.com', '/html/'),
    form,
    headers: { accept: 'text/html' },
  });
  return withQuery(args.query, parseDdgResults(html).slice(0, count));
}

const DDG_LINK = /<a[^>]*class="[^"]*result__a[^"]*"[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/g;
const DDG_SNIPPET = /class="[^"]*result__snippet[^"]*"[^>]*>([\s\S]*?)<\/(?:a|td|div)>/;

/** The results of a DuckDuckGo HTML page; its redirect links (`/l/?uddg=…`) turned into the target URLs. */
export function parseDdgResults(html: string): Hit[] {
  const hits: Hit[] = [];
  const links = [...html.matchAll(DDG_LINK)];
  links.forEach((link, index) => {
    const end = links[index + 1]?.index ?? html.length;
    const rest = html.slice((link.index ?? 0) + link[0].length, end);
    let url = decodeEntities(link[1] ?? '');
    const redirect = /[?&]uddg=([^&]+)/.exec(url);
    if (redirect) url = decodeURIComponent(redirect[1] as string);
    else if (url.startsWith('//')) url = `https:${url}`;
    if (url.includes('duckduckgo.com/y.js')) return; // an ad
    hits.push({
      title: htmlToText(link[2] ?? ''),
      url,
      content: htmlToText(DDG_SNIPPET.exec(rest)?.[1] ?? ''),
    });
  });
  return hits;
}

async function tavilySearch(args: WebSearchArgs, ctx: WebCallContext): Promise<string> {
  const key = providerKey(ctx);
  if (key === undefined) return missingKey(keyVariable(ctx.entry), args.query);
  const data = await callProviderJson(ctx, {
    provider: 'tavily',
    url: endpoint(ctx, 'https://api.tavily.com', '/search'),
    headers: { authorization: `Bearer ${key}` },
    json: { query: args.query, max_results: resultCount(ctx, args.max_results, 20) },
    secrets: [key],
  });
  return snippets(
    records(data.results).map((r) => ({ title: str(r.title), url: str(r.url), content: str(r.content) })),
  );
}

async function braveSearch(args: WebSearchArgs, ctx: WebCallContext): Promise<string> {
  const key = providerKey(ctx);
  if (key === undefined) return missingKey(keyVariable(ctx.entry), args.query);
  const query = args.query.trim().slice(0, 400);
  const params = new URLSearchParams({
    q: query,
    count: String(resultCount(ctx, args.max_results, 20)),
    text_decorations: 'false',
  });
  const data = await callProviderJson(ctx, {
    provider: 'brave',
    url: endpoint(ctx, 'https://api.search.brave.com', `/res/v1/web/search?${params}`),
    headers: { 'x-subscription-token': key },
    secrets: [key],
  });
  const web = data.web as { results?: unknown } | undefined;
  return withQuery(
    query,
    records(web?.results).map((r) => ({ title: str(r.title), url: str(r.url), content: str(r.description) })),
  );
}

/** One Serper query (`/search` or `/images`): the key in its header, the count in the body. */
export function serperCall(
  ctx: WebCallContext,
  path: string,
  key: string,
  query: string,
  count: number,
): ReturnType<typeof callProviderJson> {
  return callProviderJson(ctx, {
    provider: 'serper',
    url: endpoint(ctx, 'https://google.serper.dev', path),
    headers: { 'x-api-key': key },
    json: { q: query, num: count },
    secrets: [key],
  });
}

async function serperSearch(args: WebSearchArgs, ctx: WebCallContext): Promise<string> {
  const key = providerKey(ctx);
  const query = args.query.trim().slice(0, 500);
  if (key === undefined) return missingKey(keyVariable(ctx.entry), query);
  const count = resultCount(ctx, args.max_results, 10);
  const data = await serperCall(ctx, '/search', key, query, count);
  return withQuery(
    query,
    records(data.organic)
      .slice(0, count)
      .map((r) => ({ title: str(r.title), url: str(r.link), content: str(r.snippet) })),
  );
}

async function searxngSearch(args: WebSearchArgs, ctx: WebCallContext): Promise<string> {
  const count = resultCount(ctx, args.max_results);
  const params = new URLSearchParams({
    q: args.query,
    format: 'json',
    language: 'auto',
    pageno: '1',
    limit: String(count),
  });
  const data = await callProviderJson(ctx, {
    provider: 'searxng',
    url: endpoint(ctx, 'http://localhost:8088', `/search?${params}`),
  });
  return snippets(
    records(data.results)
      .slice(0, count)
      .map((r) => ({ title: str(r.title), url: str(r.url), content: str(r.content) })),
  );
}

async function exaSearch(args: WebSearchArgs, ctx: WebCallContext): Promise<string> {
  const key = providerKey(ctx);
  if (key === undefined) return missingKey(keyVariable(ctx.entry), args.query);
  const data = await callProviderJson(ctx, {
    provider: 'exa',
    url: endpoint(ctx, 'https://api.exa.ai', '/search'),
    headers: { 'x-api-key': key },
    json: {
      query: args.query,
      type: ctx.entry.search_type ?? 'auto',
      numResults: resultCount(ctx, args.max_results, 100),
      contents: { highlights: { maxCharacters: ctx.entry.contents_max_characters ?? 1000 } },
    },
    secrets: [key],
  });
  return snippets(
    records(data.results).map((r) => ({
      title: str(r.title),
      url: str(r.url),
      content: Array.isArray(r.highlights) ? r.highlights.map(str).join('\n') : '',
    })),
  );
}

async function firecrawlSearch(args: WebSearchArgs, ctx: WebCallContext): Promise<string> {
  const key = providerKey(ctx);
  if (key === undefined) return missingKey(keyVariable(ctx.entry), args.query);
  const data = await callProviderJson(ctx, {
    provider: 'firecrawl',
    url: endpoint(ctx, 'https://api.firecrawl.dev', '/v2/search'),
    headers: { authorization: `Bearer ${key}` },
    json: { query: args.query, limit: resultCount(ctx, args.max_results, 100) },
    secrets: [key],
  });
  if (data.success === false) throw new WebRefusal(`firecrawl: ${str(data.error) || 'the search failed'}`);
  const found = data.data as { web?: unknown } | undefined;
  return snippets(
    records(found?.web).map((r) => ({ title: str(r.title), url: str(r.url), content: str(r.description) })),
  );
}

export const WEB_SEARCH: Readonly<
  Record<WebSearchProvider, (args: WebSearchArgs, ctx: WebCallContext) => Promise<string>>
> = {
  ddg_search: ddgSearch,
  tavily: tavilySearch,
  brave: braveSearch,
  serper: serperSearch,
  searxng: searxngSearch,
  exa: exaSearch,
  firecrawl: firecrawlSearch,
};
