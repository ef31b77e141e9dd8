/**
 * `node dist/bench/history-anatomy.js`: what one run's history holds, by event type and by payload (issue 50).
 * Runs `bench/load.ts`'s workload (a lead that delegates three subagents in one response; `--child answer` by
 * default) and the plain-Temporal floor's run of the same shape, a few of each, on one dev server with a
 * worker process each; then fetches every execution's history on each task queue and prints, per run:
 *   - events and bytes (protobuf encoding of each event) by event type;
 *   - bytes by payload kind: each payload field of each event type (a child's input, an activity's input by
 *     activity type, its result, memo, search attributes, markers, signals, headers …), with counts;
 *   - for the largest JSON payload kinds, their bytes by top-level field (which part of a child's input, of a
 *     model activity's input, is large).
 *
 * Flags: --runs 4 · --child answer|read-then-answer · --json (one JSON object on stdout) · --sequence (the
 * first run's executions and the admission workflows', event by event, on stderr).
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { connectOrStartServer } from '../devserver/temporal-server';
import { SHARED_FIELDS_ENCODING } from '../payloads/shared-fields-codec';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { tempDir } from '../test/support/subagent-input';
import { bundleFloorWorkflows, runFloor, spawnFloorWorker } from './floor/floor';
import { connectProjectClient } from './support/project-client';
import {
  CHILD_ACTIVITIES,
  FANOUT_CHILDREN,
  fanOutInput,
  type FanOutChildWork,
} from './support/fanout-workload';

const { HistoryEvent } = temporal.api.history.v1;
const { Payload } = temporal.api.common.v1;
const EventType = temporal.api.enums.v1.EventType;

/** Bytes and a count, summed over every run, divided by the runs when printed. */
interface Tally {
  count: number;
  bytes: number;
}

export interface Anatomy {
  runs: number;
  executions: number;
  events: Record<string, Tally>;
  payloads: Record<string, Tally>;
  /** Per payload kind (JSON only): bytes by top-level field of the decoded value (of each argument). */
  fields: Record<string, Record<string, number>>;
}

function add(map: Record<string, Tally>, key: string, bytes: number): void {
  const tally = (map[key] ??= { count: 0, bytes: 0 });
  tally.count += 1;
  tally.bytes += bytes;
}

type ProtoPayload = temporal.api.common.v1.IPayload;

function isPayload(value: unknown): value is ProtoPayload {
  return (
    typeof value === 'object' &&
    value !== null &&
    'data' in value &&
    'metadata' in value &&
    (value as { data: unknown }).data instanceof Uint8Array
  );
}

const textDecoder = new TextDecoder();

function encodingOf(payload: ProtoPayload): string {
  const raw = payload.metadata?.encoding;
  return raw ? textDecoder.decode(raw) : 'none';
}

/** The top-level fields of a JSON payload and their serialized length; the whole value as `(value)` otherwise. */
function jsonFields(payload: ProtoPayload): Record<string, number> | undefined {
  const encoding = encodingOf(payload);
  if (!['json/plain', SHARED_FIELDS_ENCODING].includes(encoding) || !payload.data) return undefined;
  const parsed = JSON.parse(textDecoder.decode(payload.data)) as unknown;
  // A shared-fields payload's own fields are in `value`, each stored one a digest there.
  const value = encoding === SHARED_FIELDS_ENCODING ? (parsed as { value: unknown }).value : parsed;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { '(value)': payload.data.length };
  }
  const out: Record<string, number> = {};
  for (const [key, field] of Object.entries(value as Record<string, unknown>)) {
    out[key] = JSON.stringify(field)?.length ?? 0;
  }
  return out;
}

/** What names the payload kind besides its field: the activity type, the child's workflow type, the signal. */
function qualifier(attributes: Record<string, unknown>): string {
  const named = (key: string) => (attributes[key] as { name?: string } | undefined)?.name;
  return (
    named('activityType') ??
    named('workflowType') ??
    (attributes.signalName as string | undefined) ??
    (attributes.markerName as string | undefined) ??
    ''
  );
}

/** Every payload under `value`, with the path of fields (no indexes, map keys kept for memo and headers). */
function walkPayloads(value: unknown, path: string, visit: (path: string, payload: ProtoPayload) => void) {
  if (isPayload(value)) return visit(path, value);
  if (Array.isArray(value)) {
    for (const item of value) walkPayloads(item, path, visit);
    return;
  }
  if (typeof value !== 'object' || value === null || value instanceof Uint8Array) return;
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    if (child === null || child === undefined) continue;
    // Map entries (memo fields, search attributes, header fields) keep their key: which one is large.
    walkPayloads(child, path === '' ? key : `${path}.${key}`, visit);
  }
}

/** Adds one execution's history to `anatomy`. */
export function tallyHistory(anatomy: Anatomy, history: temporal.api.history.v1.IHistory): void {
  anatomy.executions += 1;
  for (const event of history.events ?? []) {
    const type = EventType[event.eventType ?? 0].replace(/^EVENT_TYPE_/, '');
    add(anatomy.events, type, HistoryEvent.encode(event).finish().length);
    const attributesKey = Object.keys(event).find((key) => key.endsWith('EventAttributes'));
    if (!attributesKey) continue;
    const attributes = (event as Record<string, unknown>)[attributesKey] as Record<string, unknown>;
    const of = qualifier(attributes);
    walkPayloads(attributes, '', (path, payload) => {
      const bytes = Payload.encode(payload).finish().length;
      const encoding = encodingOf(payload);
      const kind = `${type}${of ? `[${of}]` : ''}.${path}${encoding === 'json/plain' ? '' : ` (${encoding})`}`;
      add(anatomy.payloads, kind, bytes);
      const fields = jsonFields(payload);
      if (!fields) return;
      const perKind = (anatomy.fields[kind] ??= {});
      for (const [key, length] of Object.entries(fields)) perKind[key] = (perKind[key] ?? 0) + length;
    });
  }
}

/** One execution's events in order, one line: each type shortened, with what names it (activity, signal, marker). */
export function eventSequence(history: temporal.api.history.v1.IHistory): string {
  return (history.events ?? [])
    .map((event) => {
      const type = EventType[event.eventType ?? 0].replace(/^EVENT_TYPE_/, '');
      const attributesKey = Object.keys(event).find((key) => key.endsWith('EventAttributes'));
      const of = attributesKey
        ? qualifier((event as Record<string, unknown>)[attributesKey] as Record<string, unknown>)
        : '';
      return of ? `${type}[${of}]` : type;
    })
    .join(' ');
}

async function anatomyOf(
  client: Client,
  taskQueue: string,
  runs: number,
  sequenceOf?: (workflowId: string) => boolean,
): Promise<Anatomy> {
  const anatomy: Anatomy = { runs, executions: 0, events: {}, payloads: {}, fields: {} };
  for await (const info of client.workflow.list({ query: `TaskQueue = "${taskQueue}"` })) {
    const history = await client.workflow.getHandle(info.workflowId, info.runId).fetchHistory();
    tallyHistory(anatomy, history);
    if (sequenceOf?.(info.workflowId)) {
      process.stderr.write(
        `${info.workflowId} (${history.events?.length ?? 0} events): ${eventSequence(history)}\n`,
      );
    }
  }
  return anatomy;
}

async function stopWorker(worker: ChildProcess): Promise<void> {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    worker.once('exit', () => resolve());
    worker.kill('SIGTERM');
  });
}

const perRun = (anatomy: Anatomy, n: number) => (n / anatomy.runs).toFixed(1);

function sortedRows(map: Record<string, Tally>): [string, Tally][] {
  return Object.entries(map).sort(([, a], [, b]) => b.bytes - a.bytes);
}

function formatAnatomy(name: string, anatomy: Anatomy): string {
  const total = Object.values(anatomy.events).reduce((sum, t) => sum + t.bytes, 0);
  const events = Object.values(anatomy.events).reduce((sum, t) => sum + t.count, 0);
  const payloadBytes = Object.values(anatomy.payloads).reduce((sum, t) => sum + t.bytes, 0);
  const lines = [
    `## ${name}: ${perRun(anatomy, events)} events, ${perRun(anatomy, total)} B a run ` +
      `(${perRun(anatomy, anatomy.executions)} executions; payloads ${perRun(anatomy, payloadBytes)} B)`,
    '',
    '| event type | events/run | bytes/run |',
    '|---|---:|---:|',
    ...sortedRows(anatomy.events).map(
      ([type, t]) => `| ${type} | ${perRun(anatomy, t.count)} | ${perRun(anatomy, t.bytes)} |`,
    ),
    '',
    '| payload kind | payloads/run | bytes/run |',
    '|---|---:|---:|',
    ...sortedRows(anatomy.payloads).map(
      ([kind, t]) => `| ${kind} | ${perRun(anatomy, t.count)} | ${perRun(anatomy, t.bytes)} |`,
    ),
  ];
  const largest = sortedRows(anatomy.payloads)
    .filter(([kind]) => anatomy.fields[kind])
    .slice(0, 6);
  for (const [kind] of largest) {
    const fields = Object.entries(anatomy.fields[kind]).sort(([, a], [, b]) => b - a);
    lines.push(
      '',
      `${kind}, by top-level field (bytes/run): ` +
        fields.map(([key, bytes]) => `${key} ${perRun(anatomy, bytes)}`).join(', '),
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '4' },
      child: { type: 'string', default: 'answer' },
      json: { type: 'boolean', default: false },
      sequence: { type: 'boolean', default: false },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a whole number above 0');
  const childWork = values.child as FanOutChildWork;
  if (!(childWork in CHILD_ACTIVITIES)) {
    throw new Error(`--child takes ${Object.keys(CHILD_ACTIVITIES).join(' or ')} (got ${values.child})`);
  }
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const dir = tempDir('bench-history-anatomy');
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const [server, bundle, floorBundle] = await Promise.all([
    connectOrStartServer({ headless: true, dbFilename: join(dir, 'temporal.db'), log }),
    bundleProjectWorkflows(),
    bundleFloorWorkflows(),
  ]);
  const bundlePath = join(dir, 'workflows.js');
  writeFileSync(bundlePath, bundle);
  const floorBundlePath = join(dir, 'floor-workflows.js');
  writeFileSync(floorBundlePath, floorBundle);
  const workerConfig = join(dir, 'worker.yaml');
  const most = runs * FANOUT_CHILDREN;
  writeFileSync(workerConfig, `subagent_runtime:\n  max_running: ${most}\n  max_queued: ${most}\n`);
  const { connection, api } = await connectProjectClient(server);
  // The histories as stored: no codec, so what is measured is what the server keeps.
  const rawClient = new Client({ connection, namespace: server.namespace });
  try {
    const stamp = Date.now();
    const oursQueue = `anatomy-ours-${stamp}`;
    const floorQueue = `anatomy-floor-${stamp}`;
    const input = fanOutInput('bench-history-anatomy', childWork);
    const [worker, floorWorker] = await Promise.all([
      spawnWorkerProcess({
        address: server.address,
        namespace: server.namespace,
        taskQueue: oursQueue,
        bundlePath,
        env: { SUBAGENTS_CONFIG: workerConfig },
      }),
      spawnFloorWorker({
        address: server.address,
        namespace: server.namespace,
        taskQueue: floorQueue,
        bundlePath: floorBundlePath,
      }),
    ]);
    try {
      const results = await Promise.all(
        Array.from({ length: runs }, async (_, i) => {
          const handle = await api.startRun(input, { taskQueue: oursQueue, runId: `anatomy-${stamp}-${i}` });
          return (await handle.result()).status;
        }),
      );
      if (results.some((status) => status !== 'completed'))
        throw new Error(`a run did not complete: ${results.join(', ')}`);
      const floorDone = await Promise.all(
        Array.from({ length: runs }, (_, i) =>
          runFloor(
            rawClient,
            floorQueue,
            `anatomy-floor-${stamp}-${i}`,
            FANOUT_CHILDREN,
            CHILD_ACTIVITIES[childWork],
          ),
        ),
      );
      if (floorDone.some((done) => !done)) throw new Error('a floor run did not complete');
    } finally {
      await Promise.all([stopWorker(worker), stopWorker(floorWorker)]);
    }
    // Visibility is written after the executions close: wait until it lists every execution of each queue.
    const expected = async (queue: string, count: number) => {
      for (;;) {
        const { count: listed } = await rawClient.workflow.count(`TaskQueue = "${queue}"`);
        if (listed >= count) return;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    await Promise.all([
      expected(oursQueue, runs * (1 + FANOUT_CHILDREN)),
      expected(floorQueue, runs * (1 + FANOUT_CHILDREN)),
    ]);
    // --sequence: the first run's executions (and the admission workflows'), event by event, on stderr.
    const firstRun = values.sequence
      ? (id: string) => id.includes(`-${stamp}-0`) || !id.includes(`-${stamp}-`)
      : undefined;
    const ours = await anatomyOf(rawClient, oursQueue, runs, firstRun);
    const floor = await anatomyOf(rawClient, floorQueue, runs, firstRun);
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ child: childWork, ours, floor }, null, 2)}\n`);
    } else {
      process.stdout.write(
        `${formatAnatomy(`ours (--child ${childWork}, ${runs} runs)`, ours)}\n\n` +
          `${formatAnatomy(`floor (${runs} runs)`, floor)}\n`,
      );
    }
  } finally {
    await connection.close();
    await server.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
