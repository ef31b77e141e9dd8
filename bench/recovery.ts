/**
 * Recovery after a worker dies. Two worker processes poll one task queue; a subagent's model call (a scripted
 * model that takes a few seconds, heartbeating) is in flight on one of them when that worker is SIGKILLed,
 * at a random moment between two heartbeats. Per kill:
 *   - kill → the call resumed on the other worker: the retry attempt's start (DescribeWorkflowExecution);
 *   - hand-back: the resumed call's completion → the workflow's next task started on a live worker (it first
 *     waits on the dead worker's sticky queue), from history;
 *   - the time the kill cost the run: the sum of the two.
 * Then the same with one worker only, restarted as soon as it is dead (a deployment of one worker under a
 * supervisor, or `npm start` run again): the resumed call waits for the new worker to poll, and the kill costs
 * the run the time from the kill to the workflow's next task after the resumed call.
 * Beside: healthy runs (no kill) on the same settings, many calls at once; any timeout or retry there is
 * noise the recovery settings added.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { SubagentInput } from '../contracts/subagent';
import type { TemporalServer } from '../devserver/temporal-server';
import { bundleProjectWorkflows } from '../worker/worker';
import { WorkerFleet } from '../test/support/chaos-workers';
import { longBashInput, subagentInput, tempDir, writeScript } from '../test/support/subagent-input';
import { percentile, type BenchResult } from './stats';
import { projectDataConverter } from '../payloads/data-converter';

const KILLS = Number(process.env.RECOVERY_KILLS ?? 12);
const MODEL_DELAY_MS = 4000;
const HEALTHY_RUNS = 30;

const { PendingActivityState } = temporal.api.enums.v1;

function setUp(delayMs: number, turns: number): SubagentInput {
  const dir = tempDir('bench-recovery');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const thinking = { content: 'Thinking.', tool_calls: [{ name: 'ls', args: {} }], delay_ms: delayMs };
  const scriptFile = writeScript(dir, {
    scripts: [
      {
        turns: [
          ...Array.from({ length: turns - 1 }, () => thinking),
          { content: 'Done.', delay_ms: delayMs },
        ],
      },
    ],
  });
  return subagentInput({ workspace, scriptFile });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function pendingActivity(client: Client, workflowId: string) {
  const description = await client.workflow.getHandle(workflowId).describe();
  return description.raw.pendingActivities?.[0];
}

/**
 * Starts a subagent, waits for its first activity to run, and SIGKILLs the worker running it, anywhere between
 * two heartbeats (they are a second apart), well before the call would end.
 */
async function killWhileRunning(
  client: Client,
  fleet: WorkerFleet,
  taskQueue: string,
  workflowId: string,
  input: SubagentInput,
): Promise<{ handle: WorkflowHandle; slot: number; killedAt: number }> {
  const handle = await client.workflow.start('subagentWorkflow', { taskQueue, workflowId, args: [input] });
  let identity = '';
  while (identity === '') {
    const activity = await pendingActivity(client, workflowId);
    if (activity?.state === PendingActivityState.PENDING_ACTIVITY_STATE_STARTED) {
      identity = activity.lastWorkerIdentity ?? '';
    } else await sleep(20);
  }
  const slot = fleet.slotOf(identity);
  if (slot < 0)
    throw new Error(`${workflowId}: its call runs on ${identity}, not on a worker of this benchmark`);
  await sleep(500 + Math.random() * 1500);
  return { handle, slot, killedAt: await fleet.kill(slot) };
}

interface Sample {
  resumeMs: number;
  handBackMs: number;
}

/**
 * One kill: waits for the model call to run, kills its worker, measures, restarts the worker: after the
 * sample, or (`restartAtOnce`) as soon as it is dead, when no other worker can resume the call.
 */
async function killOnce(
  client: Client,
  fleet: WorkerFleet,
  taskQueue: string,
  n: number,
  restartAtOnce = false,
): Promise<Sample> {
  const workflowId = `${taskQueue}-kill-${n}`;
  const input = setUp(MODEL_DELAY_MS, 1);
  const { handle, slot, killedAt } = await killWhileRunning(client, fleet, taskQueue, workflowId, input);
  const restarted = restartAtOnce ? fleet.restart(slot) : undefined;

  let resumedAt: number | undefined;
  while (resumedAt === undefined) {
    const activity = await pendingActivity(client, workflowId);
    if (activity === undefined) throw new Error(`${workflowId}: the model call ended without being resumed`);
    if (
      (activity.attempt ?? 1) > 1 &&
      activity.state === PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
    ) {
      resumedAt = tsToMs(activity.lastStartedTime);
    } else await sleep(20);
  }
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  const completed = events.findIndex((e) => e.activityTaskCompletedEventAttributes);
  const nextTask = events.slice(completed).find((e) => e.workflowTaskStartedEventAttributes);
  if (completed < 0 || nextTask === undefined) throw new Error(`${workflowId}: no completion in history`);
  await (restarted ?? fleet.restart(slot));
  return {
    resumeMs: resumedAt - killedAt,
    handBackMs: tsToMs(nextTask.eventTime) - tsToMs(events[completed].eventTime),
  };
}

/**
 * One kill during a bash call, a standby worker polling: kill → the run's end (its close in history), and how
 * the call's attempt ended (failed by the standby's watch of worker heartbeats, or timed out).
 */
async function killDuringBash(
  client: Client,
  fleet: WorkerFleet,
  taskQueue: string,
  n: number,
): Promise<{ endMs: number; ending: 'failed' | 'timed out' | 'none' }> {
  const workflowId = `${taskQueue}-bash-${n}`;
  const { handle, slot, killedAt } = await killWhileRunning(
    client,
    fleet,
    taskQueue,
    workflowId,
    longBashInput('bench-recovery-bash', 60),
  );
  await handle.result();
  const events = (await handle.fetchHistory()).events ?? [];
  const closed = events[events.length - 1];
  await fleet.restart(slot);
  const ending = events.some((e) => e.activityTaskFailedEventAttributes)
    ? 'failed'
    : events.some((e) => e.activityTaskTimedOutEventAttributes)
      ? 'timed out'
      : 'none';
  return { endMs: tsToMs(closed.eventTime) - killedAt, ending };
}

/** Timeouts and retries in runs nobody killed: what the recovery settings must not add. */
async function healthyNoise(client: Client, taskQueue: string): Promise<number[]> {
  const handles = await Promise.all(
    Array.from({ length: HEALTHY_RUNS }, (_, n) =>
      client.workflow.start('subagentWorkflow', {
        taskQueue,
        workflowId: `${taskQueue}-healthy-${n}`,
        args: [setUp(MODEL_DELAY_MS, 3)],
      }),
    ),
  );
  return Promise.all(
    handles.map(async (handle) => {
      await handle.result();
      const events = (await handle.fetchHistory()).events ?? [];
      return events.filter(
        (e) =>
          e.activityTaskTimedOutEventAttributes ||
          e.workflowTaskTimedOutEventAttributes ||
          (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1,
      ).length;
    }),
  );
}

export async function benchRecovery(server: TemporalServer): Promise<BenchResult[]> {
  const connection = await Connection.connect({ address: server.address });
  const bundlePath = join(tempDir('bench-recovery-bundle'), 'workflows.js');
  writeFileSync(bundlePath, await bundleProjectWorkflows());
  const fleetOf = (taskQueue: string, size: number) =>
    new WorkerFleet(
      { address: server.address, namespace: server.namespace, taskQueue, bundlePath, logLevel: 'ERROR' },
      size,
    );
  const client = new Client({
    connection,
    namespace: server.namespace,
    dataConverter: projectDataConverter(),
  });
  /** KILLS kills of the worker running the call; `restartAtOnce` with a fleet of one. */
  const kills = async (taskQueue: string, fleet: WorkerFleet, restartAtOnce: boolean): Promise<Sample[]> => {
    const samples: Sample[] = [];
    for (let n = 0; n < KILLS; n++) {
      samples.push(await killOnce(client, fleet, taskQueue, n, restartAtOnce));
      const last = samples[samples.length - 1];
      process.stderr.write(
        `recovery (${fleet.size} worker${fleet.size === 1 ? ', restarted' : 's'}) ${n + 1}/${KILLS}: ` +
          `resumed after ${last.resumeMs} ms, hand-back ${last.handBackMs} ms\n`,
      );
    }
    return samples;
  };
  const row = (name: string, unit: string, values: number[]): BenchResult => ({
    name,
    unit,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    samples: values.length,
  });
  const seconds = (values: number[]) => values.map((ms) => ms / 1000);
  try {
    const taskQueue = `bench-recovery-${Date.now()}`;
    const fleet = fleetOf(taskQueue, 2);
    let samples: Sample[];
    let noise: number[];
    const bashEnds: number[] = [];
    const bashEndings: string[] = [];
    try {
      await fleet.start();
      samples = await kills(taskQueue, fleet, false);
      for (let n = 0; n < KILLS; n++) {
        const bash = await killDuringBash(client, fleet, taskQueue, n);
        bashEnds.push(bash.endMs);
        bashEndings.push(bash.ending);
        process.stderr.write(
          `recovery (bash, a standby worker) ${n + 1}/${KILLS}: kill → run end ${bash.endMs} ms ` +
            `(the call's attempt ${bash.ending})\n`,
        );
      }
      noise = await healthyNoise(client, taskQueue);
    } finally {
      await fleet.stop();
    }
    const aloneQueue = `bench-recovery-alone-${Date.now()}`;
    const alone = fleetOf(aloneQueue, 1);
    let restarted: Sample[];
    try {
      await alone.start();
      restarted = await kills(aloneQueue, alone, true);
    } finally {
      await alone.stop();
    }
    return [
      row(
        'worker SIGKILLed → its model call resumed on another worker',
        's',
        seconds(samples.map((s) => s.resumeMs)),
      ),
      row(
        'resumed call done → next workflow task on a live worker',
        's',
        seconds(samples.map((s) => s.handBackMs)),
      ),
      row(
        'time a kill costs the run (the two above)',
        's',
        seconds(samples.map((s) => s.resumeMs + s.handBackMs)),
      ),
      row(
        'one worker, restarted at once: kill → its model call resumed on the new worker',
        's',
        seconds(restarted.map((s) => s.resumeMs)),
      ),
      row(
        'one worker, restarted at once: time a kill costs the run',
        's',
        seconds(restarted.map((s) => s.resumeMs + s.handBackMs)),
      ),
      row(
        `bash call's worker SIGKILLed, a standby polling → run end (${bashEndings.filter((e) => e === 'failed').length} of ${bashEndings.length} failed by the standby's watch)`,
        's',
        seconds(bashEnds),
      ),
      row(`timeouts + retries per healthy run (${HEALTHY_RUNS} at once, no kill)`, 'events', noise),
    ];
  } finally {
    await connection.close();
  }
}
