/**
 * Graph agents (a custom agent that is a compiled LangGraph graph) against the real server with the scripted
 * model: a lead delegates to one and gets its answer back as any subagent's; a worker killed between
 * super-steps costs no completed node (the retried attempt resumes from the stored checkpoint); the recursion
 * limit, the token budget and the wall clock end it with their usual results, the partial answer kept; its
 * steps are the graph's messages, read back from its history with no worker and shown by the report.
 */
import { subagentResult } from '../../client/api';
import { runningGraphSteps } from '../../client/subagent-steps';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { GraphProgress } from '../../contracts/graph';
import { subagentStepsQuery } from '../../contracts/queries';
import { failedSubagentResult, type SubagentResult } from '../../contracts/subagent';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { subagentWorkflow } from '../../workflows/subagent';
import {
  startProjectWorkerProcess,
  suiteCli,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, scriptedWorkspace, subagentInput, tempDir } from '../support/subagent-input';
import { FakeOpenAI } from '../support/fake-openai';

const testClient = useTestClient();

const GRAPHS = join(__dirname, '..', 'support', 'graphs', 'journal.js');
const LOOKUP_GRAPH = join(__dirname, '..', 'support', 'graphs', 'lookup.js');

/** A custom agent `name` running the test graph `exported`, with `extra` settings. */
function graphAgent(exported: string, extra: Record<string, unknown> = {}) {
  return { description: `Runs the ${exported} test graph.`, graph: `${GRAPHS}#${exported}`, ...extra };
}

function setUp(script: ModelScriptFileInput) {
  return scriptedWorkspace('graph', script);
}

function journal(workspace: string): string[] {
  return readFileSync(join(workspace, 'journal.txt'), 'utf8').trim().split('\n');
}

/** The journal so far (none before the first node ran). */
function readJournal(workspace: string): string[] {
  try {
    return journal(workspace);
  } catch {
    return [];
  }
}

const journalAnswers = {
  agent: 'journaler',
  turns: [
    { content: 'Plan: look, then answer.', usage: { input_tokens: 40, output_tokens: 10 } },
    { content: 'The answer is 42.', usage: { input_tokens: 50, output_tokens: 8 } },
  ],
};

async function runSubagent(input: ReturnType<typeof subagentInput>, label: string): Promise<SubagentResult> {
  const taskQueue = uniqueTaskQueue(label);
  return withProjectWorker(taskQueue, () =>
    testClient()
      .workflow.execute(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/call_1`,
        args: [input],
      })
      .catch((err: unknown) => {
        const failed = failedSubagentResult(err);
        if (failed) return failed;
        throw err;
      }),
  );
}

describe('graph agents', () => {
  it('answer a lead’s task like any subagent, with the graph’s answer and token usage', async () => {
    const { workspace, scriptFile } = setUp({
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'g1',
                  args: {
                    description: 'Find the answer',
                    prompt: 'What is the answer?',
                    subagent_type: 'journaler',
                  },
                },
              ],
            },
            { content: 'Lead saw: {{tool_result:g1}}' },
          ],
        },
        journalAnswers,
      ],
    });
    const input = leadInput({
      workspace,
      scriptFile,
      config: { subagents: { custom_agents: { journaler: graphAgent('journalGraph') } } },
    });
    const taskQueue = uniqueTaskQueue('graph-lead');
    const result = await withProjectWorker(taskQueue, () =>
      testClient().workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      }),
    );
    expect(result.final_output).toBe('Lead saw: Task Succeeded. Result: The answer is 42.');
    expect(result.ledger).toEqual([
      expect.objectContaining({
        id: 'g1',
        subagent_type: 'journaler',
        status: 'completed',
        result_brief: 'The answer is 42.',
        token_usage: { input_tokens: 90, output_tokens: 18, total_tokens: 108 },
      }),
    ]);
    expect(journal(workspace)).toEqual(['plan', 'slow', 'answer']);
  });

  it('resume after the worker is killed between super-steps, not restart', async () => {
    const { workspace, scriptFile } = setUp({ scripts: [journalAnswers] });
    const input = subagentInput({
      workspace,
      scriptFile,
      agent: 'journaler',
      prompt: 'What is the answer? wait_ms=6000',
      config: {
        models: [{ name: 'scripted', provider: 'scripted', model: 'test', script_file: scriptFile }],
        subagents: { custom_agents: { journaler: graphAgent('journalGraph') } },
      },
    });
    const taskQueue = uniqueTaskQueue('graph-crash');
    // Both workers see one disk, as a shared filesystem's hosts do: the workspace stays where the graph wrote it
    // (on separate disks a move restores the last save, taken when a call ends: test/temporal/many-hosts.test.ts).
    const config = join(tempDir('graph-crash-config'), 'worker.yaml');
    writeFileSync(config, 'workspace: {mode: shared}\n');
    const env = { SUBAGENTS_CONFIG: config };
    const workers: ChildProcess[] = [await startProjectWorkerProcess(taskQueue, env)];
    try {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/call_1`,
        args: [input],
      });
      // `plan` is done and checkpointed; `slow` is waiting.
      await waitFor('the slow node', () => readJournal(workspace).includes('slow'));
      // The server holds the checkpoint's key after `plan`, from a beat: what the next attempt starts from.
      await waitFor('the checkpoint after plan in the heartbeat details', async () => {
        const description = await handle.describe().catch(() => undefined);
        const [pending] = description?.raw.pendingActivities ?? [];
        if (!pending?.heartbeatDetails?.payloads?.length) return false;
        const progress = await decodeFromPayloadsAtIndex<GraphProgress>(
          testClient().options.loadedDataConverter,
          0,
          pending.heartbeatDetails.payloads,
        );
        return progress.node === 'plan' && progress.head !== undefined;
      });
      workers[0].kill('SIGKILL');
      await once(workers[0], 'exit');
      workers.push(await startProjectWorkerProcess(taskQueue, env));

      const result = await handle.result();
      expect(result).toMatchObject({
        status: 'completed',
        result: 'The answer is 42.',
        token_usage: { input_tokens: 90, output_tokens: 18, total_tokens: 108 },
        turns: 2,
      });
      // `plan` ran once: the second attempt started from its checkpoint; only the node in flight ran again.
      expect(journal(workspace)).toEqual(['plan', 'slow', 'slow', 'answer']);
      const steps = await handle.query(subagentStepsQuery, 0);
      expect(steps.map((s) => s.text)).toEqual(['Plan: look, then answer.', 'The answer is 42.']);
      const attempts = (await handle.fetchHistory()).events?.filter(
        (e) =>
          e.activityTaskStartedEventAttributes !== undefined && e.activityTaskStartedEventAttributes !== null,
      );
      expect(attempts?.at(-1)?.activityTaskStartedEventAttributes?.attempt).toBe(2);
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
    }
  });

  it('end turn_capped at the recursion limit max_turns maps to, the partial answer kept', async () => {
    const { workspace, scriptFile } = setUp({
      scripts: [{ agent: 'thinker', repeat_last: true, turns: [{ content: 'Still thinking: partial.' }] }],
    });
    const result = await runSubagent(
      subagentInput({
        workspace,
        scriptFile,
        agent: 'thinker',
        config: {
          subagents: {
            custom_agents: {
              thinker: graphAgent('endlessGraph', { max_turns: 3, nodes_per_turn: 1, one_time_nodes: 0 }),
            },
          },
        },
      }),
      'graph-turns',
    );
    expect(result).toMatchObject({
      status: 'completed',
      stop_reason: 'turn_capped',
      result: 'Still thinking: partial.',
      turns: 3,
    });
    expect(journal(workspace)).toEqual(['think', 'think', 'think']);
  });

  it('end failed + turn_capped when the graph produced no text before the limit', async () => {
    const { workspace, scriptFile } = setUp({
      scripts: [{ agent: 'thinker', repeat_last: true, turns: [{ content: '' }] }],
    });
    const result = await runSubagent(
      subagentInput({
        workspace,
        scriptFile,
        agent: 'thinker',
        config: {
          subagents: {
            custom_agents: {
              thinker: graphAgent('endlessGraph', { max_turns: 2, nodes_per_turn: 1, one_time_nodes: 0 }),
            },
          },
        },
      }),
      'graph-no-text',
    );
    expect(result).toMatchObject({
      status: 'failed',
      stop_reason: 'turn_capped',
      error: 'The subagent used up its turn budget before producing any text.',
    });
  });

  it('fail with a clear message when the module has no such export', async () => {
    const { workspace, scriptFile } = setUp({ scripts: [journalAnswers] });
    const result = await runSubagent(
      subagentInput({
        workspace,
        scriptFile,
        agent: 'journaler',
        config: { subagents: { custom_agents: { journaler: graphAgent('noSuchGraph') } } },
      }),
      'graph-no-export',
    );
    expect(result.status).toBe('failed');
    expect(result.error).toBe(
      `graph module ${GRAPHS} has no export "noSuchGraph" (its exports: journalGraph, endlessGraph)`,
    );
  });

  it('warn, then end token_capped once the graph’s model calls reach the token budget', async () => {
    const { workspace, scriptFile } = setUp({
      scripts: [
        {
          agent: 'thinker',
          repeat_last: true,
          turns: [
            { content: 'Expensive thought.', usage: { input_tokens: 50, output_tokens: 10 } },
            { content: 'Expensive thought.', usage: { input_tokens: 50, output_tokens: 10 } },
            // At 120 of 150 tokens (past warn_threshold 0.7) the graph's next call carries the warning.
            {
              content: 'Wrapping up as warned.',
              usage: { input_tokens: 50, output_tokens: 10 },
              if_missing: { text: '[TOKEN BUDGET WARNING]', turn: { content: 'No warning seen.' } },
            },
          ],
        },
      ],
    });
    const result = await runSubagent(
      subagentInput({
        workspace,
        scriptFile,
        agent: 'thinker',
        config: {
          subagents: {
            custom_agents: { thinker: graphAgent('endlessGraph', { token_budget: { max_tokens: 150 } }) },
          },
        },
      }),
      'graph-tokens',
    );
    expect(result).toMatchObject({
      status: 'completed',
      stop_reason: 'token_capped',
      result: 'Wrapping up as warned.',
      token_usage: { input_tokens: 150, output_tokens: 30, total_tokens: 180 },
      turns: 3,
    });
  });

  it('stop at the wall clock: timed_out, the graph aborted mid-node', async () => {
    const { workspace, scriptFile } = setUp({ scripts: [journalAnswers] });
    const started = Date.now();
    const result = await runSubagent(
      subagentInput({
        workspace,
        scriptFile,
        agent: 'journaler',
        prompt: 'What is the answer? wait_ms=60000',
        config: {
          subagents: { custom_agents: { journaler: graphAgent('journalGraph', { timeout_seconds: 6 }) } },
        },
      }),
      'graph-timeout',
    );
    expect(result).toMatchObject({
      status: 'timed_out',
      error: 'Execution timed out after 6 seconds',
      result: 'Plan: look, then answer.',
    });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(journal(workspace)).toEqual(['plan', 'slow', 'slow aborted']);
  });

  it('stop when cancelled: cancelled, the graph aborted mid-node', async () => {
    const { workspace, scriptFile } = setUp({ scripts: [journalAnswers] });
    const input = subagentInput({
      workspace,
      scriptFile,
      agent: 'journaler',
      prompt: 'What is the answer? wait_ms=60000',
      config: { subagents: { custom_agents: { journaler: graphAgent('journalGraph') } } },
    });
    const taskQueue = uniqueTaskQueue('graph-cancel');
    const result = await withProjectWorker(taskQueue, async () => {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}/task/call_1`,
        args: [input],
      });
      await waitFor('the slow node', () => readJournal(workspace).includes('slow'));
      await handle.cancel();
      const cancelled = await subagentResult(handle);
      // The activity hears of the cancel at its next heartbeat (within a second) and aborts the graph.
      await waitFor('the graph aborted', () => readJournal(workspace).includes('slow aborted'), 10_000);
      return cancelled;
    });
    expect(result).toMatchObject({ status: 'cancelled', error: 'Task cancelled by user' });
    expect(journal(workspace)).toEqual(['plan', 'slow', 'slow aborted']);
  });

  it('run the example researcher on the openai provider (a local OpenAI-compatible server)', async () => {
    const keyEnv = 'FAKE_GRAPH_API_KEY';
    process.env[keyEnv] = 'sk-graph';
    const fake = await FakeOpenAI.start({
      replies: [
        { content: 'Plan: 1. retries.', usage: { input_tokens: 30, output_tokens: 6 } },
        { content: 'Retries follow the retry policy.', usage: { input_tokens: 40, output_tokens: 7 } },
      ],
      api_key: 'sk-graph',
    });
    try {
      const workspace = join(tempDir('graph-openai'), 'workspace');
      mkdirSync(workspace);
      const researcher = join(__dirname, '..', '..', 'cli', 'demo', 'graph', 'researcher.js');
      const result = await runSubagent(
        subagentInput({
          workspace,
          agent: 'researcher',
          prompt: 'How does Temporal retry?',
          config: {
            models: [
              {
                name: 'fake',
                provider: 'openai',
                model: 'fake-model',
                base_url: fake.url,
                api_key: `$${keyEnv}`,
              },
            ],
            subagents: {
              custom_agents: {
                researcher: { description: 'Researches.', system_prompt: 'You research.', graph: researcher },
              },
            },
          },
        }),
        'graph-openai',
      );
      expect(result).toMatchObject({
        status: 'completed',
        result: 'Retries follow the retry policy.',
        model_name: 'fake-model',
        turns: 2,
        token_usage: { input_tokens: 70, output_tokens: 13, total_tokens: 83 },
      });
      const [plan, answer] = fake.chatRequests;
      expect(plan.messages[0]).toMatchObject({ role: 'system' });
      expect(String(plan.messages[0].content)).toMatch(
        /^You research\.\n\nFirst write a short research plan/,
      );
      expect(answer.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant']);
    } finally {
      await fake.close();
    }
  });
});

describe('a graph subagent’s steps', () => {
  it('are the graph’s messages: rebuilt from history with no worker, as its query gave them, and in the report', async () => {
    const { workspace, scriptFile } = setUp({
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              tool_calls: [
                {
                  name: 'task',
                  id: 'g1',
                  args: { description: 'Look x up', prompt: 'What is x?', subagent_type: 'looker' },
                },
              ],
            },
            { content: 'Lead saw: {{tool_result:g1}}' },
          ],
        },
        {
          agent: 'looker',
          turns: [
            { content: 'Looking x up.', tool_calls: [{ name: 'lookup', id: 'l1', args: { key: 'x' } }] },
            { content: 'Found: {{tool_result}}.' },
          ],
        },
      ],
    });
    const taskQueue = uniqueTaskQueue('graph-steps');
    const runId = `${taskQueue}-lead`;
    const input = leadInput({
      workspace,
      scriptFile,
      config: {
        subagents: {
          custom_agents: {
            looker: { description: 'Looks things up.', graph: `${LOOKUP_GRAPH}#lookupGraph` },
          },
        },
      },
    });
    // The worker stops once the run has ended: what follows reads the server alone.
    const queried = await withProjectWorker(taskQueue, async () => {
      const result = await testClient().workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: runId,
        args: [{ ...input, run_id: runId }],
      });
      expect(result.final_output).toBe('Lead saw: Task Succeeded. Result: Found: x is 42.');
      return testClient().workflow.getHandle(`${runId}/task/g1`).query(subagentStepsQuery, 0);
    });

    const steps = await suiteCli(['steps', runId, 'g1']);
    expect(steps.code).toBe(0);
    expect(steps.stdout).toBe(
      [
        '1 ai: Looking x up.',
        '    → lookup [l1] {"key":"x"}',
        '2 tool lookup [l1]: x is 42',
        '3 ai: Found: x is 42.',
        `${runId}/task/g1: completed after 2 turns`,
        '',
      ].join('\n'),
    );
    const json = await suiteCli(['steps', runId, 'g1', '--json']);
    const rebuilt = JSON.parse(json.stdout) as { source: string; steps: unknown[]; missing: string[] };
    expect(rebuilt).toMatchObject({ source: 'history', missing: [] });
    expect(rebuilt.steps).toEqual(queried);

    const page = join(tempDir('graph-steps'), 'report.html');
    const report = await suiteCli(['report', runId, '-o', page]);
    expect(report.code).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).not.toContain('(no steps)');
    expect(html).toContain('2 tool lookup [l1]: x is 42');
  });

  it('while the graph runs, are its checkpoint’s messages so far; once cancelled, say why history has none', async () => {
    const { workspace, scriptFile } = setUp({ scripts: [journalAnswers] });
    const input = subagentInput({
      workspace,
      scriptFile,
      agent: 'journaler',
      prompt: 'What is the answer? wait_ms=60000',
      config: { subagents: { custom_agents: { journaler: graphAgent('journalGraph') } } },
    });
    const taskQueue = uniqueTaskQueue('graph-live-steps');
    const workflowId = `${taskQueue}/task/call_1`;
    const running = await withProjectWorker(taskQueue, async () => {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId,
        args: [input],
      });
      // `plan` is checkpointed and `slow` waits; the run's heartbeat names the checkpoint within seconds.
      await waitFor('the plan in the running graph’s checkpoint', async () => {
        const graph = await runningGraphSteps(testClient(), await handle.describe());
        return graph !== undefined && 'steps' in graph && graph.steps.length > 0;
      });
      expect(await handle.query(subagentStepsQuery, 0)).toEqual([]);
      const json = await suiteCli(['steps', workflowId, '--json']);
      const text = await suiteCli(['steps', workflowId]);
      await handle.cancel();
      await subagentResult(handle);
      return { json, text };
    });
    expect(running.json.code).toBe(0);
    expect(JSON.parse(running.json.stdout)).toMatchObject({
      source: 'graph_checkpoint',
      progress: { state: 'running' },
      steps: [{ seq: 1, kind: 'ai', text: 'Plan: look, then answer.', tool_calls: [] }],
    });
    expect(running.text.stdout).toBe('1 ai: Plan: look, then answer.\n');

    const closed = await suiteCli(['steps', workflowId]);
    expect(closed.stdout).toBe(
      [
        "(missing: the graph's messages: the subagent ended before its run returned them (it was cancelled, or its wall clock ran out))",
        `${workflowId}: cancelled after 0 turns: Task cancelled by user`,
        '',
      ].join('\n'),
    );
  });
});
