/**
 * Each web provider against a local fake of its API, through the tool activity a worker registers: the entry is
 * DeerFlow's `tools:` entry (its `use:` path, `base_url` pointing at the fake), the request has the provider's
 * shape and key header, and the model gets DeerFlow's result text — with the key nowhere in it.
 */
import { createToolActivities, machineProbes } from '../../../../activities/tools';
import { parseConfig } from '../../../../contracts/config';
import { DEFAULT_SANDBOX, TOOL_ACTIVITY_NAMES, type ToolCallResult } from '../../../../contracts/tools';
import { FakeWebApi, type FakeResponse, type SeenRequest } from '../../../support/fake-web-api';

const KEY = 'secret-key-0123456789';
const env = {
  TAVILY_API_KEY: KEY,
  BRAVE_SEARCH_API_KEY: KEY,
  SERPER_API_KEY: KEY,
  EXA_API_KEY: KEY,
  FIRECRAWL_API_KEY: KEY,
  JINA_API_KEY: KEY,
  MY_KEY: KEY,
};
const probes = machineProbes();

let fake: FakeWebApi;
beforeAll(async () => {
  fake = await FakeWebApi.start();
});
afterAll(() => fake.close());
beforeEach(() => fake.requests.splice(0));

/** The tool activity with one `tools:` entry, parsed as a config file would be. */
function activityWith(entry: Record<string, unknown>) {
  const { config } = parseConfig({ tools: [{ base_url: fake.url, ...entry }] });
  return createToolActivities({ probes, web: { entries: config.tools ?? [], env } }).executeToolCall;
}

function call(entry: Record<string, unknown>, args: object): Promise<ToolCallResult> {
  const name = entry.name as string;
  return activityWith(entry)({
    call: { id: 'call-1', name, args: JSON.stringify(args) },
    workspace: '/tmp',
    allowed_tools: [...TOOL_ACTIVITY_NAMES],
    sandbox: DEFAULT_SANDBOX,
  });
}

function bodyOf(request: SeenRequest | undefined): unknown {
  return JSON.parse(request?.body ?? 'null');
}

interface Case {
  tool: 'web_search' | 'web_fetch' | 'image_search';
  use: string;
  routes: Record<string, FakeResponse>;
  args: object;
  /** The header that carries the key, and how (undefined: the provider takes none). */
  keyHeader?: [string, string];
  request: (requests: SeenRequest[]) => void;
  output: string[];
}

const DDG_HTML = `<html><body>
<div class="result"><a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.org%2Ftemporal&amp;rut=x">Temporal &amp; durable</a>
<a class="result__snippet" href="#">Durable <b>execution</b> explained</a></div>
<div class="result"><a rel="nofollow" class="result__a" href="https://second.example/">Second hit</a>
<a class="result__snippet">The second snippet</a></div></body></html>`;

const cases: [string, Case][] = [
  [
    'ddg_search (the default web_search)',
    {
      tool: 'web_search',
      use: 'deerflow.community.ddg_search.tools:web_search_tool',
      routes: { 'POST /html/': { text: DDG_HTML, headers: { 'content-type': 'text/html' } } },
      args: { query: 'durable execution' },
      request: ([r]) => {
        expect(new URLSearchParams(r?.body).get('q')).toBe('durable execution');
        expect(r?.headers['content-type']).toBe('application/x-www-form-urlencoded');
      },
      output: [
        '"total_results": 2',
        '"url": "https://example.org/temporal"',
        '"title": "Temporal & durable"',
        '"content": "Durable execution explained"',
      ],
    },
  ],
  [
    'tavily',
    {
      tool: 'web_search',
      use: 'deerflow.community.tavily.tools:web_search_tool',
      routes: {
        'POST /search': {
          json: { results: [{ title: 'T1', url: 'https://t.example/1', content: 'tavily says' }] },
        },
      },
      args: { query: 'q1', max_results: 10 },
      keyHeader: ['authorization', `Bearer ${KEY}`],
      request: ([r]) => expect(bodyOf(r)).toEqual({ query: 'q1', max_results: 3 }),
      output: ['"snippet": "tavily says"', '"url": "https://t.example/1"'],
    },
  ],
  [
    'brave',
    {
      tool: 'web_search',
      use: 'deerflow.community.brave.tools:web_search_tool',
      routes: {
        'GET /res/v1/web/search': {
          json: { web: { results: [{ title: 'B1', url: 'https://b.example/', description: 'brave says' }] } },
        },
      },
      args: { query: 'q2' },
      keyHeader: ['x-subscription-token', KEY],
      request: ([r]) => {
        expect(r?.query.get('q')).toBe('q2');
        expect(r?.query.get('count')).toBe('3');
      },
      output: ['"query": "q2"', '"content": "brave says"'],
    },
  ],
  [
    'serper',
    {
      tool: 'web_search',
      use: 'deerflow.community.serper.tools:web_search_tool',
      routes: {
        'POST /search': {
          json: { organic: [{ title: 'S1', link: 'https://s.example/', snippet: 'serper says' }] },
        },
      },
      args: { query: 'q3' },
      keyHeader: ['x-api-key', KEY],
      request: ([r]) => expect(bodyOf(r)).toEqual({ q: 'q3', num: 3 }),
      output: ['"url": "https://s.example/"', '"content": "serper says"'],
    },
  ],
  [
    'searxng',
    {
      tool: 'web_search',
      use: 'deerflow.community.searxng.tools:web_search_tool',
      routes: {
        'GET /search': {
          json: { results: [{ title: 'X1', url: 'https://x.example/', content: 'searx says' }] },
        },
      },
      args: { query: 'q4' },
      request: ([r]) => {
        expect(r?.query.get('q')).toBe('q4');
        expect(r?.query.get('format')).toBe('json');
      },
      output: ['"snippet": "searx says"'],
    },
  ],
  [
    'exa (web_search)',
    {
      tool: 'web_search',
      use: 'deerflow.community.exa.tools:web_search_tool',
      routes: {
        'POST /search': {
          json: { results: [{ title: 'E1', url: 'https://e.example/', highlights: ['exa says'] }] },
        },
      },
      args: { query: 'q5' },
      keyHeader: ['x-api-key', KEY],
      request: ([r]) =>
        expect(bodyOf(r)).toEqual({
          query: 'q5',
          type: 'auto',
          numResults: 3,
          contents: { highlights: { maxCharacters: 1000 } },
        }),
      output: ['"snippet": "exa says"'],
    },
  ],
  [
    'firecrawl (web_search)',
    {
      tool: 'web_search',
      use: 'deerflow.community.firecrawl.tools:web_search_tool',
      routes: {
        'POST /v2/search': {
          json: {
            success: true,
            data: { web: [{ title: 'F1', url: 'https://f.example/', description: 'fc says' }] },
          },
        },
      },
      args: { query: 'q6' },
      keyHeader: ['authorization', `Bearer ${KEY}`],
      request: ([r]) => expect(bodyOf(r)).toEqual({ query: 'q6', limit: 3 }),
      output: ['"snippet": "fc says"'],
    },
  ],
  [
    'jina_ai (the default web_fetch)',
    {
      tool: 'web_fetch',
      use: 'deerflow.community.jina_ai.tools:web_fetch_tool',
      routes: { 'POST /': { text: '# Page\n\nJina read this page.' } },
      args: { url: 'https://example.org/page' },
      keyHeader: ['authorization', `Bearer ${KEY}`],
      request: ([r]) => {
        expect(bodyOf(r)).toEqual({ url: 'https://example.org/page' });
        expect(r?.headers['x-return-format']).toBe('markdown');
      },
      output: ['Jina read this page.'],
    },
  ],
  [
    'firecrawl (web_fetch)',
    {
      tool: 'web_fetch',
      use: 'deerflow.community.firecrawl.tools:web_fetch_tool',
      routes: {
        'POST /v2/scrape': {
          json: { success: true, data: { markdown: 'Scraped text.', metadata: { title: 'FT' } } },
        },
      },
      args: { url: 'https://example.org/a' },
      keyHeader: ['authorization', `Bearer ${KEY}`],
      request: ([r]) => expect(bodyOf(r)).toEqual({ url: 'https://example.org/a', formats: ['markdown'] }),
      output: ['# FT\n\nScraped text.'],
    },
  ],
  [
    'exa (web_fetch)',
    {
      tool: 'web_fetch',
      use: 'deerflow.community.exa.tools:web_fetch_tool',
      routes: { 'POST /contents': { json: { results: [{ title: 'ET', text: 'Exa page text.' }] } } },
      args: { url: 'https://example.org/b' },
      keyHeader: ['x-api-key', KEY],
      request: ([r]) => expect((bodyOf(r) as { urls: string[] }).urls).toEqual(['https://example.org/b']),
      output: ['# ET\n\nExa page text.'],
    },
  ],
  [
    'image_search (DeerFlow’s default, DuckDuckGo)',
    {
      tool: 'image_search',
      use: 'deerflow.community.image_search.tools:image_search_tool',
      routes: {
        'GET /': { text: '<script>vqd="4-1234567";</script>', headers: { 'content-type': 'text/html' } },
        'GET /i.js': {
          json: {
            results: [
              { title: 'Cat', image: 'https://img.example/cat.jpg', thumbnail: 'https://img.example/t.jpg' },
              { title: 'Inside', image: 'http://127.0.0.1/secret.png', thumbnail: 'http://10.0.0.1/t.png' },
            ],
          },
        },
      },
      args: { query: 'cat', size: 'Large' },
      request: ([page, json]) => {
        expect(page?.query.get('q')).toBe('cat');
        expect(json?.query.get('vqd')).toBe('4-1234567');
        expect(json?.query.get('f')).toContain('size:Large');
      },
      output: ['"image_url": "https://img.example/cat.jpg"', '"total_results": 1'],
    },
  ],
  [
    'serper (image_search)',
    {
      tool: 'image_search',
      use: 'deerflow.community.serper.tools:image_search_tool',
      routes: {
        'POST /images': {
          json: {
            images: [
              {
                title: 'Dog',
                imageUrl: 'https://img.example/dog.jpg',
                thumbnailUrl: 'https://img.example/d.jpg',
              },
            ],
          },
        },
      },
      args: { query: 'dog' },
      keyHeader: ['x-api-key', KEY],
      request: ([r]) => expect(bodyOf(r)).toEqual({ q: 'dog', num: 3 }),
      output: ['"image_url": "https://img.example/dog.jpg"', '"thumbnail_url": "https://img.example/d.jpg"'],
    },
  ],
  [
    'brave (image_search)',
    {
      tool: 'image_search',
      use: 'deerflow.community.brave.tools:image_search_tool',
      routes: {
        'GET /res/v1/images/search': {
          json: {
            results: [
              {
                title: 'Owl',
                url: 'https://src.example/owl',
                properties: { url: 'https://img.example/owl.jpg' },
                thumbnail: { src: 'https://img.example/o.jpg' },
              },
            ],
          },
        },
      },
      args: { query: 'owl' },
      keyHeader: ['x-subscription-token', KEY],
      request: ([r]) => expect(r?.query.get('q')).toBe('owl'),
      output: ['"image_url": "https://img.example/owl.jpg"', '"source_url": "https://src.example/owl"'],
    },
  ],
];

describe.each(cases)('%s', (_name, c) => {
  it('sends the provider its request shape and key header, and returns DeerFlow’s result text', async () => {
    fake.answer(c.routes);
    const result = await call({ name: c.tool, use: c.use, max_results: 3 }, c.args);
    expect(result.is_error).toBe(false);
    for (const text of c.output) expect(result.content).toContain(text);
    expect(result.content).not.toContain(KEY);
    c.request(fake.requests);
    if (c.keyHeader) {
      const [header, value] = c.keyHeader;
      expect(fake.requests[0]?.headers[header]).toBe(value);
    }
  });
});

describe('a web provider that fails', () => {
  const tavily = { name: 'web_search', use: 'tavily', api_key: '$MY_KEY' };

  it('reads the key from the variable api_key names, and refuses with the provider’s words, key masked', async () => {
    fake.answer({ 'POST /search': { status: 401, text: `invalid key ${KEY}` } });
    const result = await call(tavily, { query: 'q' });
    expect(result.is_error).toBe(true);
    expect(result.content).toBe('web_search: tavily answered HTTP 401: invalid key ***');
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('throws a transient error (429, 5xx) for the activity’s retry, without the key', async () => {
    fake.answer({ 'POST /search': { status: 503, text: `busy ${KEY}` } });
    const failed = call(tavily, { query: 'q' });
    await expect(failed).rejects.toThrow('tavily answered HTTP 503: busy ***');
  });

  it('says which key is missing rather than calling without one', async () => {
    const result = await call({ name: 'web_search', use: 'serper', api_key: '$UNSET_KEY' }, { query: 'q' });
    expect(result.content).toBe('{"error":"UNSET_KEY is not configured","query":"q"}');
    expect(fake.requests).toEqual([]);
  });

  it('cuts a result past max_chars, saying how much was left out', async () => {
    fake.answer({ 'POST /': { text: `START ${'x'.repeat(5000)} END` } });
    const result = await call(
      { name: 'web_fetch', use: 'jina_ai', max_chars: 1000 },
      { url: 'https://a.example/' },
    );
    expect(result.content.length).toBeLessThanOrEqual(1000);
    expect(result.content).toMatch(/^START x+\n\n\[… [\d,]+ characters omitted …\]\n\nx+ END$/);
  });

  it('hands a reader service no URL of this machine or a private network', async () => {
    const refused = await call(
      { name: 'web_fetch', use: 'jina_ai' },
      { url: 'http://169.254.169.254/latest/' },
    );
    expect(refused).toMatchObject({ is_error: true });
    expect(refused.content).toContain('169.254.169.254 is a private, loopback or link-local address');
    const local = await call({ name: 'web_fetch', use: 'jina_ai' }, { url: 'http://localhost:8080/' });
    expect(local.content).toContain('localhost names this machine');
    expect(fake.requests).toEqual([]);
  });

  it('tells the model a tool with no tools: entry is not configured', async () => {
    const result = await createToolActivities({ probes }).executeToolCall({
      call: { id: 'c', name: 'web_fetch', args: '{"url":"https://a.example/"}' },
      workspace: '/tmp',
      allowed_tools: ['web_fetch'],
      sandbox: DEFAULT_SANDBOX,
    });
    expect(result).toMatchObject({
      is_error: true,
      content: 'web_fetch is not configured on this worker (its config has no tools: entry named web_fetch)',
    });
  });
});
