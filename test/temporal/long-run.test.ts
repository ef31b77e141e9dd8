/**
 * A long subagent on the real server: 500 turns, each reading a ~4 KB file. History per turn stays bounded
 * (the transcript travels by reference), the run continues as new when history grows, and its total history
 * grows linearly in turns, not with their square.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { subagentProgressQuery, subagentStepsQuery } from '../../contracts/queries';
import type { SubagentResult } from '../../contracts/subagent';
import { subagentWorkflow } from '../../workflows/subagent';
import { executionHistories } from '../support/histories';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { subagentInput, tempDir, writeScript } from '../support/subagent-input';

const FILES = 50;
const FILE_BYTES = 4096;

const testClient = useTestClient();

interface ChainFigures {
  result: SubagentResult;
  /** Encoded history bytes of each execution, first to last. */
  executionBytes: number[];
  executionEvents: number[];
  lastSeq: number;
}

function workspaceWithFiles(dir: string): string {
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  for (let k = 0; k < FILES; k++) {
    const line = `part ${k}: ${'abcdefghijklmnopqrstuvwxyz'.repeat(3)} ${k * 7919}\n`;
    writeFileSync(join(workspace, `part-${k}.txt`), line.repeat(Math.ceil(FILE_BYTES / line.length)));
  }
  return workspace;
}

/** Runs a subagent of `turns` turns (each one read_file), capped at `turns`, and measures every execution. */
async function longSubagent(turns: number): Promise<ChainFigures> {
  const dir = tempDir('long-run');
  const workspace = workspaceWithFiles(dir);
  const script: ModelScriptFileInput = {
    scripts: [
      {
        turns: Array.from({ length: turns }, (_, k) => ({
          content: `Read ${k} parts so far; reading part ${k % FILES}.`,
          tool_calls: [{ name: 'read_file', args: { path: `part-${k % FILES}.txt` } }],
          usage: { input_tokens: 1000 + k * 1100, output_tokens: 20 },
        })),
      },
    ],
  };
  const input = subagentInput({
    workspace,
    scriptFile: writeScript(dir, script),
    config: {
      loop_detection: { enabled: false },
      subagents: {
        token_budget: { max_tokens: 10_000_000_000 },
        agents: { 'general-purpose': { max_turns: turns, timeout_seconds: 3600 } },
      },
    },
  });
  const taskQueue = uniqueTaskQueue('long-run');
  return withProjectWorker(taskQueue, async () => {
    const handle = await testClient().workflow.start(subagentWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}/task/${input.task_id}`,
      args: [input],
    });
    const result = await handle.result();
    const progress = await handle.query(subagentProgressQuery);
    // The last execution's step log numbers on from the earlier ones.
    const steps = await handle.query(subagentStepsQuery, 0);
    expect(steps.at(-1)?.seq).toBe(progress.last_seq);

    const executionBytes: number[] = [];
    const executionEvents: number[] = [];
    for (const { history } of await executionHistories(
      testClient(),
      handle.workflowId,
      handle.firstExecutionRunId,
    )) {
      executionBytes.push(temporal.api.history.v1.History.encode(history).finish().length);
      executionEvents.push(history.events?.length ?? 0);
    }
    return { result, executionBytes, executionEvents, lastSeq: progress.last_seq };
  });
}

const sum = (values: number[]): number => values.reduce((a, b) => a + b, 0);
const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(2)} MB`;

// Its bound is a hang guard: 52 s here beside a load of 9, over 120 s in one CI run beside other suites.
it('runs 500 turns of ~4 KB tool results with bounded history per execution, growing linearly', async () => {
  const half = await longSubagent(250);
  const full = await longSubagent(500);
  console.log(
    `long subagent: 250 turns → ${half.executionBytes.length} execution(s), ${mb(sum(half.executionBytes))}; ` +
      `500 turns → ${full.executionBytes.length} execution(s), ${mb(sum(full.executionBytes))} ` +
      `(largest ${mb(Math.max(...full.executionBytes))}, events ${full.executionEvents.join('/')})`,
  );

  expect(full.result).toMatchObject({ status: 'completed', stop_reason: 'turn_capped', turns: 500 });
  expect(full.result.result).toBe(`Read 499 parts so far; reading part ${499 % FILES}.`);
  // Every turn is one assistant step and one tool step, across every execution.
  expect(full.lastSeq).toBe(500 + 499);
  for (const bytes of full.executionBytes) expect(bytes).toBeLessThan(10 * 1024 * 1024);
  // Linear, not quadratic: twice the turns cost about twice the bytes (the square would be 4×).
  expect(sum(full.executionBytes) / sum(half.executionBytes)).toBeLessThan(2.5);
}, 300_000);
