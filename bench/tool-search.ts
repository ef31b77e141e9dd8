/**
 * Deferred MCP tools (`tool_search`, issue 25): the prompt of one turn with 200 MCP tools, every schema sent
 * versus names only, on the real server with the `openai` provider against the local fake endpoint, which
 * records each request as a provider gets it. Tokens are counted with the o200k_base encoding (GPT-4o's) over
 * the request's messages and tools as JSON: close to what an OpenAI-style provider bills, and the same ruler
 * for both. A third figure: the deferred turn after `tool_search` promoted three tools (their schemas in the
 * tool list, and once more in the search's result).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { parseConfig } from '../contracts/config';
import type { TemporalServer } from '../devserver/temporal-server';
import { startWorkerMcp } from '../worker/mcp';
import { projectDataConverter } from '../payloads/data-converter';
import { createProjectWorker } from '../worker/worker';
import { FakeOpenAI, type FakeChatRequest } from '../test/support/fake-openai';
import { subagentInput, tempDir } from '../test/support/subagent-input';
import type { BenchResult } from './stats';

/** The test server's own five usable tools, and these: 200 MCP tools in all. */
const EXTRA_TOOLS = 195;
const PROMOTED = ['bulk__add', 'bulk__crm_list_account_0', 'bulk__billing_list_account_1'];

/**
 * Prompt tokens of one request: its messages and its tools, as JSON. The encoding ships in js-tiktoken (the
 * tokenizer @langchain/core depends on), so nothing is fetched; it is an ES module, hence the dynamic import.
 */
async function tokenCounter(): Promise<(request: FakeChatRequest) => number> {
  const [{ Tiktoken }, { default: o200kBase }] = await Promise.all([
    import('js-tiktoken/lite'),
    import('js-tiktoken/ranks/o200k_base'),
  ]);
  const encoder = new Tiktoken(o200kBase);
  const count = (value: unknown) => encoder.encode(JSON.stringify(value)).length;
  return (request) => count(request.messages) + count(request.tools ?? []);
}

const row = (name: string, tokens: number): BenchResult => ({
  name,
  unit: 'tokens',
  p50: tokens,
  p95: tokens,
  samples: 1,
});

export async function benchToolSearch(server: TemporalServer): Promise<BenchResult[]> {
  const promptTokens = await tokenCounter();
  const mcpServers = {
    bulk: {
      command: process.execPath,
      args: [
        require.resolve('../test/support/mcp-test-server'),
        '--stdio',
        '--extra-tools',
        String(EXTRA_TOOLS),
      ],
    },
  };
  const mcp = await startWorkerMcp(
    parseConfig({ mcp_servers: mcpServers }).config.mcp_servers,
    () => undefined,
  );
  const fake = await FakeOpenAI.start({
    // Deferred: the first turn promotes three tools, the second answers; with every schema, answer at once.
    respond: (request) => {
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      const deferred = (request.tools ?? []).some((tool) => tool.function.name === 'tool_search');
      return deferred && turn === 0
        ? { tool_calls: [{ name: 'tool_search', args: { query: `select:${PROMOTED.join(',')}` } }] }
        : { content: 'Done.' };
    },
  });
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-tool-search-${Date.now()}`;
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const worker = await createProjectWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      ...(mcp && { mcpCatalog: mcp.catalog }),
    });
    const run = async (label: string, enabled: boolean): Promise<FakeChatRequest[]> => {
      const workspace = join(tempDir(`bench-tool-search-${label}`), 'workspace');
      mkdirSync(workspace);
      const input = subagentInput({
        workspace,
        taskId: label,
        config: {
          ...fake.modelsConfig(),
          mcp_servers: mcpServers,
          tool_search: { enabled },
        },
      });
      const before = fake.chatRequests.length;
      await client.workflow.execute('subagentWorkflow', {
        taskQueue,
        workflowId: `${taskQueue}/task/${label}`,
        args: [input],
      });
      return fake.chatRequests.slice(before);
    };
    return await worker.runUntil(async () => {
      const [all] = await run('all', false);
      const [first, promoted] = await run('deferred', true);
      const mcpTools = (all.tools ?? []).filter((tool) => tool.function.name.startsWith('bulk__')).length;
      if (mcpTools !== 200) throw new Error(`the benchmark's MCP server offered ${mcpTools} tools, not 200`);
      return [
        row('prompt of one turn, 200 MCP tools, every schema sent', promptTokens(all)),
        row('prompt of one turn, 200 MCP tools, deferred (names only)', promptTokens(first)),
        row('prompt of the next turn, deferred, 3 tools promoted', promptTokens(promoted)),
      ];
    });
  } finally {
    await native.close();
    await connection.close();
    await fake.close();
    await mcp?.close();
  }
}
