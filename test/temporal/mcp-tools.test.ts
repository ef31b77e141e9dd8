/**
 * MCP tools against the real server, with the project's own MCP server (test/support/mcp-test-server.ts) over
 * stdio and over streamable HTTP: agents call its tools and get their results, a tool an agent's filter denies
 * is refused at execution even when the model calls it, a server that is down or killed mid-call becomes an
 * error tool message while the run goes on, and the secrets sent to the servers never enter workflow history.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { parseConfig } from '../../contracts/config';
import { startWorkerMcp, type WorkerMcp } from '../../worker/mcp';
import { projectCodec } from '../../payloads/data-converter';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { subagentWorkflow } from '../../workflows/subagent';
import { uniqueTaskQueue, useTestClient, waitFor, withProjectWorker } from '../harness/temporal';
import { leadInput, subagentInput, tempDir, writeScript } from '../support/subagent-input';

type IPayload = temporal.api.common.v1.IPayload;

const testClient = useTestClient();
const serverScript = require.resolve('../support/mcp-test-server');
const SECRET = `sk-test-${randomUUID()}`;
const dir = tempDir('mcp-tools');
const secretFile = join(dir, 'expected-secret');
const pidFile = join(dir, 'stdio-server.pid');

let httpServer: ChildProcess | undefined;
let mcp: WorkerMcp | undefined;
/** The project worker, calling this file's MCP servers. */
const withMcpWorker = <T>(taskQueue: string, body: () => Promise<T>): Promise<T> =>
  withProjectWorker(taskQueue, body, { ...(mcp && { mcpCatalog: mcp.catalog }) });
const workerLines: string[] = [];
let mcpConfig: Record<string, unknown> = {};

/** The HTTP test server, once it listens: its port. */
async function startHttpServer(port = 0): Promise<number> {
  httpServer = spawn(
    process.execPath,
    [serverScript, '--http', '--port', String(port), '--expect-secret-file', secretFile],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  httpServer.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await waitFor('the HTTP MCP test server', () => /listening on \d+/.test(out), 20_000);
  return Number(/listening on (\d+)/.exec(out)?.[1]);
}

/** A port nothing listens on (one the system just gave out and took back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

beforeAll(async () => {
  writeFileSync(secretFile, SECRET);
  const port = await startHttpServer();
  mcpConfig = {
    mcp_servers: {
      local: {
        command: process.execPath,
        args: [serverScript, '--stdio', '--expect-secret-file', secretFile, '--pid-file', pidFile],
        env: { MCP_TEST_SECRET: '$MCP_TEST_STDIO_SECRET' },
        tool_timeout_seconds: 20,
      },
      remote: {
        type: 'http',
        url: `http://127.0.0.1:${port}/mcp`,
        headers: { Authorization: 'Bearer ${MCP_TEST_HTTP_SECRET}' },
      },
      // Nothing listens there: down at start, and every call to it is an error message.
      gone: { url: `http://127.0.0.1:${await closedPort()}/mcp` },
      slow: { command: process.execPath, args: [serverScript, '--stdio'], tool_timeout_seconds: 1 },
    },
    subagents: {
      custom_agents: {
        limited: {
          description: 'May add numbers locally, nothing else of MCP.',
          system_prompt: 'You add.',
          tools: { allow: ['ls', 'local__add'] },
        },
      },
    },
  };
  // The secrets live in the worker's environment only (here: the one its MCP connections read).
  const env = { PATH: process.env.PATH, MCP_TEST_STDIO_SECRET: SECRET, MCP_TEST_HTTP_SECRET: SECRET };
  mcp = await startWorkerMcp(
    parseConfig(mcpConfig).config.mcp_servers,
    (line) => workerLines.push(line),
    env,
  );
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  if (httpServer && httpServer.exitCode === null && httpServer.signalCode === null) {
    httpServer.kill('SIGKILL');
    await once(httpServer, 'exit');
  }
});

/** Every payload of the workflow's history decoded (claim-checked ones fetched), with the events' JSON. */
async function historyText(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  const payloads: IPayload[] = [];
  const walk = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return;
    if ('data' in value && 'metadata' in value) payloads.push(value as IPayload);
    Object.values(value).forEach(walk);
  };
  walk(history);
  const decoded = await projectCodec().decode(payloads);
  return [JSON.stringify(history), ...decoded.map((p) => Buffer.from(p.data ?? []).toString('utf8'))].join(
    '\n',
  );
}

const call = (name: string, id: string, args: Record<string, unknown> = {}) => ({ name, id, args });
const task = (id: string, subagentType: string) =>
  call('task', id, { description: `Part ${id}`, prompt: `Work on part ${id}.`, subagent_type: subagentType });

it('says at worker start which servers answered and which are down, with their tools', () => {
  expect(workerLines).toEqual([
    'MCP server local (stdio): 5 tools: local__add, local__check_secret, local__sleep, local__fail, local__picture; ' +
      'left out (names not usable as tool names): bad.name',
    'MCP server remote (http): 5 tools: remote__add, remote__check_secret, remote__sleep, remote__fail, ' +
      'remote__picture; left out (names not usable as tool names): bad.name',
    'MCP server gone (http): down (it refused the connection); tried again later and on SIGHUP',
    expect.stringMatching(/^MCP server slow \(stdio\): 5 tools: slow__add, /),
  ]);
});

it('runs MCP tools over stdio and HTTP for the lead and its subagents, refuses denied ones, keeps secrets out of history', async () => {
  const scriptDir = join(dir, 'run');
  mkdirSync(scriptDir, { recursive: true });
  const workspace = join(scriptDir, 'workspace');
  mkdirSync(workspace);
  const script: ModelScriptFileInput = {
    scripts: [
      {
        agent: 'lead',
        turns: [
          {
            tool_calls: [
              task('t1', 'general-purpose'),
              task('t2', 'limited'),
              task('t3', 'bash'),
              call('remote__add', 'l1', { a: 1, b: 1 }),
            ],
          },
          {
            content:
              'T1: {{tool_result:t1}}\nT2: {{tool_result:t2}}\nT3: {{tool_result:t3}}\nlead: {{tool_result:l1}}',
          },
        ],
      },
      {
        agent: 'general-purpose',
        turns: [
          {
            tool_calls: [
              call('local__add', 'g1', { a: 2, b: 3 }),
              call('remote__add', 'g2', { a: 4, b: 5 }),
              call('local__check_secret', 'g3'),
              call('remote__check_secret', 'g4'),
              call('local__picture', 'g5'),
              call('local__fail', 'g6'),
              call('gone__add', 'g7', { a: 1, b: 1 }),
            ],
          },
          {
            content: [1, 2, 3, 4, 5, 6, 7].map((i) => `g${i}=<{{tool_result:g${i}}}>`).join('\n'),
          },
        ],
      },
      {
        agent: 'limited',
        turns: [
          {
            tool_calls: [
              call('local__check_secret', 'd1'),
              call('local__add', 'd2', { a: 10, b: 5 }),
              call('remote__add', 'd3', { a: 1, b: 2 }),
            ],
          },
          { content: 'd1=<{{tool_result:d1}}>\nd2=<{{tool_result:d2}}>\nd3=<{{tool_result:d3}}>' },
        ],
      },
      {
        agent: 'bash',
        turns: [
          { tool_calls: [call('local__add', 'b1', { a: 1, b: 1 })] },
          { content: 'b1=<{{tool_result:b1}}>' },
        ],
      },
    ],
  };
  const input = leadInput({ workspace, scriptFile: writeScript(scriptDir, script), config: mcpConfig });
  expect(input.mcp).toEqual({ allow: ['*'], deny: [] });
  expect(input.agents.find((agent) => agent.name === 'bash')?.mcp).toBeUndefined();
  expect(input.agents.find((agent) => agent.name === 'limited')?.mcp).toEqual({
    allow: ['local__add'],
    deny: [],
  });

  const taskQueue = uniqueTaskQueue('mcp-tools');
  const { result, texts } = await withMcpWorker(taskQueue, async () => {
    const handle = await testClient().workflow.start(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-lead`,
      args: [input],
    });
    const result = await handle.result();
    const children = ['t1', 't2', 't3'].map((id) =>
      testClient().workflow.getHandle(`${taskQueue}-lead/task/${id}`),
    );
    return { result, texts: await Promise.all([handle, ...children].map(historyText)) };
  });

  expect(result.status).toBe('completed');
  const out = result.final_output;
  // The subagent, over stdio and HTTP: results, secrets that arrived, non-text content, errors.
  expect(out).toContain('g1=<sum: 5>');
  expect(out).toContain('g2=<sum: 9>');
  expect(out).toContain('g3=<secret arrived: yes>');
  expect(out).toContain('g4=<secret arrived: yes>');
  expect(out).toContain('g5=<a red dot\n[1 non-text item left out (image): only text is shown]>');
  expect(out).toContain('g6=<it broke>');
  expect(out).toContain(
    'g7=<MCP server gone is unavailable (it refused the connection), so "gone__add" did not run.>',
  );
  // Denied by the agent's filter, though the model called them: refused by the activity.
  expect(out).toContain(
    'd1=<Tool "local__check_secret" is not available to this agent. Available MCP tools: local__add.>',
  );
  expect(out).toContain('d2=<sum: 15>');
  expect(out).toContain('d3=<Tool "remote__add" is not available to this agent.');
  // The bash agent gets no MCP tool: the call is an unknown tool.
  expect(out).toContain('b1=<Unknown tool "local__add"');
  expect(out).toContain('lead: sum: 2');

  // Secrets stay in the worker: no history of the run holds them (decoded payloads included).
  const all = texts.join('\n');
  expect(all).toContain('secret arrived: yes');
  expect(all).not.toContain(SECRET);
  expect(all).not.toContain(readFileSync(secretFile, 'utf8'));
}, 120_000);

it('turns a server killed mid-call into an error message; the run goes on and the server is started again', async () => {
  const scriptDir = join(dir, 'killed');
  mkdirSync(scriptDir, { recursive: true });
  const workspace = join(scriptDir, 'workspace');
  mkdirSync(workspace);
  const script: ModelScriptFileInput = {
    scripts: [
      {
        turns: [
          { tool_calls: [call('local__sleep', 's1', { seconds: 60 })] },
          {
            tool_calls: [call('local__add', 's2', { a: 1, b: 2 }), call('slow__sleep', 's3', { seconds: 5 })],
          },
          { content: 's1=<{{tool_result:s1}}>\ns2=<{{tool_result:s2}}>\ns3=<{{tool_result:s3}}>' },
        ],
      },
    ],
  };
  const input = subagentInput({ workspace, scriptFile: writeScript(scriptDir, script), config: mcpConfig });
  const taskQueue = uniqueTaskQueue('mcp-killed');
  const result = await withMcpWorker(taskQueue, async () => {
    const handle = await testClient().workflow.start(subagentWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-subagent`,
      args: [input],
    });
    await waitFor('the stdio server to start sleeping', () => existsSync(pidFile), 30_000);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    process.kill(pid, 'SIGKILL');
    return handle.result();
  });

  expect(result.status).toBe('completed');
  expect(result.result).toContain(
    's1=<MCP server local closed the connection during "local__sleep" (it may have crashed). It may or may not have run',
  );
  expect(result.result).toContain('s2=<sum: 3>');
  expect(workerLines).toContainEqual(
    'MCP server local (stdio): down (the connection closed); tried again later and on SIGHUP',
  );
  expect(result.result).toContain(
    's3=<Tool "slow__sleep" timed out after 1 s (MCP server slow\'s tool_timeout_seconds). It may or may not have run',
  );
}, 120_000);

it('retries a read-only tool while its server is down, and runs any other tool at most once', async () => {
  const scriptDir = join(dir, 'restarted');
  mkdirSync(scriptDir, { recursive: true });
  const workspace = join(scriptDir, 'workspace');
  mkdirSync(workspace);
  const script: ModelScriptFileInput = {
    scripts: [
      {
        turns: [
          { tool_calls: [call('remote__add', 'r1', { a: 20, b: 22 }), call('remote__check_secret', 'r2')] },
          { content: 'r1=<{{tool_result:r1}}>\nr2=<{{tool_result:r2}}>' },
        ],
      },
    ],
  };
  const input = subagentInput({ workspace, scriptFile: writeScript(scriptDir, script), config: mcpConfig });
  const remote = (mcpConfig.mcp_servers as Record<string, { url: string }>).remote;
  const port = Number(new URL(remote.url).port);
  httpServer?.kill('SIGKILL');
  if (httpServer) await once(httpServer, 'exit');
  const taskQueue = uniqueTaskQueue('mcp-restarted');
  const { result, attempts } = await withMcpWorker(taskQueue, async () => {
    const handle = await testClient().workflow.start(subagentWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-subagent`,
      args: [input],
    });
    // The read-only call failed once (its server refused the connection) and waits for its next attempt.
    await waitFor('a retried MCP call', async () =>
      ((await handle.describe()).raw.pendingActivities ?? []).some((activity) => (activity.attempt ?? 0) > 1),
    );
    await startHttpServer(port);
    const result = await handle.result();
    const events = (await handle.fetchHistory()).events ?? [];
    return { result, attempts: events.flatMap((e) => e.activityTaskStartedEventAttributes?.attempt ?? []) };
  });

  expect(result.status).toBe('completed');
  expect(result.result).toContain('r1=<sum: 42>');
  expect(result.result).toContain(
    'r2=<MCP server remote is unavailable (it refused the connection), so "remote__check_secret" did not run.>',
  );
  expect(Math.max(...attempts)).toBeGreaterThan(1);
}, 120_000);
