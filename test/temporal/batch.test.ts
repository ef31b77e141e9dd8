/**
 * Durable batches against the real server: the batch bounds its items running (from the children's own
 * histories) and live (from its status while it runs), retries a failed item without two attempts ever open
 * at once, puts an item refused at admission back without spending an attempt, and its results come from the
 * items' last attempts, in key order.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { scriptedBatchInput } from '../support/subagent-input';
import { BatchesClient, type BatchItemResult } from '../../client/batches';
import type { AdmissionSettings } from '../../contracts/admission';
import type { BatchInput } from '../../contracts/batch';
import {
  startProjectWorkerProcess,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { mostAtOnce } from '../harness/spans';

const testClient = useTestClient();

interface Span {
  workflowId: string;
  start: number;
  end: number;
}

/** When each of the batch's `count` children ran, from visibility (start → close), once it lists them all. */
async function itemSpans(client: Client, batchId: string, count: number): Promise<Span[]> {
  let spans: Span[] = [];
  await waitFor(`visibility to list the ${count} items`, async () => {
    spans = await listSpans(client, batchId);
    return spans.length === count && spans.every((span) => Number.isFinite(span.end));
  });
  return spans;
}

async function listSpans(client: Client, batchId: string): Promise<Span[]> {
  const spans: Span[] = [];
  for await (const execution of client.workflow.list({
    query: `WorkflowType = 'subagentWorkflow' AND LeadRunId = '${batchId}'`,
  })) {
    spans.push({
      workflowId: execution.workflowId,
      start: execution.startTime.getTime(),
      end: execution.closeTime?.getTime() ?? Infinity,
    });
  }
  return spans;
}

async function collect(results: AsyncGenerator<BatchItemResult>): Promise<BatchItemResult[]> {
  const all: BatchItemResult[] = [];
  for await (const line of results) all.push(line);
  return all;
}

/** Runs a batch to its end on a worker of its own (admission: 10 running unless told), then reads its results. */
async function runBatch(taskQueue: string, input: BatchInput, admission: Partial<AdmissionSettings> = {}) {
  return withProjectWorker(
    taskQueue,
    async () => {
      const batch = await new BatchesClient(testClient()).start(input, { taskQueue });
      const end = await batch.result();
      return { end, lines: await collect(batch.results()), batchId: batch.batchId };
    },
    {
      admission: {
        max_running: 10,
        max_queued: 64,
        admission_policy: 'queue',
        queue_timeout_seconds: 300,
        ...admission,
      },
    },
  );
}

describe('batches (batchWorkflow)', () => {
  it('runs 40 items, never more than 3 running or 5 live, and lists their results in key order', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('batch-40');
    const keys = Array.from({ length: 40 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
    // Shuffled: the results come back in key order whatever the items' order.
    const items = [...keys].reverse().map((key) => ({ key, prompt: `Check ${key}.` }));
    const input = scriptedBatchInput(
      items,
      { max_running_items: 3, max_live_items: 5 },
      {
        scripts: [
          {
            agent: 'general-purpose',
            repeat_last: true,
            turns: [{ content: 'Checked.', delay_ms: 150 }],
          },
        ],
      },
    );
    const batches = new BatchesClient(client);
    let mostLive = 0;
    let details = '';
    const result = await withProjectWorker(
      taskQueue,
      async () => {
        const batch = await batches.start(input, { taskQueue });
        let done = false;
        const watching = (async () => {
          while (!done) {
            const status = await batch.status({ limit: 0 });
            mostLive = Math.max(mostLive, status.counts.waiting + status.counts.running);
            if (details === '' && status.counts.completed > 0) {
              // The Web UI's "Current Details": the counts as the batch stands.
              const metadata = await client.workflow
                .getHandle(batch.batchId)
                .query<{ currentDetails?: string }>('__temporal_workflow_metadata')
                .catch(() => undefined);
              details = metadata?.currentDetails ?? '';
            }
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })();
        const end = await batch.result();
        done = true;
        await watching;
        const lines = await collect(batch.results());
        return { end, lines, batchId: batch.batchId };
      },
      {
        admission: { max_running: 10, max_queued: 64, admission_policy: 'queue', queue_timeout_seconds: 300 },
      },
    );
    expect(result.end).toMatchObject({
      status: 'completed',
      total: 40,
      counts: { completed: 40, failed: 0, cancelled: 0 },
      counters: { attempts: 40 },
    });
    expect(result.lines.map((line) => line.key)).toEqual(keys);
    expect(result.lines.every((line) => line.status === 'completed' && line.result === 'Checked.')).toBe(
      true,
    );
    const spans = await itemSpans(client, result.batchId, 40);
    expect(spans).toHaveLength(40);
    expect(mostAtOnce(spans)).toBeLessThanOrEqual(3);
    // The bound was reached, so it was the bound that held them.
    expect(mostAtOnce(spans)).toBe(3);
    expect(mostLive).toBeGreaterThan(0);
    expect(mostLive).toBeLessThanOrEqual(5);
    expect(details).toMatch(
      /^\*\*general-purpose\*\* batch: \d+ of 40 done \(\d+ completed, 0 failed\) · [0-3] running · \d+ waiting · \d+ pending/,
    );
  });

  it('retries an item that failed, the second attempt starting only after the first closed', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('batch-retry');
    const input = scriptedBatchInput(
      [
        { key: 'flaky', prompt: 'Check the flaky part.' },
        { key: 'steady', prompt: 'Check the steady part.' },
      ],
      { max_running_items: 2, max_live_items: 2, max_attempts: 2, retry_backoff_seconds: 0.1 },
      {
        scripts: [
          {
            // Its first attempt finds no marker, leaves one and then fails; its second finds it and answers.
            agent: 'general-purpose',
            prompt_contains: 'flaky',
            turns: [
              { tool_calls: [{ name: 'read_file', args: { path: 'marker.txt' }, id: 'r1' }] },
              {
                content: 'Found the marker.',
                if_missing: {
                  text: 'SECOND',
                  turn: {
                    tool_calls: [{ name: 'write_file', args: { path: 'marker.txt', content: 'SECOND' } }],
                  },
                },
              },
              { error: { status: 400, message: 'the first attempt fails' } },
            ],
          },
          { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Steady.' }] },
        ],
      },
    );
    const { end, lines, batchId } = await runBatch(taskQueue, input);
    expect(end).toMatchObject({ status: 'completed', counts: { completed: 2 }, counters: { attempts: 3 } });
    expect(lines).toEqual([
      { key: 'flaky', status: 'completed', attempts: 2, result: 'Found the marker.' },
      { key: 'steady', status: 'completed', attempts: 1, result: 'Steady.' },
    ]);
    const flaky = (await itemSpans(client, batchId, 3))
      .filter((span) => span.workflowId.startsWith(`${batchId}/item/flaky/`))
      .sort((a, b) => a.start - b.start);
    expect(flaky.map((span) => span.workflowId)).toEqual([
      `${batchId}/item/flaky/1`,
      `${batchId}/item/flaky/2`,
    ]);
    expect(flaky[0].end).toBeLessThanOrEqual(flaky[1].start);
  });

  it('puts an item refused at admission back in the queue without spending an attempt', async () => {
    const taskQueue = uniqueTaskQueue('batch-refused');
    const input = scriptedBatchInput(
      [
        { key: 'a', prompt: 'Check a.' },
        { key: 'b', prompt: 'Check b.' },
        { key: 'c', prompt: 'Check c.' },
      ],
      { max_running_items: 3, max_live_items: 3, retry_backoff_seconds: 0.2 },
      {
        scripts: [
          { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Checked.', delay_ms: 300 }] },
        ],
      },
    );
    // One slot for the whole task queue, and no queue: every request past it is refused at once.
    const { end, lines } = await runBatch(taskQueue, input, {
      max_running: 1,
      admission_policy: 'reject',
    });
    expect(end).toMatchObject({ status: 'completed', counts: { completed: 3 }, counters: { attempts: 3 } });
    expect(end.counters.requeued).toBeGreaterThanOrEqual(2);
    expect(lines.map((line) => [line.key, line.status, line.attempts])).toEqual([
      ['a', 'completed', 1],
      ['b', 'completed', 1],
      ['c', 'completed', 1],
    ]);
  });

  it('continues as new past its history bound, its items and results carried, its history bounded', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('batch-continued');
    const keys = Array.from({ length: 12 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    const input = {
      ...scriptedBatchInput(
        keys.map((key) => ({ key, prompt: `Check ${key}.` })),
        { max_running_items: 2, max_live_items: 3 },
        { scripts: [{ agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Checked.' }] }] },
      ),
      history_events: 40,
    };
    const { end, lines, batchId } = await runBatch(taskQueue, input);
    expect(end).toMatchObject({ status: 'completed', counts: { completed: 12 }, counters: { attempts: 12 } });
    expect(lines.map((line) => [line.key, line.status, line.result])).toEqual(
      keys.map((key) => [key, 'completed', 'Checked.']),
    );
    const runs: number[] = [];
    for await (const execution of client.workflow.list({ query: `WorkflowId = '${batchId}'` })) {
      const history = await client.workflow.getHandle(batchId, execution.runId).fetchHistory();
      runs.push(history.events?.length ?? 0);
    }
    expect(runs.length).toBeGreaterThan(2);
    // Each execution stops asking at the bound and finishes its items in flight: a window past it, no more.
    for (const events of runs) expect(events).toBeLessThan(40 + 3 * 15);
  });

  it('cancels: running items end cancelled, finished ones stay, the rest never run, each in one state', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('batch-cancel');
    const keys = Array.from({ length: 8 }, (_, i) => `c${i}`);
    const input = scriptedBatchInput(
      keys.map((key) => ({ key, prompt: key === 'c0' ? 'Quick one.' : `Slow ${key}.` })),
      { max_running_items: 2, max_live_items: 2 },
      {
        scripts: [
          { agent: 'general-purpose', prompt_contains: 'Quick', turns: [{ content: 'Quick.' }] },
          { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Slow.', delay_ms: 30_000 }] },
        ],
      },
    );
    const batches = new BatchesClient(client);
    const { end, lines, status } = await withProjectWorker(
      taskQueue,
      async () => {
        const batch = await batches.start(input, { taskQueue });
        await waitFor('c0 to finish and two slow items to run', async () => {
          const now = await batch.status({ limit: 0 });
          return now.counts.completed === 1 && now.counts.running === 2;
        });
        await batch.cancel();
        const end = await batch.result();
        return { end, lines: await collect(batch.results()), status: await batch.status({ limit: 10 }) };
      },
      {
        admission: { max_running: 10, max_queued: 64, admission_policy: 'queue', queue_timeout_seconds: 300 },
      },
    );
    expect(end).toMatchObject({
      status: 'cancelled',
      total: 8,
      counts: { completed: 1, failed: 0, cancelled: 7, pending: 0, waiting: 0, running: 0 },
    });
    expect(status.status).toBe('cancelled');
    expect(lines.map((line) => [line.key, line.status, line.attempts])).toEqual([
      ['c0', 'completed', 1],
      ['c1', 'cancelled', 1],
      ['c2', 'cancelled', 1],
      ...keys.slice(3).map((key) => [key, 'cancelled', 0]),
    ]);
  });

  it('finishes after its worker is SIGKILLed mid-batch: each item once, never more than 3 at once', async () => {
    const client = testClient();
    const taskQueue = uniqueTaskQueue('batch-crash');
    const keys = Array.from({ length: 20 }, (_, i) => `s${String(i).padStart(2, '0')}`);
    const input = scriptedBatchInput(
      keys.map((key) => ({ key, prompt: `Check ${key}.` })),
      { max_running_items: 3, max_live_items: 4 },
      {
        scripts: [
          { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Checked.', delay_ms: 300 }] },
        ],
      },
    );
    const workers: ChildProcess[] = [];
    try {
      // A worker of its own process (its admission: 3 running, the default), so it can be killed.
      workers.push(await startProjectWorkerProcess(taskQueue));
      const batch = await new BatchesClient(client).start(input, { taskQueue });
      await waitFor('five items done', async () => (await batch.status({ limit: 0 })).counts.completed >= 5);
      workers[0].kill('SIGKILL');
      await once(workers[0], 'exit');
      workers.push(await startProjectWorkerProcess(taskQueue));
      const end = await batch.result();
      expect(end).toMatchObject({ status: 'completed', counts: { completed: 20, failed: 0 } });
      const spans = await itemSpans(client, batch.batchId, end.counters.attempts);
      // The counters match the children: one attempt per item, each a child of its own.
      expect(end.counters.attempts).toBe(20);
      expect(spans.map((span) => span.workflowId).sort()).toEqual(
        keys.map((key) => `${batch.batchId}/item/${key}/1`),
      );
      expect(mostAtOnce(spans)).toBeLessThanOrEqual(3);
    } finally {
      for (const worker of workers) worker.kill('SIGKILL');
    }
  });

  it('checks acceptance criteria: a failed check spends an attempt, the verdict stays beside the result', async () => {
    const taskQueue = uniqueTaskQueue('batch-accept');
    const input = scriptedBatchInput(
      [
        {
          key: 'ok',
          prompt: 'Write the report.',
          acceptance_criteria: ['contains: Done', 'file_contains: reports/ok.md :: ## Findings'],
        },
        { key: 'missing', prompt: 'Answer only.', acceptance_criteria: ['file_exists: reports/missing.md'] },
        // A link in the workspace to a file outside it: the check does not follow it out.
        { key: 'escape', prompt: 'Answer only.', acceptance_criteria: ['file_exists: outside'] },
      ],
      { max_running_items: 3, max_live_items: 3, max_attempts: 2, retry_backoff_seconds: 0.1 },
      {
        scripts: [
          {
            agent: 'general-purpose',
            prompt_contains: 'Write the report',
            turns: [
              {
                tool_calls: [
                  {
                    name: 'write_file',
                    args: { path: 'reports/ok.md', content: '## Findings\nAll good.\n' },
                  },
                ],
              },
              { content: 'Done.' },
            ],
          },
          { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Done.' }] },
        ],
      },
    );
    symlinkSync('/etc/hostname', join(input.scope.workspace, 'outside'));
    const { end, lines } = await runBatch(taskQueue, input);
    expect(end).toMatchObject({
      status: 'completed',
      counts: { completed: 1, failed: 2 },
      counters: { attempts: 5 },
    });
    expect(lines).toEqual([
      {
        key: 'escape',
        status: 'failed',
        attempts: 2,
        accepted: false,
        error: 'acceptance criteria not met: file_exists: outside',
        result: 'Done.',
      },
      {
        key: 'missing',
        status: 'failed',
        attempts: 2,
        accepted: false,
        error: 'acceptance criteria not met: file_exists: reports/missing.md',
        result: 'Done.',
      },
      { key: 'ok', status: 'completed', attempts: 1, accepted: true, result: 'Done.' },
    ]);
  });

  it('refuses items with duplicate keys, before anything starts', async () => {
    const input = scriptedBatchInput(
      [
        { key: 'a', prompt: 'x' },
        { key: 'a', prompt: 'y' },
      ],
      {},
      { scripts: [{ agent: 'general-purpose', turns: [{ content: 'x' }] }] },
    );
    await expect(new BatchesClient(testClient()).start(input, { taskQueue: 'never-used' })).rejects.toThrow(
      'The batch input is refused:\n  items: duplicate keys: "a" ×2 (each key must be unique)',
    );
  });
});
