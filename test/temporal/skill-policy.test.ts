/**
 * Issue 46, items 4 and 5, against the real server: a subagent whose active skill restricts its tools sends the
 * provider only those (plus describe_skill, read_file and tool_search), and its tool_search finds only what the
 * skill allows; a deferred MCP tool whose routing keywords the task holds is promoted before the first model
 * call (at most auto_promote_top_k of them) and runs without a search; after a compaction the active skill is
 * named with its SKILL.md for the agent to read again, and its policy still holds.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { temporal } from '@temporalio/proto';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { subagentResult } from '../../client/api';
import { closedSubagentSteps } from '../../client/subagent-steps';
import { parseConfig } from '../../contracts/config';
import type { ModelCallInput, ModelCallResult } from '../../contracts/model';
import type { RunSkillsSettings } from '../../contracts/run-skills';
import type { SubagentStep } from '../../contracts/steps';
import type { SubagentInput, SubagentResult } from '../../contracts/subagent';
import { startWorkerMcp, type WorkerMcp } from '../../worker/mcp';
import { subagentWorkflow } from '../../workflows/subagent';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import type { FakeChatRequest, FakeReply } from '../support/fake-openai';
import { FakeOpenAI } from '../support/fake-openai';
import { subagentInput, tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();
type IHistory = temporal.api.history.v1.IHistory;

const serverScript = require.resolve('../support/mcp-test-server');
/** The test server; `add` preferred for "add numbers" (priority 100), `sleep` for "nap" (priority 10). */
const mcpServers = {
  local: {
    command: process.execPath,
    args: [serverScript, '--stdio'],
    routing: { mode: 'prefer', priority: 10, keywords: ['nap'] },
    tools: {
      add: { routing: { priority: 100, keywords: ['add numbers'] } },
      fail: { routing: { mode: 'off' } },
    },
  },
};
const LISTER = '/mnt/skills/public/lister/SKILL.md';

let mcp: WorkerMcp | undefined;
let fake: FakeOpenAI | undefined;

function skillsRoot(): string {
  const root = join(tempDir('skill-policy'), 'skills');
  const file = join(root, 'public/lister/SKILL.md');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(
    file,
    '---\nname: lister\ndescription: Lists folders and adds.\nallowed-tools: [ls, local__add]\n---\n# lister\n',
  );
  return root;
}
const root = skillsRoot();
const skills: RunSkillsSettings = { root, container_path: '/mnt/skills', deferred_discovery: true };

beforeAll(async () => {
  mcp = await startWorkerMcp(parseConfig({ mcp_servers: mcpServers }).config.mcp_servers, () => undefined, {
    PATH: process.env.PATH,
  });
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await fake?.close();
});

function input(options: { config: Record<string, unknown>; prompt: string; script?: ModelScriptFileInput }) {
  const dir = tempDir('skill-policy-run');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  for (const folder of ['one', 'two', 'three']) mkdirSync(join(workspace, folder));
  const child = subagentInput({
    workspace,
    prompt: options.prompt,
    config: options.config,
    ...(options.script && { scriptFile: writeScript(dir, options.script) }),
  });
  return { ...child, scope: { ...child.scope, skills } } satisfies SubagentInput;
}

async function run(
  subagent: SubagentInput,
): Promise<{ result: SubagentResult; history: IHistory; steps: SubagentStep[] }> {
  const taskQueue = uniqueTaskQueue('skill-policy');
  return withProjectWorker(
    taskQueue,
    async () => {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/${subagent.task_id}`,
        args: [subagent],
      });
      const result = await subagentResult(handle);
      const { steps } = await closedSubagentSteps(testClient(), handle);
      return { result, history: await handle.fetchHistory(), steps };
    },
    { ...(mcp && { mcpCatalog: mcp.catalog }) },
  );
}

/** The model activities' inputs and results, in order, decoded as the client's converter does. */
async function modelCalls(
  history: IHistory,
): Promise<{ inputs: ModelCallInput[]; results: ModelCallResult[] }> {
  const converter = testClient().options.loadedDataConverter;
  const inputs: ModelCallInput[] = [];
  const results: ModelCallResult[] = [];
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'callModel')
      inputs.push(await decodeFromPayloadsAtIndex<ModelCallInput>(converter, 0, scheduled.input?.payloads));
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed?.result?.payloads) {
      const result = await decodeFromPayloadsAtIndex<unknown>(converter, 0, completed.result.payloads);
      if (typeof result === 'object' && result !== null && 'model_name' in result)
        results.push(result as ModelCallResult);
    }
  }
  return { inputs, results };
}

const call = (name: string, id: string, args: Record<string, unknown>) => ({ name, id, args });
const turnOf = (request: FakeChatRequest) => request.messages.filter((m) => m.role === 'assistant').length;
const toolNames = (request: FakeChatRequest) =>
  (request.tools ?? []).map((tool) => tool.function.name).sort();
const toolResult = (request: FakeChatRequest, id: string): string =>
  String(request.messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content);

it('sends only the tools an active skill allows, and its tool_search finds only those', async () => {
  const replies: FakeReply[] = [
    { tool_calls: [call('read_file', 'r1', { path: LISTER })] },
    { tool_calls: [call('tool_search', 's1', { query: 'select:local__add,local__sleep' })] },
    { tool_calls: [call('local__add', 'a1', { a: 2, b: 3 }), call('bash', 'b1', { command: 'ls' })] },
    { content: 'Listed and added.' },
  ];
  await fake?.close();
  fake = await FakeOpenAI.start({ respond: (request) => replies[turnOf(request)] ?? { content: 'extra' } });
  const subagent = input({
    config: { ...fake.modelsConfig(), mcp_servers: mcpServers, tool_search: { enabled: true } },
    prompt: 'List the folders.',
  });
  const { result, steps } = await run(subagent);
  expect(result.status).toBe('completed');
  const requests = fake.chatRequests;
  expect(requests).toHaveLength(4);
  // Before the skill is read: every tool of the agent (its MCP tools deferred behind tool_search).
  expect(toolNames(requests[0])).toEqual(
    ['bash', 'describe_skill', 'ls', 'read_file', 'str_replace', 'tool_search', 'write_file'].sort(),
  );
  // Once it is active: its allowed-tools, plus describe_skill, read_file and tool_search; only its MCP tool deferred.
  expect(toolNames(requests[1])).toEqual(['describe_skill', 'ls', 'read_file', 'tool_search']);
  const system = String(requests[1].messages[0].content);
  expect(system).toContain('<available-deferred-tools>\nlocal__add\n</available-deferred-tools>');
  // tool_search ran under the restricting skill, and found only what the skill allows.
  expect(toolResult(requests[2], 's1')).toContain('"name": "local__add"');
  expect(toolResult(requests[2], 's1')).not.toContain('local__sleep');
  expect(toolNames(requests[2])).toEqual(['describe_skill', 'local__add', 'ls', 'read_file', 'tool_search']);
  expect(toolResult(requests[3], 'a1')).toBe('sum: 5');
  expect(toolResult(requests[3], 'b1')).toMatch(/^Tool bash is not allowed while skill lister is active/);
  // The step log, rebuilt from the closed history, shows the search as it ran, and the refusal.
  const tool = (id: string) => steps.find((step) => step.kind === 'tool' && step.tool_call_id === id);
  expect(tool('s1')).toMatchObject({ name: 'tool_search', is_error: false, promoted: ['local__add'] });
  expect(tool('b1')).toMatchObject({ name: 'bash', is_error: true });
}, 120_000);

it('promotes deferred MCP tools whose routing keywords the task holds before the first call, top_k of them', async () => {
  const replies: FakeReply[] = [
    { tool_calls: [call('local__add', 'a1', { a: 20, b: 22 })] },
    { content: 'The sum is 42.' },
  ];
  await fake?.close();
  fake = await FakeOpenAI.start({ respond: (request) => replies[turnOf(request)] ?? { content: 'extra' } });
  const subagent = input({
    config: {
      ...fake.modelsConfig(),
      mcp_servers: mcpServers,
      tool_search: { enabled: true, auto_promote_top_k: 1 },
    },
    prompt: 'Please ADD NUMBERS 20 and 22, then take a nap.',
  });
  expect(subagent.agent.mcp).toEqual({ allow: ['*'], deny: [], deferred: true, auto_promote_top_k: 1 });
  const { result, history } = await run(subagent);
  expect(result.status).toBe('completed');
  expect(result.result).toBe('The sum is 42.');
  const [first, second] = fake.chatRequests;
  // Both add and sleep match; top_k 1 promotes the higher priority one, without a search.
  const mcpTools = (request: FakeChatRequest) =>
    toolNames(request).filter((name) => name.startsWith('local__'));
  expect(mcpTools(first)).toEqual(['local__add']);
  expect(toolNames(first)).toContain('tool_search');
  // The call ran (a tool never promoted would be refused), and the promotion is recorded in history.
  expect(toolResult(second, 'a1')).toBe('sum: 42');
  expect(mcpTools(second)).toEqual(['local__add']);
  const { inputs, results } = await modelCalls(history);
  expect(results[0].auto_promoted).toEqual(['local__add']);
  expect(results[1].auto_promoted).toBeUndefined();
  expect(inputs[1].mcp_promoted).toEqual(['local__add']);
}, 120_000);

it('names the active skill and its SKILL.md after a compaction, and its policy still holds', async () => {
  const look = (folder: string, inputTokens: number) => ({
    tool_calls: [{ name: 'ls', args: { path: folder } }],
    usage: { input_tokens: inputTokens, output_tokens: 10 },
  });
  const script: ModelScriptFileInput = {
    scripts: [
      {
        agent: 'general-purpose',
        turns: [
          {
            tool_calls: [{ name: 'read_file', args: { path: LISTER } }],
            usage: { input_tokens: 500, output_tokens: 5 },
          },
          look('one', 900),
          look('two', 2500), // past the trigger: the next call is preceded by a summary
          {
            tool_calls: [{ name: 'bash', args: { command: 'ls' } }],
            usage: { input_tokens: 700, output_tokens: 5 },
          },
          // A model that no longer sees the skill's path answers otherwise.
          {
            content: 'Re-reading the skill.',
            if_missing: { text: LISTER, turn: { content: 'Skill forgotten.' } },
          },
        ],
      },
      { agent: 'general-purpose/summarizer', turns: [{ content: 'Listed folders one and two.' }] },
    ],
  };
  const subagent = input({
    config: { summarization: { enabled: true, trigger_tokens: 2000, keep_messages: 2 } },
    prompt: 'List the folders.',
    script,
  });
  const { result, history } = await run(subagent);
  expect(result.status).toBe('completed');
  expect(result.result).toBe('Re-reading the skill.');
  const { inputs } = await modelCalls(history);
  expect(inputs).toHaveLength(5);
  // Before the summary: no reminder (the read is in the transcript).
  expect(inputs[2].system_context ?? '').not.toContain('<active_skills>');
  // After it: the summary, then the active skill with its SKILL.md; the read itself was summarized away.
  for (const after of inputs.slice(3)) {
    expect(after.system_context).toContain('Listed folders one and two.');
    expect(after.system_context).toContain(`- lister: Lists folders and adds. -> ${LISTER}`);
    expect(after.builtin_tools).toEqual(['ls', 'read_file']);
  }
  expect(JSON.stringify(inputs[3].messages)).not.toContain(LISTER);
  // The policy outlived the compaction: bash, called after it, was refused.
  const refused = JSON.stringify(inputs[4].messages);
  expect(refused).toContain('Tool bash is not allowed while skill lister is active');
}, 120_000);
