/**
 * The graph activity across attempts: an attempt that fails mid-run leaves its checkpoint's key in its last
 * heartbeat, and the retried attempt resumes there: earlier nodes are not run again, the usage of both attempts
 * is summed, and the turn budget counts the whole run, not each attempt.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { GraphProgress, GraphRunInput, GraphRunResult } from '../../../contracts/graph';
import { testActivities } from '../../support/activities';
import { tempDir, writeScript } from '../../support/subagent-input';

const { runGraphSubagent } = testActivities();

function attempt(attemptNumber: number, heartbeatDetails?: GraphProgress) {
  const env = new MockActivityEnvironment(
    { attempt: attemptNumber, heartbeatTimeoutMs: 3000, heartbeatDetails },
    { logger: new DefaultLogger('ERROR') },
  );
  let last: GraphProgress | undefined;
  env.on('heartbeat', (details: GraphProgress | undefined) => {
    if (details !== undefined) last = structuredClone(details);
  });
  return {
    run: (input: GraphRunInput) =>
      env.run<[GraphRunInput], GraphRunResult, typeof runGraphSubagent>(runGraphSubagent, input),
    lastBeat: () => last,
  };
}

it('resumes from the last checkpoint its heartbeat names, within the same turn budget', async () => {
  const dir = tempDir('graph-run');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const usage = { input_tokens: 10, output_tokens: 2 };
  const scriptFile = writeScript(dir, {
    scripts: [
      {
        agent: 'thinker',
        repeat_last: true,
        turns: [
          { content: 'one', usage },
          { content: 'two', usage },
          // The first attempt fails here (a 500: retried by Temporal).
          { content: 'three', usage, fail_attempts: [{ status: 500, message: 'overloaded' }] },
          { content: 'more', usage },
        ],
      },
    ],
  });
  const input: GraphRunInput = {
    agent_name: 'thinker',
    graph: {
      module: join(__dirname, '..', '..', 'support', 'graphs', 'journal.js'),
      export: 'endlessGraph',
      nodes_per_turn: 1,
      one_time_nodes: 0,
    },
    thread_id: `graph-run-${Date.now()}`,
    prompt: 'Think.',
    system_prompt: 'You think.',
    model: { name: 'scripted', provider: 'scripted', model: 'test', script_file: scriptFile },
    recursion_limit: 5,
    token_budget: { enabled: true, max_tokens: 1_000_000, warn_threshold: 0.7, hard_threshold: 1 },
    workspace,
  };

  const first = attempt(1);
  await expect(first.run(input)).rejects.toThrow('overloaded');
  expect(first.lastBeat()).toMatchObject({ super_steps: 2, model_calls: 2, head: expect.any(String) });

  const result = await attempt(2, first.lastBeat()).run(input);
  expect(result).toMatchObject({
    end: 'turn_capped',
    text: 'more',
    model_calls: 5,
    super_steps: 5,
    usage: { input_tokens: 50, output_tokens: 10, total_tokens: 60 },
    resumed: true,
  });
  expect(result.messages.map((m) => m.content)).toEqual(['one', 'two', 'three', 'more', 'more']);
  // Attempt 1: two nodes and the one that failed; attempt 2: the failed one again and two more, no sixth.
  expect(readFileSync(join(workspace, 'journal.txt'), 'utf8').trim().split('\n')).toHaveLength(6);
});
