/**
 * Deferred MCP tools (`tool_search.enabled`) against the real server, the project's MCP test server over stdio
 * and the `openai` provider on a local fake endpoint, which records every request as a provider would get it:
 * the first request names the MCP tools in the one system message and carries no MCP schema; `tool_search`
 * with `select:` promotes a tool, whose schema the next request carries and whose call then runs; a tool never
 * promoted is refused at execution; a subagent starts with nothing promoted, and its step log names what its
 * own search promoted.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeChatMessage, FakeChatRequest, FakeReply } from '../support/fake-openai';
import { FakeOpenAI } from '../support/fake-openai';
import { leadInput, tempDir } from '../support/subagent-input';
import { closedSubagentSteps } from '../../client/subagent-steps';
import { parseConfig } from '../../contracts/config';
import { notPromotedText } from '../../contracts/tool-search';
import { startWorkerMcp, type WorkerMcp } from '../../worker/mcp';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();
const serverScript = require.resolve('../support/mcp-test-server');
const CHILD_PROMPT = 'CHILD TASK: add two numbers with the local server.';

const mcpServers = { local: { command: process.execPath, args: [serverScript, '--stdio'] } };
let mcp: WorkerMcp | undefined;
/** The project worker, calling this file's MCP servers. */
const withMcpWorker = <T>(taskQueue: string, body: () => Promise<T>): Promise<T> =>
  withProjectWorker(taskQueue, body, { ...(mcp && { mcpCatalog: mcp.catalog }) });
let fake: FakeOpenAI | undefined;

beforeAll(async () => {
  mcp = await startWorkerMcp(parseConfig({ mcp_servers: mcpServers }).config.mcp_servers, () => undefined, {
    PATH: process.env.PATH,
  });
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await fake?.close();
});

const call = (name: string, id: string, args: Record<string, unknown>) => ({ name, id, args });
const isChild = (request: FakeChatRequest) =>
  request.messages.some((m) => m.role === 'user' && String(m.content).includes(CHILD_PROMPT));
const turnOf = (request: FakeChatRequest) => request.messages.filter((m) => m.role === 'assistant').length;
const toolNames = (request: FakeChatRequest) => (request.tools ?? []).map((tool) => tool.function.name);
const toolResult = (request: FakeChatRequest, id: string): string => {
  const message = request.messages.find((m: FakeChatMessage) => m.role === 'tool' && m.tool_call_id === id);
  if (!message) throw new Error(`no result for ${id} in the request`);
  return String(message.content);
};

/** The lead: searches and calls a tool never promoted, then calls the promoted one and delegates. */
function leadReply(turn: number): FakeReply {
  if (turn === 0)
    return {
      tool_calls: [
        call('tool_search', 's1', { query: 'select:local__add' }),
        call('local__sleep', 'n1', { seconds: 1 }),
      ],
    };
  if (turn === 1)
    return {
      tool_calls: [
        call('local__add', 'a1', { a: 2, b: 3 }),
        call('task', 't1', {
          description: 'Add numbers',
          prompt: CHILD_PROMPT,
          subagent_type: 'general-purpose',
        }),
      ],
    };
  return { content: 'All done.' };
}

/** The child: calls the lead's promoted tool (refused: nothing promoted here), searches, calls it again. */
function childReply(turn: number): FakeReply {
  if (turn === 0) return { tool_calls: [call('local__add', 'c1', { a: 1, b: 1 })] };
  if (turn === 1) return { tool_calls: [call('tool_search', 'c2', { query: '+local add' })] };
  if (turn === 2) return { tool_calls: [call('local__add', 'c3', { a: 20, b: 22 })] };
  return { content: 'Child done.' };
}

it('sends MCP tools by name until tool_search promotes them, per task run, and refuses those never promoted', async () => {
  fake = await FakeOpenAI.start({
    respond: (request) => (isChild(request) ? childReply(turnOf(request)) : leadReply(turnOf(request))),
  });
  const dir = tempDir('mcp-tool-search');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const input = leadInput({
    workspace,
    config: {
      ...fake.modelsConfig(),
      mcp_servers: mcpServers,
      tool_search: { enabled: true },
    },
  });
  expect(input.mcp).toEqual({ allow: ['*'], deny: [], deferred: true });

  const taskQueue = uniqueTaskQueue('mcp-tool-search');
  const workflowId = `${taskQueue}-lead`;
  const { result, childSteps } = await withMcpWorker(taskQueue, async () => {
    const result = await testClient().workflow.execute(leadRunWorkflow, {
      taskQueue,
      workflowId,
      args: [input],
    });
    const child = testClient().workflow.getHandle(`${workflowId}/task/t1`);
    return { result, childSteps: await closedSubagentSteps(testClient(), child) };
  });
  expect(result.status).toBe('completed');
  expect(result.final_output).toBe('All done.');

  const requests = fake.chatRequests;
  const lead = requests.filter((request) => !isChild(request));
  const child = requests.filter(isChild);
  expect(lead).toHaveLength(3);
  expect(child).toHaveLength(4);

  // First request: one system message, first, naming every MCP tool; tool_search, but no MCP schema.
  const [first, second, third] = lead;
  const systems = first.messages.filter((m) => m.role === 'system');
  expect(systems).toHaveLength(1);
  expect(first.messages[0].role).toBe('system');
  expect(String(systems[0].content)).toContain(
    '<available-deferred-tools>\nlocal__add\nlocal__check_secret\nlocal__fail\nlocal__picture\nlocal__sleep\n' +
      '</available-deferred-tools>',
  );
  expect(toolNames(first)).toContain('tool_search');
  expect(toolNames(first).filter((name) => name.startsWith('local__'))).toEqual([]);
  expect(JSON.stringify(first.tools)).not.toContain('Adds two numbers');

  // The search answered the schema and promoted it; the tool never promoted was refused.
  expect(toolResult(second, 's1')).toContain('"name": "local__add"');
  expect(toolResult(second, 's1')).toContain('Adds two numbers');
  expect(toolResult(second, 'n1')).toBe(notPromotedText('local__sleep'));
  expect(toolNames(second).filter((name) => name.startsWith('local__'))).toEqual(['local__add']);
  expect(
    second.tools?.find((tool) => tool.function.name === 'local__add')?.function.parameters,
  ).toMatchObject({
    properties: { a: { type: 'number' }, b: { type: 'number' } },
  });
  expect(second.messages.filter((m) => m.role === 'system')).toHaveLength(1);
  expect(toolResult(third, 'a1')).toBe('sum: 5');
  expect(toolNames(third).filter((name) => name.startsWith('local__'))).toEqual(['local__add']);

  // The child starts with nothing promoted: names only, and the lead's promoted tool is refused.
  expect(toolNames(child[0]).filter((name) => name.startsWith('local__'))).toEqual([]);
  expect(toolNames(child[0])).toContain('tool_search');
  expect(child[0].messages.filter((m) => m.role === 'system')).toHaveLength(1);
  expect(String(child[0].messages[0].content)).toContain('<available-deferred-tools>\nlocal__add\n');
  expect(toolResult(child[1], 'c1')).toBe(notPromotedText('local__add'));
  // Its own search (`+local add`: the name must contain "local", "add" ranks first) promotes for itself.
  expect(toolNames(child[2]).filter((name) => name.startsWith('local__'))).toEqual([
    'local__add',
    'local__check_secret',
    'local__sleep',
    'local__fail',
    'local__picture',
  ]);
  expect(toolResult(child[3], 'c3')).toBe('sum: 42');

  // The step log names the promotions (rebuilt from the closed child's history).
  const search = childSteps.steps.find((step) => step.kind === 'tool' && step.name === 'tool_search');
  expect(search).toMatchObject({
    tool_call_id: 'c2',
    is_error: false,
    promoted: ['local__add', 'local__check_secret', 'local__sleep', 'local__fail', 'local__picture'],
  });
}, 120_000);
