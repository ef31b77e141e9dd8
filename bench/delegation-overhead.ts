/**
 * Delegation overhead: a lead that delegates to children whose model answers instantly (no tools).
 *   - baseline: the same lead, with one cheap tool turn (`ls`) where it would delegate;
 *   - overhead of a delegation = (wall with one child − baseline) − the child's own execution time (its
 *     workflow's start-to-close, from its history): what delegating adds beyond the child's work;
 *   - fan-out: wall time with 1 and with 3 children (three in parallel should cost about one).
 * Beside: the same fan-out in-process (the lead's and the children's model calls as plain function calls).
 */
import { testActivities } from '../test/support/activities';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { ModelScriptFileInput } from '../activities/model/model-script';
import type { LeadRunInput } from '../contracts/lead';
import type { TemporalServer } from '../devserver/temporal-server';
import { createProjectWorker } from '../worker/worker';
import { leadInput, tempDir, writeScript } from '../test/support/subagent-input';
import { msRow, type BenchResult } from './stats';
import { projectDataConverter } from '../payloads/data-converter';

const { callModel } = testActivities();

const RUNS = 15;

function script(children: number): ModelScriptFileInput {
  const calls = Array.from({ length: children }, (_, i) => ({
    name: 'task',
    id: `c${i}`,
    args: { description: `Part ${i}`, prompt: `Do part ${i}.`, subagent_type: 'general-purpose' },
  }));
  const leadTurns =
    children === 0 ? [{ content: 'Done alone.' }] : [{ tool_calls: calls }, { content: 'Combined.' }];
  return {
    scripts: [
      { agent: 'lead', turns: leadTurns },
      { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Part done.' }] },
    ],
  };
}

function setUp(children: number): LeadRunInput {
  const dir = tempDir('bench-delegation');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return leadInput({ workspace, scriptFile: writeScript(dir, script(children)) });
}

/** The same fan-out without Temporal: the lead's model call, the children's concurrently, the lead again. */
async function inProcess(input: LeadRunInput, children: number): Promise<number> {
  const started = performance.now();
  const lead = { model: input.model, agent_name: 'lead', tools: [] };
  const first = await callModel({ ...lead, messages: [{ role: 'user', content: input.prompt }] });
  await Promise.all(
    first.tool_calls.slice(0, children).map((call) =>
      callModel({
        model: input.model,
        agent_name: 'general-purpose',
        tools: [],
        messages: [{ role: 'user', content: JSON.parse(call.args).prompt as string }],
      }),
    ),
  );
  if (children > 0) await callModel({ ...lead, messages: [{ role: 'assistant', content: '' }] });
  return performance.now() - started;
}

export async function benchDelegationOverhead(server: TemporalServer): Promise<BenchResult[]> {
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-delegation-${Date.now()}`;
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const worker = await createProjectWorker({ connection: native, namespace: server.namespace, taskQueue });
    const wall: Record<number, number[]> = { 0: [], 1: [], 3: [] };
    const childOwn: number[] = [];
    await worker.runUntil(async () => {
      for (let run = 0; run < RUNS; run++) {
        for (const children of [0, 1, 3]) {
          const input = setUp(children);
          const workflowId = `${taskQueue}-${children}-${run}`;
          const started = performance.now();
          await client.workflow.execute('leadRunWorkflow', { taskQueue, workflowId, args: [input] });
          wall[children].push(performance.now() - started);
          if (children === 1) {
            const child = await client.workflow.getHandle(`${workflowId}/task/c0`).describe();
            childOwn.push((child.closeTime?.getTime() ?? 0) - child.startTime.getTime());
          }
        }
      }
    });
    const local: Record<number, number[]> = { 1: [], 3: [] };
    for (let run = 0; run < RUNS; run++) {
      for (const children of [1, 3]) local[children].push(await inProcess(setUp(children), children));
    }
    const perDelegation = wall[1].map((ms, i) => ms - wall[0][i] - childOwn[i]);
    const row = msRow;
    return [
      row('lead, one ls turn instead of delegating, wall', wall[0]),
      row("the child's own execution (start to close)", childOwn),
      row('lead + 1 child, wall', wall[1]),
      row('lead + 3 parallel children, wall', wall[3]),
      row('overhead of one delegation (1 child − ls turn − child own)', perDelegation),
      row('lead + 1 child, in-process, no Temporal', local[1]),
      row('lead + 3 children, in-process, no Temporal', local[3]),
    ];
  } finally {
    await native.close();
    await connection.close();
  }
}
