/**
 * A worker's MCP servers outside a run: a server down at start comes up and is listed on SIGHUP, and
 * `subagents mcp list` shows what each configured server offers.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mcpCallInfo, mcpToolSpecs } from '../../../activities/mcp';
import { parseConfig } from '../../../contracts/config';
import { startWorkerMcp } from '../../../worker/mcp';
import { runCli } from '../../support/cli-process';

const serverScript = require.resolve('../../support/mcp-test-server');

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

async function until(what: string, predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let httpServer: ChildProcess | undefined;
afterEach(async () => {
  if (httpServer && httpServer.exitCode === null && httpServer.signalCode === null) {
    httpServer.kill('SIGKILL');
    await once(httpServer, 'exit');
  }
});

it('lists a server that was down at start once it is up and the worker gets SIGHUP', async () => {
  const port = await freePort();
  const { config } = parseConfig({ mcp_servers: { later: { url: `http://127.0.0.1:${port}/mcp` } } });
  const lines: string[] = [];
  const mcp = await startWorkerMcp(config.mcp_servers, (line) => lines.push(line));
  try {
    expect(lines).toEqual([
      'MCP server later (http): down (it refused the connection); tried again later and on SIGHUP',
    ]);
    httpServer = spawn(process.execPath, [serverScript, '--http', '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await once(httpServer.stdout!, 'data');
    process.emit('SIGHUP', 'SIGHUP');
    await until('the refreshed listing', () => lines.length === 3);
    expect(lines.slice(1)).toEqual([
      "SIGHUP: listing the MCP servers' tools again",
      expect.stringMatching(/^MCP server later \(http\): 5 tools: later__add, later__check_secret, /),
    ]);
    // What the model is shown: the server's JSON schema, under the tool's full name.
    expect(mcpToolSpecs(mcp?.catalog, { allow: ['later__add'], deny: [] })).toEqual([
      {
        name: 'later__add',
        description: 'Adds two numbers.',
        parameters: expect.objectContaining({
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        }),
      },
    ]);
    expect(
      mcpCallInfo(mcp?.catalog, { allow: ['later__*'], deny: [] }, [
        { id: '1', name: 'later__add', args: '{}' },
      ]),
    ).toEqual({
      later__add: { read_only: true, timeout_seconds: 60 },
    });
  } finally {
    await mcp?.close();
  }
}, 60_000);

it("offers a task toolset's submit tool alone, and says so at start", async () => {
  const { config } = parseConfig({
    mcp_servers: {
      reports: {
        command: process.execPath,
        args: [serverScript, '--stdio', '--task-tools'],
        task_toolsets: [
          {
            name: 'report-generation',
            submit_tool: 'submit_report',
            status_tool: 'get_report_status',
            cancel_tool: 'cancel_report',
          },
        ],
      },
    },
    mcp_tasks: { enabled: true, poll_interval_seconds: 2 },
  });
  const lines: string[] = [];
  const mcp = await startWorkerMcp(
    config.mcp_servers,
    (line) => lines.push(line),
    process.env,
    config.mcp_tasks,
  );
  try {
    expect(lines).toEqual([
      'MCP server reports (stdio): 7 tools: reports__add, reports__check_secret, reports__sleep, reports__fail, ' +
        'reports__picture, reports__submit_report, reports__answer_report; task toolsets: report-generation ' +
        '(submit_report); left out (names not usable as tool names): bad.name',
    ]);
    const names = mcpToolSpecs(mcp?.catalog, { allow: ['*'], deny: [] }).map((spec) => spec.name);
    expect(names).toContain('reports__submit_report');
    expect(names).not.toContain('reports__get_report_status');
    expect(names).not.toContain('reports__cancel_report');
    const info = mcpCallInfo(mcp?.catalog, { allow: ['*'], deny: [] }, [
      { id: 'c1', name: 'reports__submit_report', args: '{"topic":"x","seconds":1}' },
    ]);
    expect(info?.reports__submit_report?.task).toMatchObject({
      server: 'reports',
      toolset: { name: 'report-generation', status_tool: 'get_report_status' },
      polling: { poll_interval_seconds: 2, max_poll_backoff_seconds: 300 },
    });
  } finally {
    await mcp?.close();
  }
});

it("connects to a server over DeerFlow's older SSE transport, headers included", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-sse-'));
  writeFileSync(join(dir, 'secret'), 'sse-secret');
  httpServer = spawn(
    process.execPath,
    [serverScript, '--http', '--expect-secret-file', join(dir, 'secret')],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [chunk] = (await once(httpServer.stdout!, 'data')) as [Buffer];
  const port = /listening on (\d+)/.exec(chunk.toString())?.[1];
  const { config } = parseConfig({
    mcp_servers: {
      old: {
        type: 'sse',
        url: `http://127.0.0.1:${port}/sse`,
        headers: { Authorization: 'Bearer ${SSE_TOKEN}' },
      },
    },
  });
  const mcp = await startWorkerMcp(config.mcp_servers, () => undefined, { SSE_TOKEN: 'sse-secret' });
  try {
    const server = mcp?.catalog.server('old');
    expect(server?.state).toBe('connected');
    const signal = new AbortController().signal;
    const sum = await server?.call('add', { a: 2, b: 2 }, { signal, timeoutMs: 10_000 });
    const secret = await server?.call('check_secret', {}, { signal, timeoutMs: 10_000 });
    expect([sum?.content, secret?.content]).toEqual([
      [{ type: 'text', text: 'sum: 4' }],
      [{ type: 'text', text: 'secret arrived: yes' }],
    ]);
  } finally {
    await mcp?.close();
  }
}, 60_000);

it('`subagents mcp list` prints each server with its tools, and exits 1 when one is down', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-list-'));
  const file = join(dir, 'config.yaml');
  const port = await freePort();
  writeFileSync(
    file,
    [
      'mcp_servers:',
      '  local:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(serverScript)}, --stdio]`,
      '  gone:',
      `    url: http://127.0.0.1:${port}/mcp`,
      '  off:',
      '    enabled: false',
      '    command: nothing',
      '',
    ].join('\n'),
  );
  const listed = await runCli(['mcp', 'list', '--config', file], process.env);
  expect(listed.stdout.split('\n')).toEqual([
    'local (stdio): connected',
    '  local__add [read-only]: Adds two numbers.',
    '  local__check_secret: Says whether the expected secret arrived.',
    '  local__sleep: Sleeps for a while.',
    '  local__fail: Always fails.',
    '  local__picture: A caption and a picture.',
    '  left out (names not usable as tool names): bad.name',
    'gone (http): down (it refused the connection)',
    'off (stdio): disabled (enabled: false)',
    '',
  ]);
  expect(listed.code).toBe(1);
}, 60_000);
