/**
 * A worker on the offline model loads only what it runs (issue 29): LangChain, the OpenAI client and langsmith
 * wait for an `openai` model, LangGraph for a graph agent, the MCP SDK for an MCP server, the OpenTelemetry
 * SDK for tracing. A fresh Node process loads the worker's modules (`worker-main`, as `subagents worker`
 * does), starts tracing and MCP as the default config has them (off, none), builds the worker's activities,
 * warms the config's providers and makes one model call on its scripted model; then it lists what it required.
 */
import { execFileSync } from 'node:child_process';
import { join, sep } from 'node:path';
import { tempDir } from '../../support/subagent-input';

const distRoot = join(__dirname, '..', '..', '..');

/** Packages an offline worker has no use for, by the start of their name. */
const NOT_FOR_THE_OFFLINE_MODEL = [
  '@langchain/',
  'openai',
  'langsmith',
  '@modelcontextprotocol/',
  '@opentelemetry/sdk-',
];

/** Run in the fresh process: argv = [dist folder, payload folder]. Plain JS, as `node -e` takes it. */
const START_OFFLINE_WORKER = `
const { join } = require('node:path');
const [dist, payloads] = process.argv.slice(1);
const from = (path) => require(join(dist, path));
from('worker/worker-main.js');
const { createProjectActivities } = from('activities/index.js');
const { ModelProviders } = from('activities/model/index.js');
const { LocalDirBlobStore } = from('payloads/store.js');
const { defaultConfig } = from('contracts/config/index.js');
const { startTracing } = from('worker/tracing.js');
const { startWorkerMcp } = from('worker/mcp.js');
(async () => {
  const config = defaultConfig();
  if (startTracing(config.tracing) !== undefined) throw new Error('tracing is on by default');
  if ((await startWorkerMcp(config.mcp_servers, () => undefined)) !== undefined) throw new Error('MCP is on');
  const providers = new ModelProviders();
  createProjectActivities({
    store: new LocalDirBlobStore(payloads),
    admission: { settings: { subagents: config.subagent_runtime, runs: config.lead_runtime }, identity: 'test' },
    providers,
  });
  await providers.warmUp(config.models);
  const answer = await providers.call({
    model: config.models[0],
    agent_name: 'lead',
    messages: [{ role: 'user', content: 'Hello.' }],
    tools: [],
  });
  process.stdout.write(JSON.stringify({ answer: answer.content, modules: Object.keys(require.cache) }));
})().catch((err) => {
  process.stderr.write(String(err && err.stack));
  process.exit(1);
});
`;

/** The package a module file belongs to (`@scope/name` or `name`), or undefined for the project's own. */
function packageOf(path: string): string | undefined {
  const parts = path.split(sep);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return undefined;
  const name = parts[at + 1] ?? '';
  return name.startsWith('@') ? `${name}/${parts[at + 2] ?? ''}` : name;
}

test('a worker on the offline model loads no LangChain, OpenAI client, langsmith, MCP SDK or OpenTelemetry SDK', () => {
  const output = execFileSync(
    process.execPath,
    ['-e', START_OFFLINE_WORKER, distRoot, tempDir('offline-worker-payloads')],
    // The worker's modules load in 1–3 s on a busy machine.
    { encoding: 'utf8', timeout: 60_000, env: { ...process.env, NODE_OPTIONS: '' } },
  );
  const { answer, modules } = JSON.parse(output) as { answer: string; modules: string[] };
  expect(answer).not.toBe('');
  const packages = new Set(modules.map(packageOf).filter((name) => name !== undefined));
  // The listing sees the packages a worker does load.
  expect(packages).toContain('@temporalio/worker');
  const unwanted = [...packages]
    .filter((name) => NOT_FOR_THE_OFFLINE_MODEL.some((prefix) => name.startsWith(prefix)))
    .sort();
  expect(unwanted).toEqual([]);
});
