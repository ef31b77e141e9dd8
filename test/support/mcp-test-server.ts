/**
 * A small MCP server for the tests, over stdio or streamable HTTP (the official SDK's server side):
 *
 *   node mcp-test-server.js --stdio [--expect-secret-file F] [--pid-file F]
 *   node mcp-test-server.js --http [--port N] [--expect-secret-file F] [--pid-file F]   (prints `listening on N`)
 *   … [--extra-tools N]   (N more tools shaped like a business API's, for the deferred-tools benchmark)
 *
 * Over HTTP it serves streamable HTTP at /mcp and the older SSE transport at /sse (messages to /messages).
 *
 * Tools: `add` (read-only: a + b), `check_secret` (whether the secret arrived: env MCP_TEST_SECRET over stdio,
 * the `Authorization: Bearer …` header over HTTP, compared with the file's content; it never echoes it),
 * `sleep` (writes the server's pid to the pid file, then sleeps: the test kills it mid-call), `fail` (an
 * `isError` result), `picture` (text and an image), and `bad.name` (not usable as a tool name: left out).
 *
 * A long-running task toolset in DeerFlow's ordinary contract (answers in `structuredContent`), its tasks kept by
 * the server process (an HTTP server outlives the workers that call it): `submit_report` ({topic, seconds, ask?}:
 * a report that takes `seconds`, asking `ask` first when given), `get_report_status`, `cancel_report` and
 * `answer_report` ({task_id, input}), with `--task-tools`. `--task-log F` appends one JSON line per call to F
 * (the tests count submits and see cancels there).
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const { values } = parseArgs({
  options: {
    stdio: { type: 'boolean' },
    http: { type: 'boolean' },
    port: { type: 'string' },
    'expect-secret-file': { type: 'string' },
    'pid-file': { type: 'string' },
    'extra-tools': { type: 'string' },
    'task-tools': { type: 'boolean' },
    'task-log': { type: 'string' },
  },
});

const DOMAINS = ['crm', 'billing', 'tickets', 'calendar', 'inventory', 'docs', 'hr', 'analytics'];
const VERBS = ['list', 'get', 'create', 'update', 'archive'];
const NOUNS = ['account', 'invoice', 'contact', 'order', 'report'];

/**
 * Tool `i` of `--extra-tools`: a name, a two-sentence description and four documented parameters, about the
 * size of a typical SaaS MCP server's tool.
 */
function extraTool(i: number) {
  const domain = DOMAINS[i % DOMAINS.length];
  const verb = VERBS[Math.floor(i / DOMAINS.length) % VERBS.length];
  const noun = NOUNS[Math.floor(i / (DOMAINS.length * VERBS.length)) % NOUNS.length];
  return {
    name: `${domain}_${verb}_${noun}_${i}`,
    description:
      `${verb[0].toUpperCase()}${verb.slice(1)} ${noun} records in the ${domain} service. Returns the matching ` +
      `${noun}s as JSON with their ids, owners, timestamps and status; fails when the caller lacks access.`,
    inputSchema: {
      id: z
        .string()
        .optional()
        .describe(`The ${noun}'s id; omit it to work on every ${noun} the filter matches.`),
      filter: z.string().optional().describe(`A filter over ${noun} fields, e.g. "status:open owner:me".`),
      limit: z.number().int().min(1).max(100).optional().describe('How many records to return (default 20).'),
      include_archived: z.boolean().optional().describe(`Include archived ${noun}s (default false).`),
    },
  };
}

const expectedSecret = values['expect-secret-file']
  ? readFileSync(values['expect-secret-file'], 'utf8').trim()
  : undefined;

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

interface ReportTask {
  topic: string;
  seconds: number;
  /** The question still waiting for an answer. */
  ask?: string;
  answer?: string;
  /** When the report is done (ms), once nothing waits. */
  doneAt?: number;
  cancelled?: boolean;
}

/** The server process's tasks, by id. */
const tasks = new Map<string, ReportTask>();

function logTaskCall(entry: Record<string, unknown>): void {
  if (values['task-log']) appendFileSync(values['task-log'], `${JSON.stringify(entry)}\n`);
}

const structured = (value: Record<string, unknown>) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(value) }],
  structuredContent: value,
});

function reportStatus(taskId: string): Record<string, unknown> {
  const task = tasks.get(taskId);
  if (!task)
    return { task_id: taskId, status: 'failed', error_code: 'task_not_found', error: 'no such task' };
  if (task.cancelled) return { task_id: taskId, status: 'cancelled' };
  if (task.ask !== undefined)
    return { task_id: taskId, status: 'input_required', input_required: { message: task.ask } };
  if (Date.now() < (task.doneAt ?? 0)) return { task_id: taskId, status: 'running' };
  const answered = task.answer === undefined ? '' : ` (${task.answer})`;
  return { task_id: taskId, status: 'completed', result: { report: `Report on ${task.topic}${answered}` } };
}

function registerTaskTools(server: McpServer): void {
  server.registerTool(
    'submit_report',
    {
      description: 'Starts writing a report; it takes a while.',
      inputSchema: { topic: z.string(), seconds: z.number(), ask: z.string().optional() },
    },
    ({ topic, seconds, ask }) => {
      const taskId = `report-${randomUUID()}`;
      tasks.set(taskId, {
        topic,
        seconds,
        ...(ask !== undefined ? { ask } : { doneAt: Date.now() + seconds * 1000 }),
      });
      logTaskCall({ call: 'submit', task_id: taskId, topic });
      return structured({ task_id: taskId, status: 'running' });
    },
  );
  server.registerTool(
    'get_report_status',
    { description: "A report's status.", inputSchema: { task_id: z.string() } },
    ({ task_id: taskId }) => {
      const status = reportStatus(taskId);
      logTaskCall({ call: 'status', task_id: taskId, status: status.status });
      return structured(status);
    },
  );
  server.registerTool(
    'cancel_report',
    { description: 'Cancels a report.', inputSchema: { task_id: z.string() } },
    ({ task_id: taskId }) => {
      const task = tasks.get(taskId);
      if (task && reportStatus(taskId).status !== 'completed') task.cancelled = true;
      logTaskCall({ call: 'cancel', task_id: taskId });
      return structured({
        task_id: taskId,
        status: reportStatus(taskId).status === 'completed' ? 'completed' : 'cancelled',
      });
    },
  );
  server.registerTool(
    'answer_report',
    { description: "Answers a report's question.", inputSchema: { task_id: z.string(), input: z.string() } },
    ({ task_id: taskId, input }) => {
      const task = tasks.get(taskId);
      logTaskCall({ call: 'answer', task_id: taskId, input });
      if (!task || task.ask === undefined) return { ...text('no question is waiting'), isError: true };
      task.ask = undefined;
      task.answer = input;
      task.doneAt = Date.now() + task.seconds * 1000;
      return text('answered');
    },
  );
}

/** A server whose `check_secret` compares `secret()` (what arrived) with the expected one. */
function buildServer(secret: () => string | undefined): McpServer {
  const server = new McpServer({ name: 'mcp-test-server', version: '1.0.0' });
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers.',
      inputSchema: { a: z.number(), b: z.number() },
      annotations: { readOnlyHint: true },
    },
    ({ a, b }) => text(`sum: ${a + b}`),
  );
  server.registerTool('check_secret', { description: 'Says whether the expected secret arrived.' }, () =>
    text(`secret arrived: ${expectedSecret !== undefined && secret() === expectedSecret ? 'yes' : 'no'}`),
  );
  server.registerTool(
    'sleep',
    { description: 'Sleeps for a while.', inputSchema: { seconds: z.number() } },
    async ({ seconds }) => {
      if (values['pid-file']) writeFileSync(values['pid-file'], String(process.pid));
      await sleep(seconds * 1000);
      return text(`slept ${seconds} s`);
    },
  );
  server.registerTool('fail', { description: 'Always fails.' }, () => ({
    content: [{ type: 'text' as const, text: 'it broke' }],
    isError: true,
  }));
  server.registerTool('picture', { description: 'A caption and a picture.' }, () => ({
    content: [
      { type: 'text' as const, text: 'a red dot' },
      { type: 'image' as const, data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ],
  }));
  server.registerTool('bad.name', { description: 'A name providers refuse.' }, () => text('unreachable'));
  if (values['task-tools']) registerTaskTools(server);
  for (let i = 0; i < Number(values['extra-tools'] ?? 0); i++) {
    const { name, description, inputSchema } = extraTool(i);
    server.registerTool(name, { description, inputSchema }, () => text(`${name}: no records`));
  }
  return server;
}

function bearer(request: IncomingMessage): string | undefined {
  const header = request.headers.authorization;
  return header?.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}

async function main(): Promise<void> {
  if (values.stdio) {
    await buildServer(() => process.env.MCP_TEST_SECRET).connect(new StdioServerTransport());
    return;
  }
  if (!values.http) throw new Error('pass --stdio or --http');
  if (values['pid-file']) writeFileSync(values['pid-file'], String(process.pid));
  // The older SSE transport (DeerFlow's `type: sse`): a stream per client, its messages posted beside it.
  const sseSessions = new Map<string, SSEServerTransport>();
  // Stateless: a server and a transport per request, as the SDK's stateless example does.
  const http = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/sse') {
      const transport = new SSEServerTransport('/messages', response);
      sseSessions.set(transport.sessionId, transport);
      response.on('close', () => sseSessions.delete(transport.sessionId));
      void buildServer(() => bearer(request)).connect(transport);
      return;
    }
    if (request.method === 'POST' && request.url?.startsWith('/messages')) {
      const sessionId = new URL(request.url, 'http://localhost').searchParams.get('sessionId') ?? '';
      const transport = sseSessions.get(sessionId);
      if (transport) void transport.handlePostMessage(request, response);
      else response.writeHead(404).end();
      return;
    }
    if (request.url !== '/mcp') {
      response.writeHead(404).end();
      return;
    }
    const server = buildServer(() => bearer(request));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => response.writeHead(500).end());
  });
  http.listen(Number(values.port ?? 0), '127.0.0.1', () => {
    const address = http.address();
    process.stdout.write(`listening on ${typeof address === 'object' && address ? address.port : '?'}\n`);
  });
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
