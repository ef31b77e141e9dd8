/**
 * An embedded run (`subagents run`, its own dev server and worker) with DeerFlow's default `tools:` list, its web
 * entries pointed at a local fake of DuckDuckGo, Jina's reader and DuckDuckGo images by `base_url`. The lead
 * delegates to general-purpose, which searches, fetches and greps the workspace in one response, and the answer
 * quotes what each tool returned. The fake model checks which tools each agent was offered; the Jina key reaches
 * the fake's header and nothing the run prints.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { LeadRunResult } from '../../contracts/lead';
import { cliEnv, runCli } from '../support/cli-process';
import { FakeOpenAI } from '../support/fake-openai';
import { FakeWebApi } from '../support/fake-web-api';
import { tempDir } from '../support/subagent-input';
import { DEERFLOW_DEFAULT_TOOLS } from '../support/deerflow-tools';

const JINA_KEY = 'jina-e2e-key-4242';
const PAGE_URL = 'https://docs.example/durable';

const DDG_PAGE = `<html><body><div class="result">
<a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=${encodeURIComponent(PAGE_URL)}">Durable execution</a>
<a class="result__snippet">Durable execution survives worker crashes.</a></div></body></html>`;

let web: FakeWebApi;
let model: FakeOpenAI;
const offered: Record<string, string[]> = {};

beforeAll(async () => {
  web = await FakeWebApi.start({
    'POST /html/': { text: DDG_PAGE, headers: { 'content-type': 'text/html' } },
    'POST /': { text: 'Histories are replayed deterministically, so no call runs twice.' },
  });
  model = await FakeOpenAI.start({
    respond: (_body, _index, view) => {
      const isLead = view.tools.includes('task');
      offered[isLead ? 'lead' : 'subagent'] = view.tools;
      if (isLead) {
        if (view.tool_results.length === 0) {
          return {
            tool_calls: [
              {
                name: 'task',
                id: 'call_research',
                args: {
                  description: 'Research durable execution',
                  prompt:
                    'Search the web for durable execution, read the top page, and find the deadline in the notes.',
                  subagent_type: 'general-purpose',
                },
              },
            ],
          };
        }
        return { content: `Report: ${view.tool_results[0] ?? ''}` };
      }
      if (view.tool_results.length === 0) {
        return {
          tool_calls: [
            { name: 'web_search', id: 'call_search', args: { query: 'durable execution' } },
            { name: 'web_fetch', id: 'call_fetch', args: { url: PAGE_URL } },
            {
              name: 'grep',
              id: 'call_grep',
              args: { pattern: 'deadline', description: 'find the deadline' },
            },
          ],
        };
      }
      const [search, page, grep] = view.tool_results;
      const snippet = /"content": "([^"]*)"/.exec(search ?? '')?.[1] ?? 'no snippet';
      return { content: `Search: ${snippet} Page: ${page ?? ''} Notes: ${grep?.split('\n')[1] ?? ''}` };
    },
  });
});
afterAll(async () => {
  await Promise.all([web.close(), model.close()]);
});

it('runs a subagent that searches, fetches and greps with DeerFlow’s default tools, its answer quoting them', async () => {
  const dir = tempDir('cli-web-tools');
  const workspace = join(dir, 'ws');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'notes.md'), 'Launch notes\nThe deadline is 2026-12-24.\n');
  const tools = (DEERFLOW_DEFAULT_TOOLS.tools as Record<string, unknown>[]).map((entry) =>
    String(entry.name).includes('search') || entry.name === 'web_fetch'
      ? { ...entry, base_url: web.url }
      : entry,
  );
  const config = join(dir, 'config.yaml');
  writeFileSync(config, stringify({ ...model.modelsConfig(), ...DEERFLOW_DEFAULT_TOOLS, tools }));

  const run = await runCli(
    ['run', '--json', '--config', config, '--workspace', workspace, 'Research durable execution.'],
    cliEnv({ JINA_API_KEY: JINA_KEY, OPENAI_API_KEY: 'sk-fake' }),
  );
  expect(run.stderr).not.toMatch(/unexpected error/);
  expect(run.code).toBe(0);
  const result = JSON.parse(run.stdout) as LeadRunResult;
  expect(result.status).toBe('completed');
  expect(result.final_output).toContain('Search: Durable execution survives worker crashes.');
  expect(result.final_output).toContain(
    'Page: Histories are replayed deterministically, so no call runs twice.',
  );
  expect(result.final_output).toContain('Notes: notes.md:2: The deadline is 2026-12-24.');

  const every = [
    'bash',
    'ls',
    'read_file',
    'write_file',
    'str_replace',
    'glob',
    'grep',
    'web_search',
    'web_fetch',
    'image_search',
  ];
  expect(offered.subagent).toEqual(every);
  expect(offered.lead).toEqual(expect.arrayContaining([...every, 'task']));

  // The calls of one response run at once: found by route, not by order.
  const search = web.requests.find((request) => request.path === '/html/');
  const fetch = web.requests.find((request) => request.path === '/');
  expect(new URLSearchParams(search?.body).get('q')).toBe('durable execution');
  expect(JSON.parse(fetch?.body ?? '{}')).toEqual({ url: PAGE_URL });
  expect(fetch?.headers.authorization).toBe(`Bearer ${JINA_KEY}`);
  expect(run.stdout).not.toContain(JINA_KEY);
  expect(run.stderr).not.toContain(JINA_KEY);
});
