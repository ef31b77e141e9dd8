/**
 * `npm run bench:overload`: the system on a saturated host. N fan-out lead runs (three subagents each, one
 * `bash` call per subagent) are started at once on one dev server and `--workers` worker processes, while `--busy` CPU
 * busy loops (`node -e 'for(;;){}'`) compete for the cores. Printed:
 *   - wall time, runs/s, latency p50/p95, failed runs;
 *   - worker crashes (a crashed worker is restarted, as `run` does, and counted);
 *   - model calls asked of the provider against what the runs need (each attempt of a model activity is a
 *     call: the sum of the `attempt` of every started model activity, from history);
 *   - bash calls the model was told were interrupted ("may or may not have run");
 *   - the most subagents holding a slot at once (the admission workflow's state, sampled);
 *   - the admission workflows' events per delegation, signals, workflow tasks timed out and task latency
 *     (scheduled → completed, from their histories, every continued execution included).
 *
 * Flags: --runs 50 · --busy 16 · --max-running 200 · --workers 1 · --deadline-s 900 · --provider scripted|openai (openai: a
 * local fake Chat Completions server over HTTP that answers after --model-ms, default 300, and counts the
 * requests it gets) · --label text · --json.
 * The busy loops are this benchmark's own children: they stop with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client, Connection, type WorkflowExecutionInfo } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { tsToMs } from '@temporalio/common/lib/time';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { SubagentsClient } from '../client/api';
import { admissionStateQuery, admissionWorkflowId } from '../contracts/admission';
import { taskQueueHeartbeats } from '../contracts/worker-heartbeats';
import { WORKSPACE_FAILURES } from '../contracts/workspace';
import type { ModelScriptFileInput } from '../activities/model/model-script';
import { projectDataConverter } from '../payloads/data-converter';
import { connectOrStartServer } from '../devserver/temporal-server';
import { bundleProjectWorkflows } from '../worker/worker';
import { spawnWorkerProcess } from '../test/support/chaos-workers';
import { startFakeOpenAI, type FakeResponder } from '../test/support/fake-openai';
import { leadInput, partTaskCalls, tempDir, writeScript } from '../test/support/subagent-input';
import { percentile } from './stats';

const CHILDREN = 3;
/** Model calls one run needs: the lead's two, and two for each subagent. */
const CALLS_PER_RUN = 2 + CHILDREN * 2;

const { EventType } = temporal.api.enums.v1;

/** Each subagent's one bash call. */
const COUNT_COMMAND = 'echo counted; wc -l < notes.md';

/** The lead's delegations, the same for the scripted model and the fake HTTP one. */
const partCalls = () => partTaskCalls(CHILDREN, (i) => `Count the lines of part ${i}.`);

function overloadScript(): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [{ tool_calls: partCalls() }, { content: 'Combined: {{tool_result}}' }],
      },
      {
        agent: 'general-purpose',
        turns: [
          { tool_calls: [{ name: 'bash', id: 'count', args: { command: COUNT_COMMAND } }] },
          { content: 'Part done: {{tool_result:count}}' },
        ],
      },
    ],
  };
}

/** The same work as `overloadScript`, answered over HTTP: the lead (it has `task`) delegates, subagents run bash. */
function fakeModel(delayMs: number): FakeResponder {
  return (request) => {
    const lead = (request.tools ?? []).some((tool) => tool.function.name === 'task');
    const answered = request.messages.some((message) => message.role === 'tool');
    if (answered) return { content: lead ? 'Combined.' : 'Part done.', delay_ms: delayMs };
    if (!lead) {
      return {
        tool_calls: [{ name: 'bash', args: { command: COUNT_COMMAND } }],
        delay_ms: delayMs,
      };
    }
    return { tool_calls: partCalls(), delay_ms: delayMs };
  };
}

export interface OverloadFigures {
  label: string;
  provider: string;
  /** The task queue the runs went to (their ids: `<task_queue>-<i>`), for a caller that reads their histories. */
  task_queue: string;
  runs: number;
  busy_loops: number;
  max_running: number;
  wall_s: number;
  runs_per_s: number;
  latency_p50_s: number;
  latency_p95_s: number;
  completed_runs: number;
  failed_runs: number;
  unfinished_runs: number;
  worker_crashes: number;
  /** The longest a live worker's heartbeat looked silent to a ListWorkers poller (ms). */
  worker_heartbeat_silence_max_ms: number;
  model_calls: number;
  model_calls_needed: number;
  model_call_ratio: number;
  bash_interrupted: number;
  /** Bash calls that ran: started attempts, less those a host refused before running them (below). */
  bash_calls: number;
  /**
   * Attempts a host refused unrun because the run's workspace lives on another host (`WorkspaceMoved`: two of a
   * run's first calls raced to two hosts); each is sent on to the home host, where it runs once.
   */
  bash_refused_moved: number;
  peak_slots_held: number;
  /** The subagents' pool once every run ended (read while the workers still answer): held, granted, given back. */
  slots_at_end: { running: number; granted: number; released: number };
  admission: AdmissionFigures;
}

export interface AdmissionFigures {
  executions: number;
  events: number;
  events_per_delegation: number;
  signals_received: number;
  /** Signal commands it sent (one per answer before answers were batched). */
  signals_sent: number;
  /** Local activity markers: a delivery of many answers in executions from before deliveries were activities. */
  markers: number;
  /** Deliveries of many answers each (`sendAdmissionAnswers` activities). */
  deliveries: number;
  /** Workers' lease reports (`admission_lease` Updates), each carrying the grants made from a lease since the last. */
  lease_reports: number;
  workflow_tasks: number;
  workflow_tasks_timed_out: number;
  task_latency_p50_ms: number;
  task_latency_p95_ms: number;
  task_latency_max_ms: number;
}

const round = (value: number, digits = 2) => Number(value.toFixed(digits));

async function executions(client: Client, query: string): Promise<WorkflowExecutionInfo[]> {
  const out: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query })) out.push(info);
  return out;
}

async function histories(client: Client, infos: readonly WorkflowExecutionInfo[]) {
  return Promise.all(
    infos.map(async (info) => client.workflow.getHandle(info.workflowId, info.runId).fetchHistory()),
  );
}

/** Model calls made (every attempt), bash calls, from the histories of every run and subagent. */
async function countCalls(client: Client, taskQueue: string) {
  const infos = await executions(
    client,
    `TaskQueue = "${taskQueue}" AND WorkflowType != "admissionWorkflow"`,
  );
  let modelCalls = 0;
  let bashCalls = 0;
  // An at-most-once tool whose attempt timed out once started (its heartbeat lost) is reported to the model as
  // "interrupted … may or may not have run". One that waited too long for its home host's queue never started:
  // it is sent again (workflows/workspace-route.ts), and counts once, as the call it is.
  let bashInterrupted = 0;
  let bashMoved = 0;
  const interruptedBy = new Map<string, number>();
  const { TIMEOUT_TYPE_SCHEDULE_TO_START } = temporal.api.enums.v1.TimeoutType;
  for (let i = 0; i < infos.length; i += 16) {
    for (const history of await histories(client, infos.slice(i, i + 16))) {
      const scheduled = new Map<number, string>();
      for (const event of history.events ?? []) {
        const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
        if (type) scheduled.set(Number(event.eventId), type);
        const started = event.activityTaskStartedEventAttributes;
        if (started && scheduled.get(Number(started.scheduledEventId)) === 'callModel') {
          modelCalls += started.attempt ?? 1;
        }
        if (started && scheduled.get(Number(started.scheduledEventId)) === 'executeToolCall') bashCalls += 1;
        const failed = event.activityTaskFailedEventAttributes;
        if (
          failed &&
          scheduled.get(Number(failed.scheduledEventId)) === 'executeToolCall' &&
          failed.failure?.applicationFailureInfo?.type === WORKSPACE_FAILURES.moved
        ) {
          bashMoved += 1;
        }
        const timedOut = event.activityTaskTimedOutEventAttributes;
        const neverStarted =
          timedOut?.failure?.timeoutFailureInfo?.timeoutType === TIMEOUT_TYPE_SCHEDULE_TO_START;
        if (
          timedOut &&
          !neverStarted &&
          scheduled.get(Number(timedOut.scheduledEventId)) === 'executeToolCall'
        ) {
          bashInterrupted += 1;
          const why = timedOut?.failure?.message ?? 'timed out';
          interruptedBy.set(why, (interruptedBy.get(why) ?? 0) + 1);
        }
      }
    }
  }
  if (interruptedBy.size > 0)
    process.stderr.write(
      `bash calls interrupted by: ${[...interruptedBy].map(([why, n]) => `${why} (${n})`).join(', ')}\n`,
    );
  return { modelCalls, bashCalls: bashCalls - bashMoved, bashMoved, bashInterrupted };
}

/** The admission workflows' histories, every execution of both pools. */
async function admissionFigures(
  client: Client,
  taskQueue: string,
  delegations: number,
): Promise<AdmissionFigures> {
  const infos = await executions(client, `TaskQueue = "${taskQueue}" AND WorkflowType = "admissionWorkflow"`);
  let events = 0;
  let signals = 0;
  let sent = 0;
  let markers = 0;
  let deliveries = 0;
  let leaseReports = 0;
  let tasks = 0;
  let timedOut = 0;
  const latencies: number[] = [];
  for (const history of await histories(client, infos)) {
    const scheduledAt = new Map<number, number>();
    for (const event of history.events ?? []) {
      events += 1;
      const at = tsToMs(event.eventTime);
      switch (event.eventType) {
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
          signals += 1;
          break;
        case EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
          sent += 1;
          break;
        case EventType.EVENT_TYPE_MARKER_RECORDED:
          if (event.markerRecordedEventAttributes?.markerName === 'core_local_activity') markers += 1;
          break;
        case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
          if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'sendAdmissionAnswers')
            deliveries += 1;
          break;
        case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
          leaseReports += 1;
          break;
        case EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
          scheduledAt.set(Number(event.eventId), at);
          break;
        case EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
          timedOut += 1;
          break;
        case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED: {
          tasks += 1;
          const from = scheduledAt.get(Number(event.workflowTaskCompletedEventAttributes?.scheduledEventId));
          if (from !== undefined) latencies.push(at - from);
          break;
        }
        default:
      }
    }
  }
  return {
    executions: infos.length,
    events,
    events_per_delegation: round(events / Math.max(delegations, 1)),
    signals_received: signals,
    signals_sent: sent,
    markers,
    deliveries,
    lease_reports: leaseReports,
    workflow_tasks: tasks,
    workflow_tasks_timed_out: timedOut,
    task_latency_p50_ms: round(percentile(latencies, 50), 0),
    task_latency_p95_ms: round(percentile(latencies, 95), 0),
    task_latency_max_ms: round(Math.max(0, ...latencies), 0),
  };
}

/**
 * The subagents' pool once its last releases arrived (signals the admission workflow may still be working
 * through when the runs end), or as it stands after 60 s. A slot granted from a worker's lease and given back
 * before the lease's next report is undone on the worker (activities/admission.ts): the admission workflow never
 * counts it, so `granted` may stay below the delegations.
 */
async function settledSlots(client: Client, taskQueue: string): Promise<OverloadFigures['slots_at_end']> {
  const handle = client.workflow.getHandle(admissionWorkflowId(taskQueue));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { running, counters } = await handle.query(admissionStateQuery);
    const slots = { running: running.length, granted: counters.granted, released: counters.released };
    if ((slots.running === 0 && slots.released === slots.granted) || Date.now() > deadline) return slots;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function busyLoops(n: number): ChildProcess[] {
  return Array.from({ length: n }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
}

interface Options {
  provider: 'scripted' | 'openai';
  modelMs: number;
  runs: number;
  busy: number;
  maxRunning: number;
  /** Worker processes on the task queue (default 1). */
  workers?: number;
  deadlineS: number;
  label: string;
  json: boolean;
}

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      runs: { type: 'string', default: '50' },
      busy: { type: 'string', default: '16' },
      'max-running': { type: 'string', default: '200' },
      workers: { type: 'string', default: '1' },
      'deadline-s': { type: 'string', default: '900' },
      provider: { type: 'string', default: 'scripted' },
      'model-ms': { type: 'string', default: '300' },
      label: { type: 'string', default: 'current' },
      json: { type: 'boolean', default: false },
    },
  });
  if (values.provider !== 'scripted' && values.provider !== 'openai') {
    throw new Error(`--provider takes scripted or openai (got ${values.provider})`);
  }
  const whole = (name: string, text: string, min: number) => {
    const n = Number(text);
    if (!Number.isInteger(n) || n < min)
      throw new Error(`--${name} takes a whole number ≥ ${min} (got ${text})`);
    return n;
  };
  return {
    provider: values.provider,
    modelMs: whole('model-ms', values['model-ms'], 0),
    runs: whole('runs', values.runs, 1),
    busy: whole('busy', values.busy, 0),
    maxRunning: whole('max-running', values['max-running'], 1),
    workers: whole('workers', values.workers, 1),
    deadlineS: whole('deadline-s', values['deadline-s'], 1),
    label: values.label,
    json: values.json,
  };
}

/** Runs the benchmark on `address`/`namespace` (a server the caller started) and returns its figures. */
export async function runOverload(
  server: { address: string; namespace: string },
  bundlePath: string,
  options: Options,
  log: (line: string) => void = () => undefined,
): Promise<OverloadFigures> {
  const dir = tempDir('bench-overload');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'notes.md'), 'one\ntwo\nthree\n');
  // Room in the queue for every delegation: admission must bound the load here, not refuse it.
  const maxQueued = Math.max(options.maxRunning, options.runs * CHILDREN);
  const fake =
    options.provider === 'openai'
      ? await startFakeOpenAI({ respond: fakeModel(options.modelMs) })
      : undefined;
  const input = leadInput({
    workspace,
    scriptFile: writeScript(dir, overloadScript()),
    prompt: 'Count the parts.',
    config: {
      subagent_runtime: { max_running: options.maxRunning, max_queued: maxQueued },
      ...(fake && {
        models: [
          {
            name: 'fake',
            provider: 'openai',
            model: 'fake-model',
            base_url: fake.url,
            api_key: '$BENCH_FAKE_KEY',
          },
        ],
      }),
    },
  });
  const workerConfig = join(dir, 'worker.yaml');
  writeFileSync(
    workerConfig,
    `subagent_runtime:\n  max_running: ${options.maxRunning}\n  max_queued: ${maxQueued}\n`,
  );
  const taskQueue = `bench-overload-${Date.now()}`;
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({
    connection,
    namespace: server.namespace,
    dataConverter: projectDataConverter(),
  });
  const loops = busyLoops(options.busy);
  let crashes = 0;
  let stopping = false;
  const workers: ChildProcess[] = [];
  const startWorker = async (): Promise<void> => {
    const worker = await spawnWorkerProcess({
      address: server.address,
      namespace: server.namespace,
      taskQueue,
      bundlePath,
      env: { SUBAGENTS_CONFIG: workerConfig, BENCH_FAKE_KEY: 'fake-key' },
    });
    workers.push(worker);
    worker.once('exit', (code, signal) => {
      if (stopping) return;
      crashes += 1;
      log(`worker exited (${signal ?? code}): restarting it`);
      void startWorker();
    });
  };
  let peak = 0;
  let sampling = true;
  // One query at a time, awaited before the connection closes.
  const sampler = (async () => {
    while (sampling) {
      await client.workflow
        .getHandle(admissionWorkflowId(taskQueue))
        .query(admissionStateQuery)
        .then((state) => (peak = Math.max(peak, state.running.length)))
        .catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  // How long a live worker's heartbeat looked silent to someone polling ListWorkers: for each worker, the time
  // since its latest heartbeat was first seen (a poll that comes late sees a newer one, so a slow poller does
  // not inflate it). What a watcher telling dead workers from slow ones would have to wait out on this host.
  let heartbeatSilenceMax = 0;
  const heartbeatSampler = (async () => {
    const firstSeen = new Map<string, { atMs: number; seenAt: number }>();
    while (sampling) {
      const beats = await taskQueueHeartbeats(client, server.namespace, taskQueue).catch(() => undefined);
      const now = performance.now();
      for (const beat of beats ?? []) {
        if (beat.status !== 'running' || beat.atMs === undefined) continue;
        const known = firstSeen.get(beat.identity);
        if (known?.atMs !== beat.atMs) firstSeen.set(beat.identity, { atMs: beat.atMs, seenAt: now });
        else heartbeatSilenceMax = Math.max(heartbeatSilenceMax, now - known.seenAt);
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  try {
    await Promise.all(Array.from({ length: options.workers ?? 1 }, () => startWorker()));
    const api = new SubagentsClient(client, server.namespace);
    const started = performance.now();
    const latencies: number[] = [];
    let completed = 0;
    let failed = 0;
    const deadline = new Promise<'deadline'>((resolve) =>
      setTimeout(() => resolve('deadline'), options.deadlineS * 1000).unref(),
    );
    const progress = setInterval(() => log(`${completed + failed} of ${options.runs} runs ended`), 15_000);
    const all = Promise.all(
      Array.from({ length: options.runs }, async (_, i) => {
        const begun = performance.now();
        const handle = await api.startRun(input, { taskQueue, runId: `${taskQueue}-${i}` });
        const result = await handle.result();
        latencies.push((performance.now() - begun) / 1000);
        if (result.status === 'completed') completed += 1;
        else failed += 1;
      }),
    );
    const ended = await Promise.race([all, deadline]);
    clearInterval(progress);
    const wall = (performance.now() - started) / 1000;
    if (ended === 'deadline') log(`deadline: ${options.deadlineS} s passed with runs unfinished`);
    // Visibility is written after the executions close: give it a moment.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const slotsAtEnd = await settledSlots(client, taskQueue);
    const calls = await countCalls(client, taskQueue);
    // The provider's own count, when it is ours to read: every request it received.
    if (fake) calls.modelCalls = fake.requests.filter((request) => request.body !== undefined).length;
    const needed = options.runs * CALLS_PER_RUN;
    return {
      label: options.label,
      provider: options.provider === 'openai' ? `openai, ${options.modelMs} ms a call` : 'scripted',
      task_queue: taskQueue,
      runs: options.runs,
      busy_loops: options.busy,
      max_running: options.maxRunning,
      wall_s: round(wall, 1),
      runs_per_s: round(completed / wall),
      latency_p50_s: round(percentile(latencies, 50), 1),
      latency_p95_s: round(percentile(latencies, 95), 1),
      completed_runs: completed,
      failed_runs: failed,
      unfinished_runs: options.runs - completed - failed,
      worker_crashes: crashes,
      worker_heartbeat_silence_max_ms: Math.round(heartbeatSilenceMax),
      model_calls: calls.modelCalls,
      model_calls_needed: needed,
      model_call_ratio: round(calls.modelCalls / needed, 3),
      bash_interrupted: calls.bashInterrupted,
      bash_calls: calls.bashCalls,
      bash_refused_moved: calls.bashMoved,
      peak_slots_held: peak,
      slots_at_end: slotsAtEnd,
      admission: await admissionFigures(client, taskQueue, options.runs * CHILDREN),
    };
  } finally {
    stopping = true;
    sampling = false;
    await sampler;
    await heartbeatSampler;
    await fake?.close();
    for (const loop of loops) loop.kill('SIGKILL');
    for (const worker of workers) worker.kill('SIGTERM');
    await connection.close();
  }
}

export function formatOverload(f: OverloadFigures): string {
  const a = f.admission;
  return [
    `${f.label}: ${f.runs} runs × ${CHILDREN} subagents (${f.provider}), ${f.busy_loops} busy loops, max_running ${f.max_running}`,
    `  wall ${f.wall_s} s · ${f.runs_per_s} runs/s · latency p50 ${f.latency_p50_s} s, p95 ${f.latency_p95_s} s`,
    `  completed ${f.completed_runs}, failed ${f.failed_runs}, unfinished ${f.unfinished_runs} · worker crashes ${f.worker_crashes} · a live worker's heartbeat silent at most ${f.worker_heartbeat_silence_max_ms} ms`,
    `  model calls ${f.model_calls} for ${f.model_calls_needed} needed (×${f.model_call_ratio}) · bash interrupted ${f.bash_interrupted} of ${f.bash_calls} (${f.bash_refused_moved} refused unrun by a host not the run's home)`,
    `  slots held at most ${f.peak_slots_held} (max_running ${f.max_running})`,
    `  admission: ${a.executions} executions, ${a.events} events (${a.events_per_delegation} per delegation), ` +
      `${a.signals_received} signals in, ${a.signals_sent} out, ${a.deliveries} deliveries, ${a.lease_reports} lease reports, ${a.markers} local-activity markers, ${a.workflow_tasks} tasks (${a.workflow_tasks_timed_out} timed out), ` +
      `task latency p50 ${a.task_latency_p50_ms} ms, p95 ${a.task_latency_p95_ms} ms, max ${a.task_latency_max_ms} ms`,
  ].join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dir = tempDir('bench-overload-server');
  const [server, bundle] = await Promise.all([
    connectOrStartServer({ headless: true, dbFilename: join(dir, 'temporal.db'), log }),
    bundleProjectWorkflows(),
  ]);
  const bundlePath = join(dir, 'workflows.js');
  writeFileSync(bundlePath, bundle);
  try {
    const figures = await runOverload(server, bundlePath, options, log);
    process.stdout.write(
      options.json ? `${JSON.stringify(figures, null, 2)}\n` : `${formatOverload(figures)}\n`,
    );
  } finally {
    await server.stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
