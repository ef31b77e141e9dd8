/**
 * Cost per delegation and the usage the tree budget counts beyond model calls (issue 45), on the real server:
 * each ledger entry carries what its tokens cost (`models[].pricing`), the lead's result and its `TotalCostUsd`
 * search attribute the run's total, and nothing says a cost when no model is priced; a summary's tokens and a
 * remote agent's reported usage count against the run's tree budget.
 */
import type { RemoteProtocol } from '../../activities/remote';
import { BatchesClient } from '../../client/batches';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { LeadRunInput, LeadRunResult } from '../../contracts/lead';
import type { RemoteSubagentResult } from '../../contracts/remote-subagent';
import { runSearchAttributes, TOTAL_COST_USD } from '../../contracts/search-attributes';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { leadInput, partTaskCalls, scriptedBatchInput, scriptedWorkspace } from '../support/subagent-input';

const testClient = useTestClient();

/** Every model call spends 400 in and 100 out; at $1,000 per million tokens either way it costs $0.50. */
const CALL = { input_tokens: 400, output_tokens: 100 };
const PRICING = { input_per_million: 1000, output_per_million: 1000 };

/** The lead delegates two parts; a child makes two calls ($1.00), the lead two ($1.00). */
function twoParts(): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: partTaskCalls(2, (i) => `Work on part ${i}.`), usage: CALL },
          { content: 'Combined.', usage: CALL },
        ],
      },
      {
        agent: 'general-purpose',
        turns: [
          { content: 'Looking.', tool_calls: [{ name: 'ls', args: { path: '.' } }], usage: CALL },
          { content: 'Part done.', usage: CALL },
        ],
      },
    ],
  };
}

function input(
  label: string,
  script: ModelScriptFileInput,
  config: Record<string, unknown>,
  pricing?: Record<string, number>,
): LeadRunInput {
  const { workspace, scriptFile } = scriptedWorkspace(label, script);
  const model = { name: 'scripted', provider: 'scripted', model: 'test', script_file: scriptFile, pricing };
  return leadInput({ workspace, scriptFile, config: { ...(pricing && { models: [model] }), ...config } });
}

async function run(
  label: string,
  lead: LeadRunInput,
  worker: Parameters<typeof withProjectWorker>[2] = {},
): Promise<{ result: LeadRunResult; costs: (number | undefined)[] }> {
  const taskQueue = uniqueTaskQueue(label);
  return withProjectWorker(
    taskQueue,
    async () => {
      const runId = `${taskQueue}-lead`;
      // Started as the CLI starts a run: with its search attributes, so it reports its outcome in them.
      const handle = await testClient().workflow.start(leadRunWorkflow, {
        taskQueue,
        workflowId: runId,
        args: [{ ...lead, run_id: runId }],
        typedSearchAttributes: runSearchAttributes(runId, 'lead', 0),
      });
      const result = await handle.result();
      // The search attribute as the server has it: the lead's, then each child's.
      const ids = [handle.workflowId, ...result.ledger.map((entry) => entry.workflow_id)];
      const costs = await Promise.all(
        ids.map(async (id) =>
          (await testClient().workflow.getHandle(id).describe()).typedSearchAttributes.get(TOTAL_COST_USD),
        ),
      );
      return { result, costs };
    },
    worker,
  );
}

describe('cost per delegation', () => {
  it('prices each delegation, the run and its TotalCostUsd from models[].pricing', async () => {
    const { result, costs } = await run('cost-priced', input('cost-priced', twoParts(), {}, PRICING));
    expect(result.status).toBe('completed');
    expect(result.ledger.map((entry) => entry.cost_usd)).toEqual([1, 1]);
    expect(result.cost_usd).toEqual({ lead: 1, subagents: 2, total: 3 });
    expect(costs).toEqual([3, 1, 1]);
  });

  it('says no cost at all when no model is priced (not 0)', async () => {
    const { result, costs } = await run('cost-unpriced', input('cost-unpriced', twoParts(), {}));
    expect(result.token_usage.total?.total_tokens).toBe(6 * 500);
    expect(result.cost_usd).toBeUndefined();
    expect(result.ledger.map((entry) => 'cost_usd' in entry)).toEqual([false, false]);
    expect(costs).toEqual([undefined, undefined, undefined]);
  });
});

describe('usage the tree budget counts beyond model calls', () => {
  const budget = { token_budget: { enabled: true, max_tokens: 1_000_000 } };

  it("counts a summary's tokens and cost against the tree budget", async () => {
    const look = (k: number, inputTokens: number) => ({
      content: `Looking at folder ${k}.`,
      tool_calls: [{ name: 'ls', args: { path: '.' } }],
      usage: { input_tokens: inputTokens, output_tokens: 10 },
    });
    const script: ModelScriptFileInput = {
      scripts: [
        {
          agent: 'lead',
          // Past the trigger after the third call: the fourth is preceded by a summary.
          turns: [look(1, 500), look(2, 700), look(3, 2500), { content: 'Done.', usage: CALL }],
        },
        {
          agent: 'lead/summarizer',
          turns: [
            {
              content: 'The lead listed the folder three times.',
              usage: { input_tokens: 300, output_tokens: 50 },
            },
          ],
        },
      ],
    };
    const summarization = { enabled: true, trigger_tokens: 2000, keep_messages: 4 };
    const { result } = await run(
      'cost-summary',
      input('cost-summary', script, { ...budget, summarization }, PRICING),
    );
    const lead = result.token_usage.lead;
    // The summary's 350 tokens are the lead's usage, and the tree's.
    expect(lead?.total_tokens).toBe(510 + 710 + 2510 + 500 + 350);
    expect(result.tree_budget?.spent).toEqual({
      input_tokens: lead?.input_tokens,
      output_tokens: lead?.output_tokens,
      total_tokens: lead?.total_tokens,
      cost_usd: result.cost_usd?.total,
    });
    expect(result.cost_usd?.total).toBe(4.58);
  });

  it("counts a remote agent's reported usage against the tree budget", async () => {
    const remoteRun = (): Promise<RemoteSubagentResult> =>
      Promise.resolve({
        end: 'completed',
        text: 'ACP fixed it.',
        usage: { input_tokens: 40, output_tokens: 10, total_tokens: 50 },
        messages: [],
      });
    const remote = {
      protocols: {
        acp: { probe: () => Promise.resolve({ available: true }), run: remoteRun } satisfies RemoteProtocol,
      },
    };
    const script: ModelScriptFileInput = {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                { name: 'subagent_acp', id: 'r1', args: { description: 'Fix', prompt: 'Fix it.' } },
              ],
            },
            { content: 'Fixed.' },
          ],
        },
      ],
    };
    const config = {
      ...budget,
      subagent_providers: { local_acp: { type: 'acp', command: 'node', args: ['agent.mjs'], env: {} } },
      subagent_tools: [{ tool_name: 'subagent_acp', provider: 'local_acp' }],
    };
    const { result } = await run('cost-remote', input('cost-remote', script, config), { remote });
    expect(result.ledger[0]).toMatchObject({ status: 'completed', token_usage: { total_tokens: 50 } });
    expect(result.tree_budget?.spent).toMatchObject({
      input_tokens: 40,
      output_tokens: 10,
      total_tokens: 50,
    });
  });
});

describe('a batch started on its own shares one budget (--max-cost-usd)', () => {
  it('stops its items with cost_capped, and the items not started never start', async () => {
    const items = Array.from({ length: 8 }, (_, i) => ({ key: `item-${i}`, prompt: `Check item ${i}.` }));
    const built = scriptedBatchInput(
      items,
      { max_running_items: 2, max_live_items: 2, max_attempts: 1 },
      {
        scripts: [
          {
            agent: 'general-purpose',
            turns: [
              { content: 'Looking.', tool_calls: [{ name: 'ls', args: { path: '.' } }], usage: CALL },
              { content: 'Checked.', usage: CALL },
            ],
          },
        ],
      },
    );
    // As `batch start --max-cost-usd 2.5` builds it, over a model priced at $1,000 per million tokens: each
    // item's two calls cost $1.00, so the budget covers two items and a half.
    const input = {
      ...built,
      agent: { ...built.agent, model: { ...built.agent.model, pricing: { input: 1000, output: 1000 } } },
      scope: {
        ...built.scope,
        tree_budget: { max_cost_usd: 2.5, warn_threshold: 0.8, hard_stop_threshold: 1 },
      },
    };
    const taskQueue = uniqueTaskQueue('cost-batch');
    const end = await withProjectWorker(taskQueue, async () => {
      const batch = await new BatchesClient(testClient()).start(input, { taskQueue });
      return batch.result();
    });
    expect(end.tree_budget?.stopped).toBe('cost_capped');
    const spent = end.tree_budget?.spent.cost_usd ?? 0;
    // At most one call per running item over the limit.
    expect(spent).toBeGreaterThanOrEqual(1.5);
    expect(spent).toBeLessThanOrEqual(2.5 + 2 * 0.5);
    expect(end.counts.completed).toBeLessThan(items.length);
    expect(end.counts.cancelled).toBeGreaterThan(0);
  });
});
