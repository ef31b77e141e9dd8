/**
 * The tree budget (issue 45) on the real server: DeerFlow's top-level `token_budget` over the lead and every
 * subagent of a run, leased live, so parallel children stop at the tree's limit, not each at its own.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { LeadRunResult } from '../../contracts/lead';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { leadInput, partTaskCalls, scriptedWorkspace } from '../support/subagent-input';

const testClient = useTestClient();

/** Every model call of the run spends this much (400 in, 100 out). */
const CALL = { input_tokens: 400, output_tokens: 100 };
const CALL_TOKENS = 500;
const CHILD_TURNS = 6;

/** The lead delegates three parts at once; each child spends 3,000 tokens (six calls) before it answers. */
function threeSpenders(): ModelScriptFileInput {
  const working = {
    content: 'Working on it.',
    tool_calls: [{ name: 'ls', args: { path: '.' } }],
    usage: CALL,
  };
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: partTaskCalls(3, (i) => `Work on part ${i}.`), usage: CALL },
          { content: 'Combined.', usage: CALL },
        ],
      },
      {
        agent: 'general-purpose',
        turns: [
          ...Array.from({ length: CHILD_TURNS - 1 }, () => working),
          { content: 'Part done.', usage: CALL },
        ],
      },
    ],
  };
}

async function runTree(
  config: Record<string, unknown>,
  label: string,
  pricing?: Record<string, number>,
  script: ModelScriptFileInput = threeSpenders(),
): Promise<LeadRunResult> {
  const { workspace, scriptFile } = scriptedWorkspace(label, script);
  const model = { name: 'scripted', provider: 'scripted', model: 'test', script_file: scriptFile, pricing };
  const input = leadInput({
    workspace,
    scriptFile,
    // The children repeat one tool call on purpose: loop detection would stop them before the budget does.
    config: { loop_detection: { enabled: false }, ...(pricing && { models: [model] }), ...config },
  });
  const taskQueue = uniqueTaskQueue(label);
  return withProjectWorker(taskQueue, () =>
    testClient().workflow.execute(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-lead`,
      args: [input],
    }),
  );
}

/** The lead delegates to a coordinator, which delegates two parts at once; each part spends as above. */
function nestedSpenders(): ModelScriptFileInput {
  const [, spender] = threeSpenders().scripts;
  const coordinate = (agent: string, calls: unknown[]) => ({
    agent,
    turns: [
      { tool_calls: calls, usage: CALL },
      { content: 'Done.', usage: CALL },
    ],
  });
  return {
    scripts: [
      coordinate('lead', [
        {
          name: 'task',
          id: 'co',
          args: { description: 'Coordinate', prompt: 'Split it.', subagent_type: 'coordinator' },
        },
      ]),
      coordinate(
        'coordinator',
        partTaskCalls(2, (i) => `Work on part ${i}.`),
      ),
      spender,
    ],
  } as ModelScriptFileInput;
}

const coordinator = {
  description: 'Splits work and delegates parts.',
  system_prompt: 'You coordinate.',
  tools: { allow: ['task', 'ls'] },
};

/** The agents of the run: the lead and its three children. */
const AGENTS = 4;

describe('token_budget over the whole tree', () => {
  it('without it, three children spend 3,000 tokens each and the run completes (the issue as reported)', async () => {
    const result = await runTree({}, 'tree-budget-off');
    expect(result.stop_reason).toBeUndefined();
    expect(result.token_usage.total?.total_tokens).toBe(2 * CALL_TOKENS + 3 * CHILD_TURNS * CALL_TOKENS);
  });

  it('stops three parallel children and the lead with token_capped, the total at most one call per agent over', async () => {
    const result = await runTree({ token_budget: { enabled: true, max_tokens: 4000 } }, 'tree-budget-tokens');
    expect(result).toMatchObject({ status: 'completed', stop_reason: 'token_capped' });
    const total = result.token_usage.total?.total_tokens ?? 0;
    // It stops at the limit, or sooner when what is left cannot cover the next calls' reservations.
    expect(total).toBeGreaterThan(2000);
    expect(total).toBeLessThanOrEqual(4000 + AGENTS * CALL_TOKENS);
    expect(result.ledger.map((entry) => [entry.status, entry.stop_reason])).toEqual([
      ['completed', 'token_capped'],
      ['completed', 'token_capped'],
      ['completed', 'token_capped'],
    ]);
  });

  it('stops on money with cost_capped: max_cost_usd against models[].pricing', async () => {
    // $1,000 per million tokens either way: every call (500 tokens) costs $0.50, so $4 is 4,000 tokens' worth.
    const pricing = { input_per_million: 1000, output_per_million: 1000 };
    const result = await runTree(
      { token_budget: { enabled: true, max_cost_usd: 4 } },
      'tree-budget-cost',
      pricing,
    );
    expect(result).toMatchObject({ status: 'completed', stop_reason: 'cost_capped' });
    const total = result.token_usage.total?.total_tokens ?? 0;
    // It stops at the limit, or sooner when what is left cannot cover the next calls' reservations.
    expect(total).toBeGreaterThan(2000);
    expect(total).toBeLessThanOrEqual(4000 + AGENTS * CALL_TOKENS);
    expect(result.ledger.every((entry) => entry.stop_reason === 'cost_capped')).toBe(true);
  });

  it('counts a nested subagent against its run: the tree total (grandchildren included) in the result, capped', async () => {
    const result = await runTree(
      {
        token_budget: { enabled: true, max_tokens: 2500 },
        subagents: { max_depth: 2, custom_agents: { coordinator } },
      },
      'tree-budget-nested',
      undefined,
      nestedSpenders(),
    );
    expect(result).toMatchObject({ status: 'completed', stop_reason: 'token_capped' });
    // The lead's usage counts its own children only; the tree's counts the grandchildren's calls as well.
    const tree = result.tree_budget?.spent.total_tokens ?? 0;
    expect(tree).toBeGreaterThan(result.token_usage.total?.total_tokens ?? 0);
    expect(tree).toBeGreaterThan(1500);
    expect(tree).toBeLessThanOrEqual(2500 + AGENTS * CALL_TOKENS);
    expect(result.tree_budget?.stopped).toBe('token_capped');
  });
});

describe('token_budget over a batch the lead starts', () => {
  it("counts the batch's items against the lead's run: the tree total in the lead's result, capped", async () => {
    const [, spender] = threeSpenders().scripts;
    const script = {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'batch_task',
                  id: 'b1',
                  args: { description: 'Spend', subagent_type: 'general-purpose', items_file: 'items.jsonl' },
                },
              ],
              usage: CALL,
            },
            {
              tool_calls: [{ name: 'batch_status', id: 's1', args: { batch_id: 'b1', wait_seconds: 300 } }],
              usage: CALL,
            },
            { content: 'Combined.', usage: CALL },
          ],
        },
        spender,
      ],
    } as ModelScriptFileInput;
    const { workspace, scriptFile } = scriptedWorkspace('tree-budget-batch', script);
    const items = Array.from({ length: 4 }, (_, i) =>
      JSON.stringify({ key: `k${i}`, prompt: `Spend ${i}.` }),
    );
    writeFileSync(join(workspace, 'items.jsonl'), `${items.join('\n')}\n`);
    const input = leadInput({
      workspace,
      scriptFile,
      config: {
        loop_detection: { enabled: false },
        token_budget: { enabled: true, max_tokens: 2500 },
        subagents: { batch: { enabled: true, max_running_items: 2, max_live_items: 2 } },
      },
    });
    const taskQueue = uniqueTaskQueue('tree-budget-batch');
    const result = await withProjectWorker(taskQueue, () =>
      testClient().workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      }),
    );
    // Without the batch's items the lead's own calls are 1,500 tokens at most: the rest is theirs.
    const tree = result.tree_budget?.spent.total_tokens ?? 0;
    expect(tree).toBeGreaterThan(1500);
    // At most one call over per agent spending at once: the lead and two running items.
    expect(tree).toBeLessThanOrEqual(2500 + 3 * CALL_TOKENS);
    expect(result.tree_budget?.stopped).toBe('token_capped');
    expect(result.stop_reason).toBe('token_capped');
  });
});
