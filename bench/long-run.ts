/**
 * A long subagent's history, turn by turn: bytes and events each turn adds at turn 10, 100 and 300, with the
 * project's claim-check codec and without any codec; the turn's orchestration time early and late in the run;
 * and what the codec costs one model call (encode + decode of a model call's input, in-process).
 *
 * A turn here is one model call and one `read_file` of a file of 4 KB or 24 KB (a different file each turn):
 * 24 KB is above the codec's 16 KB threshold, 4 KB below it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter, type DataConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import type { ChatMessage } from '../contracts/messages';
import type { TemporalServer } from '../devserver/temporal-server';
import { createProjectWorker } from '../worker/worker';
import { projectCodec, projectDataConverter } from '../payloads/data-converter';
import { executionHistories } from '../test/support/histories';
import { subagentInput, tempDir, writeScript } from '../test/support/subagent-input';
import { percentile, type BenchResult } from './stats';

const TURNS = 300;
const FILES = 50;
const AT_TURNS = [10, 100, 300] as const;
/** Turns averaged around each point (per-turn figures are noisy one by one). */
const WINDOW = 5;

type IEvent = temporal.api.history.v1.IHistoryEvent;

function setUp(fileBytes: number) {
  const dir = tempDir('bench-long');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  for (let k = 0; k < FILES; k++) {
    const line = `part ${k}: ${'abcdefghijklmnopqrstuvwxyz'.repeat(3)} ${k * 7919}\n`;
    writeFileSync(join(workspace, `part-${k}.txt`), line.repeat(Math.ceil(fileBytes / line.length)));
  }
  const turns = Array.from({ length: TURNS }, (_, k) => ({
    content: `Read ${k} parts; now part ${k % FILES}.`,
    tool_calls: [{ name: 'read_file', args: { path: `part-${k % FILES}.txt` } }],
    usage: { input_tokens: 1000, output_tokens: 20 },
  }));
  return subagentInput({
    workspace,
    scriptFile: writeScript(dir, { scripts: [{ turns }] }),
    config: {
      loop_detection: { enabled: false },
      subagents: { agents: { 'general-purpose': { max_turns: TURNS, timeout_seconds: 3600 } } },
    },
  });
}

function eventMs(event: IEvent): number {
  return Number(event.eventTime?.seconds ?? 0) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6);
}

interface TurnFigures {
  bytes: number;
  events: number;
  /** Schedule of this turn's model call → the next one's. */
  ms: number;
}

/** Every execution's events, first to last, split into turns at each `callModel` schedule. */
async function turnsOf(client: Client, workflowId: string, firstRunId: string): Promise<TurnFigures[]> {
  const events: IEvent[] = (await executionHistories(client, workflowId, firstRunId)).flatMap(
    ({ history }) => history.events ?? [],
  );
  const turns: TurnFigures[] = [];
  let current: { bytes: number; events: number; start: number } | undefined;
  for (const event of events) {
    const bytes = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel') {
      if (current)
        turns.push({ bytes: current.bytes, events: current.events, ms: eventMs(event) - current.start });
      current = { bytes: 0, events: 0, start: eventMs(event) };
    }
    if (current) {
      current.bytes += bytes;
      current.events += 1;
    }
  }
  return turns;
}

async function longRun(
  server: TemporalServer,
  dataConverter: DataConverter | undefined,
  fileBytes: number,
  label: string,
): Promise<TurnFigures[]> {
  const connection = await Connection.connect({ address: server.address });
  const native = await NativeConnection.connect({ address: server.address });
  const taskQueue = `bench-long-${label}-${Date.now()}`;
  try {
    const client = new Client({
      connection,
      namespace: server.namespace,
      ...(dataConverter && { dataConverter }),
    });
    const worker = await createProjectWorker({
      connection: native,
      namespace: server.namespace,
      taskQueue,
      // Without a codec: Temporal's default conversion only, every payload inline in history.
      ...(dataConverter === undefined && { tuning: { dataConverter: {} } }),
    });
    return await worker.runUntil(async () => {
      const handle = await client.workflow.start('subagentWorkflow', {
        taskQueue,
        workflowId: `${taskQueue}/task/long`,
        args: [setUp(fileBytes)],
      });
      await handle.result();
      return turnsOf(client, handle.workflowId, handle.firstExecutionRunId);
    });
  } finally {
    await native.close();
    await connection.close();
  }
}

function around(turns: TurnFigures[], at: number): TurnFigures[] {
  return turns.slice(Math.max(0, at - WINDOW), Math.min(turns.length, at));
}

/** Encode + decode of one model call's input through the claim-check codec, in-process. */
async function codecCost(): Promise<number[]> {
  const codec = projectCodec();
  const tail: ChatMessage[] = [
    {
      role: 'assistant',
      content: 'Reading the next part.',
      tool_calls: [{ id: 'c', name: 'read_file', args: '{}' }],
    },
    { role: 'tool', tool_call_id: 'c', name: 'read_file', content: 'x'.repeat(4096) },
  ];
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    // A distinct input each time, as every turn's is: nothing is served from a cache it would not have.
    const payload = defaultPayloadConverter.toPayload({
      messages: tail,
      turn: i,
      filler: 'y'.repeat(20_000),
    });
    const started = performance.now();
    const [encoded] = await codec.encode([payload]);
    await codec.decode([encoded]);
    times.push(performance.now() - started);
  }
  return times;
}

export async function benchLongRun(server: TemporalServer): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const [fileBytes, codecLabel, converter] of [
    [4096, 'codec', projectDataConverter()],
    [4096, 'no codec', undefined],
    [24576, 'codec', projectDataConverter()],
    [24576, 'no codec', undefined],
  ] as const) {
    const label = `${fileBytes / 1024} KB results, ${codecLabel}`;
    const turns = await longRun(server, converter, fileBytes, `${fileBytes}-${codecLabel.replace(' ', '-')}`);
    for (const at of AT_TURNS) {
      const window = around(turns, at);
      const bytes = window.map((t) => t.bytes);
      const events = window.map((t) => t.events);
      results.push(
        {
          name: `history bytes added by turn ${at}, ${label}`,
          unit: 'B',
          p50: percentile(bytes, 50),
          p95: Math.max(...bytes),
          samples: bytes.length,
        },
        {
          name: `history events added by turn ${at}, ${label}`,
          unit: 'events',
          p50: percentile(events, 50),
          p95: Math.max(...events),
          samples: events.length,
        },
      );
    }
    const early = turns.slice(5, 15).map((t) => t.ms);
    const late = turns.slice(-10).map((t) => t.ms);
    results.push(
      {
        name: `turn time near turn 10, ${label}`,
        unit: 'ms',
        p50: percentile(early, 50),
        p95: percentile(early, 95),
        samples: early.length,
      },
      {
        name: `turn time near turn 300, ${label}`,
        unit: 'ms',
        p50: percentile(late, 50),
        p95: percentile(late, 95),
        samples: late.length,
      },
      {
        name: `history of ${TURNS} turns, all executions, ${label}`,
        unit: 'KB',
        p50: turns.reduce((sum, t) => sum + t.bytes, 0) / 1024,
        p95: turns.reduce((sum, t) => sum + t.bytes, 0) / 1024,
        samples: 1,
      },
    );
  }
  const cost = await codecCost();
  results.push({
    name: 'claim-check codec, encode + decode of a 20 KB model input',
    unit: 'ms',
    p50: percentile(cost, 50),
    p95: percentile(cost, 95),
    samples: cost.length,
  });
  return results;
}
