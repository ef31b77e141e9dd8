/**
 * A worker SIGKILLed during a bash call, with a standby worker polling: the standby sees the dead worker's
 * heartbeat stand still (worker/lost-workers.ts) and fails the call's attempt by id, so the subagent hears
 * "interrupted" from that, not from the call's 10 s heartbeat timeout, and carries on on the standby.
 */
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { temporal } from '@temporalio/proto';
import { subagentStepsQuery } from '../../contracts/queries';
import { WORKER_LOST_FAILURE } from '../../contracts/workspace';
import { subagentWorkflow } from '../../workflows/subagent';
import { connectClient, startProjectWorkerProcess, uniqueTaskQueue, waitFor } from '../harness/temporal';
import { longBashInput } from '../support/subagent-input';

const { PendingActivityState } = temporal.api.enums.v1;

it('fails a dead worker’s bash call at once from a standby worker, and the run carries on there', async () => {
  const { client, close } = await connectClient();
  const workers: ChildProcess[] = [];
  try {
    const input = longBashInput('lost-worker', 120);
    const taskQueue = uniqueTaskQueue('lost-worker');
    workers.push(await startProjectWorkerProcess(taskQueue), await startProjectWorkerProcess(taskQueue));
    const handle = await client.workflow.start(subagentWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}/task/call_1`,
      args: [input],
    });
    // The bash call has started on one of the two: that one is killed.
    let holder = '';
    await waitFor('the bash call to start', async () => {
      const pending = (await handle.describe()).raw.pendingActivities ?? [];
      const started = pending.find(
        (activity) =>
          activity.activityType?.name === 'executeToolCall' &&
          activity.state === PendingActivityState.PENDING_ACTIVITY_STATE_STARTED,
      );
      holder = started?.lastWorkerIdentity ?? '';
      return holder !== '';
    });
    const victim = workers.find((worker) => holder.startsWith(`${worker.pid}@`));
    if (!victim) throw new Error(`no worker of this test is ${holder}`);
    victim.kill('SIGKILL');
    await once(victim, 'exit');

    const result = await handle.result();
    expect(result.status).toBe('completed');
    const events = (await handle.fetchHistory()).events ?? [];
    const failed = events.filter((event) => event.activityTaskFailedEventAttributes);
    expect(events.filter((event) => event.activityTaskTimedOutEventAttributes)).toEqual([]);
    const types = failed.map(
      (event) => event.activityTaskFailedEventAttributes?.failure?.applicationFailureInfo?.type,
    );
    expect(types).toEqual([WORKER_LOST_FAILURE]);
    const steps = await handle.query(subagentStepsQuery, 0);
    const told = JSON.stringify(steps);
    expect(told).toContain('was interrupted');
    expect(told).toContain(`its worker ${holder} was lost`);
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
    await close();
  }
}, 240_000);
