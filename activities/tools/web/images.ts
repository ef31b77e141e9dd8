/**
 * `image_search`: DeerFlow's default (DuckDuckGo images), Serper's and Brave's, each returning DeerFlow's
 * `{query, total_results, results: [{title, image_url, thumbnail_url, …}], usage_hint}`. Image URLs that name a
 * local or private host are dropped, as DeerFlow's providers drop them: a later download must not reach inside.
 */
import { keyVariable, type ImageSearchProvider } from '../../../contracts/config/tools';
import type { ImageSearchArgs } from '../../../contracts/tool-specs';
import { lexicalUrlProblem } from './addresses';
import { WebRefusal } from './errors';
import {
  callProvider,
  callProviderJson,
  endpoint,
  providerKey,
  records,
  str,
  type WebCallContext,
} from './provider-http';
import { missingKey, resultCount, serperCall } from './search';

const USAGE_HINT =
  "Use the 'image_url' values as reference images in image generation. Download them first if needed.";

interface Image {
  title: string;
  image_url: string;
  thumbnail_url: string;
  [more: string]: unknown;
}

function publicUrl(value: unknown, ctx: WebCallContext): string {
  const text = str(value).trim();
  if (text === '') return '';
  try {
    return lexicalUrlProblem(new URL(text), ctx.refused) === undefined ? text : '';
  } catch {
    return '';
  }
}

function imageResults(query: string, images: Image[], count: number): string {
  const kept = images.filter((image) => image.image_url !== '' || image.thumbnail_url !== '').slice(0, count);
  if (kept.length === 0) return JSON.stringify({ error: 'No images found', query });
  return JSON.stringify(
    { query, total_results: kept.length, results: kept, usage_hint: USAGE_HINT },
    null,
    2,
  );
}

/** DuckDuckGo's image search: a token (`vqd`) from the search page, then the JSON of `i.js`. */
async function ddgImages(args: ImageSearchArgs, ctx: WebCallContext): Promise<string> {
  const count = resultCount(ctx, args.max_results, 100);
  const base = (path: string) => endpoint(ctx, 'https://duckduckgo.com', path);
  const page = await callProvider(ctx, {
    provider: 'image_search',
    url: base(`/?${new URLSearchParams({ q: args.query, iax: 'images', ia: 'images' })}`),
    headers: { accept: 'text/html' },
  });
  const vqd = /vqd=["']?([\d-]+)["']?/.exec(page)?.[1];
  if (vqd === undefined) throw new WebRefusal('image_search: DuckDuckGo gave no search token');
  const filters = [
    args.size ? `size:${args.size}` : '',
    '',
    args.type_image ? `type:${args.type_image}` : '',
    args.layout ? `layout:${args.layout}` : '',
    '',
  ].join(',');
  const params = new URLSearchParams({
    l: ctx.entry.region ?? 'wt-wt',
    o: 'json',
    q: args.query,
    vqd,
    f: filters,
    p: ctx.entry.safesearch === 'off' ? '-1' : '1',
  });
  const data = await callProviderJson(ctx, { provider: 'image_search', url: base(`/i.js?${params}`) });
  return imageResults(
    args.query,
    records(data.results).map((r) => ({
      title: str(r.title),
      image_url: publicUrl(r.image, ctx),
      thumbnail_url: publicUrl(r.thumbnail, ctx),
    })),
    count,
  );
}

async function serperImages(args: ImageSearchArgs, ctx: WebCallContext): Promise<string> {
  const key = providerKey(ctx);
  const query = args.query.trim().slice(0, 500);
  if (key === undefined) return missingKey(keyVariable(ctx.entry), query);
  const count = resultCount(ctx, args.max_results, 10);
  const data = await serperCall(ctx, '/images', key, query, count);
  return imageResults(
    query,
    records(data.images).map((r) => ({
      title: str(r.title),
      image_url: publicUrl(r.imageUrl, ctx),
      thumbnail_url: publicUrl(r.thumbnailUrl, ctx),
    })),
    count,
  );
}

async function braveImages(args: ImageSearchArgs, ctx: WebCallContext): Promise<string> {
  const key = providerKey(ctx);
  const query = args.query.trim().slice(0, 400);
  if (key === undefined) return missingKey(keyVariable(ctx.entry), query);
  const count = resultCount(ctx, args.max_results, 200);
  const params = new URLSearchParams({ q: query, count: String(count) });
  const { country, search_lang: lang, safesearch, spellcheck } = ctx.entry;
  if (country !== undefined) params.set('country', country);
  if (lang !== undefined) params.set('search_lang', lang);
  if (safesearch !== undefined) params.set('safesearch', safesearch);
  if (spellcheck !== undefined) params.set('spellcheck', String(spellcheck));
  const data = await callProviderJson(ctx, {
    provider: 'brave',
    url: endpoint(ctx, 'https://api.search.brave.com', `/res/v1/images/search?${params}`),
    headers: { 'x-subscription-token': key },
    secrets: [key],
  });
  return imageResults(
    query,
    records(data.results).map((r) => {
      const properties = (r.properties ?? {}) as Record<string, unknown>;
      const thumbnail = (r.thumbnail ?? {}) as Record<string, unknown>;
      return {
        title: str(r.title),
        image_url: publicUrl(properties.url, ctx),
        thumbnail_url: publicUrl(thumbnail.src, ctx),
        source_url: publicUrl(r.url, ctx),
        source: str(r.source),
      };
    }),
    count,
  );
}

export const IMAGE_SEARCH: Readonly<
  Record<ImageSearchProvider, (args: ImageSearchArgs, ctx: WebCallContext) => Promise<string>>
> = {
  image_search: ddgImages,
  serper: serperImages,
  brave: braveImages,
};
