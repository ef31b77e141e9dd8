/**
 * Lead runs in flight against the real server (`lead_runtime`): past `max_running` a run waits for a slot as
 * its first step and says so (`lead_status`: queued, with its position), a run past the queue is refused with
 * the exact text before any model call, and a slot comes back when a run ends, so the queued run goes on.
 */
import { workflowResult } from '../../client/results';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  admissionStateQuery,
  admissionWorkflowId,
  capacityFullText,
  type AdmissionSettings,
} from '../../contracts/admission';
import { leadStatusQuery, type LeadRunInput } from '../../contracts/lead';
import { runSearchAttributes } from '../../contracts/search-attributes';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { uniqueTaskQueue, useTestClient, waitFor, withProjectWorker } from '../harness/temporal';
import { fanOutLeadInput, leadInput, tempDir, writeScript } from '../support/subagent-input';
import { workerTuning } from '../../worker/worker';

const testClient = useTestClient();

const ONE_RUN: AdmissionSettings = {
  max_running: 1,
  max_queued: 1,
  admission_policy: 'queue',
  queue_timeout_seconds: 300,
};

/** A lead that answers after `delayMs` without delegating. */
function slowLead(delayMs: number): LeadRunInput {
  const dir = tempDir('lead-admission');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return leadInput({
    workspace,
    scriptFile: writeScript(dir, {
      scripts: [{ agent: 'lead', repeat_last: true, turns: [{ content: 'Answered.', delay_ms: delayMs }] }],
    }),
  });
}

/**
 * On a worker with one run slot: a first run that answers after `firstMs` holds it, a second waits in the
 * queue; `start` starts more.
 */
async function oneRunningOneQueued(taskQueue: string, firstMs: number) {
  const start = (id: string, input: LeadRunInput) =>
    testClient().workflow.start(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-${id}`,
      args: [{ ...input, run_id: `${taskQueue}-${id}` }],
    });
  const first = await start('first', slowLead(firstMs));
  await waitFor('the first run to hold the one slot', async () => {
    return (await first.query(leadStatusQuery)).state === 'running';
  });
  const second = await start('second', slowLead(0));
  await waitFor('the second run to wait in the queue', async () => {
    return (await second.query(leadStatusQuery)).state === 'queued';
  });
  return { start, first, second };
}

describe('lead runs in flight (lead_runtime)', () => {
  it('queues a run past max_running, refuses one past max_queued, and runs the queued one when a slot frees', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('lead-admission');
    await withProjectWorker(
      taskQueue,
      async () => {
        const { start, first, second } = await oneRunningOneQueued(taskQueue, 4000);
        const waiting = await second.query(leadStatusQuery);
        expect(waiting.admission).toEqual({ running: 1, queued: 1, since: expect.any(String) });

        const third = await start('third', slowLead(0));
        const refused = await workflowResult(third);
        expect(refused).toMatchObject({
          status: 'failed',
          error: capacityFullText(1, 1, 'runs'),
          admission_failure: true,
          turns: 0,
          final_output: '',
        });
        expect(refused.error).toBe('Lead run capacity is full (1 running, 1 queued)');

        // The first run ends, gives its slot back, and the queued run gets it and completes.
        expect((await first.result()).status).toBe('completed');
        const after = await second.result();
        expect(after).toMatchObject({ status: 'completed', final_output: 'Answered.', turns: 1 });
        expect(after.admission_failure).toBeUndefined();
        const state = await client.workflow
          .getHandle(admissionWorkflowId(taskQueue, 'runs'))
          .query(admissionStateQuery);
        expect(state.running).toEqual([]);
        expect(state.queued).toEqual([]);
        expect(state.counters).toMatchObject({ granted: 2, rejected: 1, released: 2 });
        expect(state.settings).toEqual(ONE_RUN);
      },
      { runAdmission: ONE_RUN },
    );
  });

  it('withdraws a queued run that is cancelled: it ends cancelled and leaves no place in the queue', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('lead-admission-cancel');
    await withProjectWorker(
      taskQueue,
      async () => {
        const { first, second } = await oneRunningOneQueued(taskQueue, 3000);
        await second.cancel();
        expect(await workflowResult(second)).toMatchObject({
          status: 'cancelled',
          error: 'Run cancelled by user',
          turns: 0,
        });
        const admission = client.workflow.getHandle(admissionWorkflowId(taskQueue, 'runs'));
        await waitFor('the request to leave the queue', async () => {
          return (await admission.query(admissionStateQuery)).queued.length === 0;
        });
        expect((await first.result()).status).toBe('completed');
        const state = await admission.query(admissionStateQuery);
        expect(state.running).toEqual([]);
        // A withdrawn request held no slot: only the first run's release counts.
        expect(state.counters).toMatchObject({ granted: 1, queued: 1, released: 1 });
      },
      { runAdmission: ONE_RUN },
    );
  });
});

describe('the slot a run and its subagents ask for', () => {
  it('is asked for because their inputs say so: no patch marker, no search attribute update in their histories', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('asks-slot');
    const input = fanOutLeadInput(['a']);
    expect(input.asks_slot).toBe(true);
    const lead = `${taskQueue}-lead`;
    const result = await withProjectWorker(taskQueue, () =>
      client.workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: lead,
        args: [{ ...input, run_id: lead }],
        // As the project's client starts a run: these say it reports its outcome.
        typedSearchAttributes: runSearchAttributes(lead, 'lead', 0),
      }),
    );
    expect(result.status).toBe('completed');
    for (const workflowId of [lead, `${lead}/task/a`]) {
      const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
      // Both took a slot: the request and the release are local activities (markers)...
      expect(events.some((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity')).toBe(
        true,
      );
      // ...and neither checked a patch, which records a marker and updates TemporalChangeVersion: the one
      // search attribute update is the outcome, as the workflow ends.
      expect(events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_patch')).toEqual([]);
      const upserts = events.flatMap((e) => {
        const fields = e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
        return fields ? [Object.keys(fields).sort()] : [];
      });
      // (The scripted model reports no usage, so no TotalTokens.)
      expect(upserts).toEqual([['SubagentStatus']]);
    }
  });
});

describe('a worker with a small workflow cache (worker.max_cached_workflows)', () => {
  it('completes a run of three delegations though its workflows are evicted and replayed between tasks', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('small-cache');
    const input = fanOutLeadInput(['a', 'b', 'c'], 300);
    const result = await withProjectWorker(
      taskQueue,
      () =>
        client.workflow.execute(leadRunWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}-lead`,
          args: [{ ...input, run_id: `${taskQueue}-lead` }],
        }),
      // Two workflows in memory for a lead, three subagents and two admission workflows.
      { tuning: workerTuning({ max_cached_workflows: 2 }) },
    );
    expect(result.status).toBe('completed');
    expect(result.ledger.map((entry) => [entry.id, entry.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
    ]);
  });
});
