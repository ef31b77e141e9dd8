/**
 * Orchestration cost of one agent turn (a model activity + one tool activity) with an instant model, on the
 * real dev server, beside the same turns run in-process without Temporal.
 *
 * Per-turn time on Temporal is read from history: the gap between consecutive `callModel` schedules.
 */
import { testActivities } from '../test/support/activities';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { ChatMessage } from '../contracts/messages';
import type { SubagentInput } from '../contracts/subagent';
import type { TemporalServer } from '../devserver/temporal-server';
import { createProjectWorker } from '../worker/worker';
import { subagentInput, tempDir, writeScript } from '../test/support/subagent-input';
import { percentile, type BenchResult } from './stats';
import { projectDataConverter } from '../payloads/data-converter';

const { callModel, executeToolCall } = testActivities();

const TURNS = 40;
const RUNS = 3;

/** The tool each turn calls: `ls` runs as a local activity (idempotent), an append as a regular one. */
const TOOLS = {
  'ls (idempotent: local activity)': { name: 'ls', args: { path: '.' } },
  'append (not idempotent: activity)': {
    name: 'write_file',
    args: { path: 'log.txt', content: 'x', append: true },
  },
} as const;
type ToolKind = keyof typeof TOOLS;

function setUp(tool: ToolKind): { input: SubagentInput } {
  const dir = tempDir('bench-turns');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const turns = Array.from({ length: TURNS - 1 }, (_, i) => ({
    content: `turn ${i + 1}`,
    tool_calls: [TOOLS[tool]],
    usage: { input_tokens: 10, output_tokens: 1 },
  }));
  const scriptFile = writeScript(dir, { scripts: [{ turns: [...turns, { content: 'done' }] }] });
  // Loop detection would stop 40 identical calls: this measures the loop, not the guard.
  return {
    input: subagentInput({
      workspace,
      scriptFile,
      config: {
        loop_detection: { enabled: false },
        subagents: { agents: { 'general-purpose': { max_turns: 100 } } },
      },
    }),
  };
}

async function inProcessTurns(input: SubagentInput): Promise<number[]> {
  const messages: ChatMessage[] = [
    { role: 'system', content: input.agent.system_prompt },
    { role: 'user', content: input.prompt },
  ];
  const times: number[] = [];
  for (;;) {
    const started = performance.now();
    const response = await callModel({
      model: input.agent.model,
      agent_name: input.agent.name,
      messages,
      tools: [],
    });
    messages.push({ role: 'assistant', content: response.content, tool_calls: response.tool_calls });
    for (const call of response.tool_calls) {
      const result = await executeToolCall({
        call,
        workspace: input.scope.workspace,
        allowed_tools: input.agent.tools,
        sandbox: input.scope.sandbox,
      });
      messages.push({ role: 'tool', tool_call_id: call.id, name: call.name, content: result.content });
    }
    times.push(performance.now() - started);
    if (response.tool_calls.length === 0) return times;
  }
}

export async function benchTurnOverhead(server: TemporalServer): Promise<BenchResult[]> {
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-turns-${Date.now()}`;
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      dataConverter: projectDataConverter(),
    });
    const worker = await createProjectWorker({ connection: native, namespace: server.namespace, taskQueue });
    const results: BenchResult[] = [];
    await worker.runUntil(async () => {
      for (const tool of Object.keys(TOOLS) as ToolKind[]) {
        const gaps: number[] = [];
        const eventsPerTurn: number[] = [];
        for (let run = 0; run < RUNS; run++) {
          const { input } = setUp(tool);
          const handle = await client.workflow.start('subagentWorkflow', {
            taskQueue,
            workflowId: `${taskQueue}/${tool.split(' ')[0]}/task/${run}`,
            args: [input],
          });
          await handle.result();
          const events = (await handle.fetchHistory()).events ?? [];
          const schedules = events
            .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
            .map(
              (e) => Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6),
            );
          for (let i = 1; i < schedules.length; i++) gaps.push(schedules[i] - schedules[i - 1]);
          eventsPerTurn.push(events.length / schedules.length);
        }
        const local: number[] = [];
        for (let run = 0; run < RUNS; run++) local.push(...(await inProcessTurns(setUp(tool).input)));
        results.push(
          {
            name: `turn, ${tool}, Temporal`,
            unit: 'ms',
            p50: percentile(gaps, 50),
            p95: percentile(gaps, 95),
            samples: gaps.length,
          },
          {
            name: `turn, ${tool.split(' ')[0]}, in-process, no Temporal`,
            unit: 'ms',
            p50: percentile(local, 50),
            p95: percentile(local, 95),
            samples: local.length,
          },
          {
            name: `history events per turn, ${tool.split(' ')[0]}`,
            unit: 'events',
            p50: percentile(eventsPerTurn, 50),
            p95: Math.max(...eventsPerTurn),
            samples: eventsPerTurn.length,
          },
        );
      }
    });
    return results;
  } finally {
    await native.close();
    await connection.close();
  }
}
