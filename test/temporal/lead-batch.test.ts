/**
 * The lead's batch tools against the real server: `batch_task` starts a durable batch from a workspace file
 * and answers at once; `batch_status` waits for it; `read_batch_result` reads its answers; the batch has its
 * own ledger entry and does not count toward `max_total_per_run`; bad items are refused before anything
 * starts; the batch outlives its lead's answer but not a cancel of the lead.
 */
import { workflowResult } from '../../client/results';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { BatchesClient } from '../../client/batches';
import { batchItemWorkflowId, batchStatusQuery, leadBatchWorkflowId } from '../../contracts/batch';
import { UNATTENDED_DENY_REASON } from '../../contracts/guardrail-rules';
import type { SubagentInput } from '../../contracts/subagent';
import { leadEventsQuery, leadLedgerQuery, type LeadRunInput } from '../../contracts/lead';
import { projectCodec } from '../../payloads/data-converter';
import type { leadRunWorkflow } from '../../workflows/lead-run';
import {
  childStarts,
  startLeadRun,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';

const testClient = useTestClient();

const ITEM_ANSWERS = {
  agent: 'general-purpose',
  repeat_last: true,
  turns: [{ content: 'Verdict: testable.', delay_ms: 100 }],
};

/** A lead input whose workspace holds `files`, its config enabling batches (ceiling: 2 running, 4 live). */
function setUp(
  script: ModelScriptFileInput,
  files: Record<string, string> = {},
  config: Record<string, unknown> = {},
): LeadRunInput {
  const { workspace, scriptFile } = scriptedWorkspace('lead-batch', script);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(workspace, name), text);
  return leadInput({
    workspace,
    scriptFile,
    config: {
      subagents: {
        max_total_per_run: 1,
        batch: { enabled: true, max_running_items: 2, max_live_items: 4 },
      },
      ...config,
    },
  });
}

/** The input a workflow was started with, as its history holds it. */
async function startedInput(handle: WorkflowHandle): Promise<SubagentInput> {
  const [first] = (await handle.fetchHistory()).events ?? [];
  const stored = first.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  // History holds what the project's codecs made of it (large fields by digest): decoded as a worker does.
  const [payload] = await projectCodec().decode([stored as Payload]);
  return JSON.parse(Buffer.from(payload.data!).toString('utf8')) as SubagentInput;
}

function jsonl(keys: readonly string[]): string {
  return keys.map((key) => JSON.stringify({ key, prompt: `Is requirement ${key} testable?` })).join('\n');
}

function startLead(input: LeadRunInput, taskQueue: string): Promise<WorkflowHandle<typeof leadRunWorkflow>> {
  return startLeadRun(testClient(), input, taskQueue);
}

describe('the lead’s batch tools', () => {
  it('starts a batch from a workspace file, waits for it, reads its answers; a task still fits the total', async () => {
    const keys = ['req-1', 'req-2', 'req-3', 'req-4', 'req-5', 'req-6'];
    const input = setUp(
      {
        scripts: [
          {
            agent: 'lead',
            turns: [
              {
                tool_calls: [
                  {
                    name: 'batch_task',
                    id: 'b1',
                    args: {
                      description: 'Review requirements',
                      subagent_type: 'general-purpose',
                      items_file: 'items.jsonl',
                      max_live_items: 50,
                    },
                  },
                ],
              },
              {
                tool_calls: [{ name: 'batch_status', id: 's1', args: { batch_id: 'b1', wait_seconds: 300 } }],
              },
              { tool_calls: [{ name: 'read_batch_result', id: 'r1', args: { batch_id: 'b1' } }] },
              {
                tool_calls: [
                  {
                    name: 'task',
                    id: 't1',
                    args: {
                      description: 'Summarise',
                      prompt: 'Summarise.',
                      subagent_type: 'general-purpose',
                    },
                  },
                ],
              },
              { content: 'STARTED {{tool_result:b1}}\nSTATUS {{tool_result:s1}}\nREAD {{tool_result:r1}}' },
            ],
          },
          ITEM_ANSWERS,
        ],
      },
      { 'items.jsonl': jsonl(keys) },
    );
    expect(input.batch).toBeDefined();
    const taskQueue = uniqueTaskQueue('lead-batch');
    const client = testClient();
    const { result, batchStatus, events, starts, leadId } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      const result = await handle.result();
      const batchId = leadBatchWorkflowId(handle.workflowId, 'b1');
      return {
        result,
        leadId: handle.workflowId,
        batchStatus: await client.workflow.getHandle(batchId).query(batchStatusQuery, {}),
        events: await handle.query(leadEventsQuery, 0),
        starts: await childStarts(handle),
      };
    });
    const batchId = leadBatchWorkflowId(leadId, 'b1');

    expect(result.status).toBe('completed');
    expect(result.stop_reason).toBeUndefined();
    // The tool answered with the id and the ceiling it applied.
    expect(result.final_output).toContain(
      'Batch started: batch_id b1, 6 general-purpose items, at most 2 running',
    );
    expect(result.final_output).toContain('max_live_items 50 → 4 (the configured ceiling)');
    // The wait ended with the batch.
    expect(result.final_output).toMatch(
      /STATUS Batch b1 is completed: 6 general-purpose items "Review requirements" — completed 6\./,
    );
    for (const key of keys) {
      expect(result.final_output).toContain(`## ${key}: completed (attempts 1)\nVerdict: testable.`);
    }
    // One batch child, one task child; the batch's limits are the ceiling's.
    expect(starts).toEqual([batchId, `${leadId}/task/t1`]);
    expect(batchStatus.limits).toMatchObject({ max_running_items: 2, max_live_items: 4 });
    expect(batchStatus.counts.completed).toBe(6);
    // The ledger: the batch (not counted toward max_total_per_run: 1) and the task, both completed.
    expect(result.ledger.map((entry) => [entry.id, entry.kind, entry.status])).toEqual([
      ['b1', 'batch', 'completed'],
      ['t1', undefined, 'completed'],
    ]);
    expect(result.ledger[0]).toMatchObject({
      workflow_id: batchId,
      subagent_type: 'general-purpose',
      batch: { total: 6, completed: 6, failed: 0, cancelled: 0 },
    });
    expect(events.filter((event) => event.task_id === 'b1').map((event) => event.type)).toEqual([
      'batch_started',
      'batch_finished',
    ]);
  });

  it('runs each item with the run’s scope: its user, its guardrails (nobody to ask), its admission turn', async () => {
    const input = setUp(
      {
        scripts: [
          {
            agent: 'lead',
            turns: [
              {
                tool_calls: [
                  {
                    name: 'batch_task',
                    id: 'b1',
                    args: {
                      description: 'Greet',
                      subagent_type: 'general-purpose',
                      items: [{ key: 'only', prompt: 'Say hi.' }],
                    },
                  },
                ],
              },
              {
                tool_calls: [{ name: 'batch_status', id: 's1', args: { batch_id: 'b1', wait_seconds: 300 } }],
              },
              { tool_calls: [{ name: 'read_batch_result', id: 'r1', args: { batch_id: 'b1' } }] },
              { content: 'READ {{tool_result:r1}}' },
            ],
          },
          {
            agent: 'general-purpose',
            turns: [
              { tool_calls: [{ name: 'bash', id: 'h1', args: { command: 'echo hi' } }] },
              // The run's `ask` on bash, decided at once in an item: nobody is attached to approve it.
              {
                content: 'DENIED UNATTENDED',
                if_missing: { text: UNATTENDED_DENY_REASON, turn: { content: 'RAN WITHOUT GUARDRAILS' } },
              },
            ],
          },
        ],
      },
      {},
      {
        lead: { user_id: 'alice', fairness_key: 'team-a' },
        guardrails: { enabled: true, rules: [{ tool: 'bash', decision: 'ask' }] },
      },
    );
    const taskQueue = uniqueTaskQueue('lead-batch-scope');
    const client = testClient();
    const { result, item } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      const result = await handle.result();
      const batchId = leadBatchWorkflowId(handle.workflowId, 'b1');
      const item = client.workflow.getHandle(batchItemWorkflowId(batchId, 'only', 1));
      return { result, item: await startedInput(item) };
    });
    expect(result.status).toBe('completed');
    expect(result.final_output).toContain('DENIED UNATTENDED');
    expect(result.final_output).not.toContain('RAN WITHOUT GUARDRAILS');
    // The item's scope is the lead's, carried through the batch: only what changes with depth changed.
    const { clarification: _asked, ...shared } = input.scope;
    expect(item.scope).toEqual({
      ...shared,
      guardrails: { ...input.scope.guardrails, no_approver: true },
      workspace_key: expect.any(String) as unknown,
      ...(item.scope.workspace_placement !== undefined && {
        workspace_placement: item.scope.workspace_placement,
      }),
    });
    expect(item.scope).toMatchObject({ user_id: 'alice', fairness_key: 'team-a' });
  });

  it('refuses bad items with every problem named, and starts nothing', async () => {
    const criteria = Array.from({ length: 21 }, (_, i) => `contains: ${i}`);
    const input = setUp(
      {
        scripts: [
          {
            agent: 'lead',
            turns: [
              {
                tool_calls: [
                  {
                    name: 'batch_task',
                    id: 'dup',
                    args: {
                      description: 'Duplicates',
                      subagent_type: 'general-purpose',
                      items: [
                        { key: 'a', prompt: 'x' },
                        { key: 'a', prompt: 'y' },
                        { key: '', prompt: 'z' },
                        { key: 'c', prompt: 'w', acceptance_criteria: criteria },
                      ],
                    },
                  },
                  {
                    name: 'batch_task',
                    id: 'missing',
                    args: {
                      description: 'No file',
                      subagent_type: 'general-purpose',
                      items_file: 'nope.jsonl',
                    },
                  },
                  {
                    name: 'batch_task',
                    id: 'outside',
                    args: {
                      description: 'Escape',
                      subagent_type: 'general-purpose',
                      items_file: '../items.jsonl',
                    },
                  },
                  {
                    name: 'batch_task',
                    id: 'filedup',
                    args: {
                      description: 'File dups',
                      subagent_type: 'general-purpose',
                      items_file: 'dups.jsonl',
                    },
                  },
                  { name: 'batch_status', id: 'unknown', args: { batch_id: 'zzz' } },
                ],
              },
              {
                content: [
                  'DUP {{tool_result:dup}}',
                  'MISSING {{tool_result:missing}}',
                  'OUTSIDE {{tool_result:outside}}',
                  'FILEDUP {{tool_result:filedup}}',
                  'UNKNOWN {{tool_result:unknown}}',
                ].join('\n'),
              },
            ],
          },
          ITEM_ANSWERS,
        ],
      },
      { 'dups.jsonl': jsonl(['k1', 'k2', 'k1']) },
    );
    const taskQueue = uniqueTaskQueue('lead-batch-refused');
    const { result, starts } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLead(input, taskQueue);
      return { result: await handle.result(), starts: await childStarts(handle) };
    });
    const out = result.final_output;
    expect(out).toContain('DUP Batch refused, nothing started:');
    expect(out).toContain('items: duplicate keys: "a" ×2');
    expect(out).toMatch(/items\[2\]\.key: .*empty/);
    expect(out).toMatch(/items\[3\]\.acceptance_criteria: .*21.*20/);
    expect(out).toMatch(/MISSING Batch refused, nothing started:\n- items_file: .*nope\.jsonl/);
    expect(out).toMatch(/OUTSIDE Batch refused, nothing started:\n- items_file: .*outside the workspace/);
    expect(out).toContain('duplicate keys: "k1" ×2 (lines 1, 3)');
    expect(out).toContain('UNKNOWN No batch "zzz" in this run (batches: none).');
    expect(starts).toEqual([]);
    expect(result.ledger).toEqual([]);
  });

  it('keeps the batch running after the lead answers, and cancels it when the lead is cancelled', async () => {
    const slow = {
      agent: 'general-purpose',
      repeat_last: true,
      turns: [{ content: 'Done.', delay_ms: 400 }],
    };
    const start = (id: string) => ({
      name: 'batch_task',
      id,
      args: {
        description: `Batch ${id}`,
        subagent_type: 'general-purpose',
        items: ['x1', 'x2', 'x3', 'x4'].map((key) => ({ key, prompt: `Check ${key}.` })),
        max_running_items: 1,
      },
    });
    // One lead answers at once; the other waits on its batch until it is cancelled.
    const answers = setUp({
      scripts: [{ agent: 'lead', turns: [{ tool_calls: [start('b1')] }, { content: 'Started it.' }] }, slow],
    });
    const waits = setUp({
      scripts: [
        {
          agent: 'lead',
          turns: [
            { tool_calls: [start('b1')] },
            { tool_calls: [{ name: 'batch_status', args: { batch_id: 'b1', wait_seconds: 600 } }] },
            { content: 'Never.' },
          ],
        },
        slow,
      ],
    });
    const client = testClient();
    const batches = new BatchesClient(client);
    const taskQueue = uniqueTaskQueue('lead-batch-life');
    await withProjectWorker(taskQueue, async () => {
      const first = await startLead(answers, `${taskQueue}`);
      const answered = await first.result();
      expect(answered.status).toBe('completed');
      expect(answered.ledger[0]).toMatchObject({ id: 'b1', kind: 'batch', status: 'in_progress' });
      const outlives = batches.get(leadBatchWorkflowId(first.workflowId, 'b1'));
      expect((await outlives.result()).counts.completed).toBe(4);

      const second = await testClient().workflow.start<typeof leadRunWorkflow>('leadRunWorkflow', {
        taskQueue,
        workflowId: `${taskQueue}-lead-2`,
        args: [waits],
      });
      const batch = batches.get(leadBatchWorkflowId(second.workflowId, 'b1'));
      await waitFor('an item of the batch to finish', async () => {
        const status = await batch.status({ limit: 0 }).catch(() => undefined);
        return (status?.counts.completed ?? 0) >= 1;
      });
      await second.cancel();
      const cancelled = await workflowResult(second);
      expect(cancelled.status).toBe('cancelled');
      const end = await batch.result();
      expect(end.status).toBe('cancelled');
      expect(end.counts.completed).toBeGreaterThanOrEqual(1);
      expect(end.counts.completed + end.counts.cancelled).toBe(4);
      const ledger = await second.query(leadLedgerQuery);
      expect(ledger[0]).toMatchObject({ id: 'b1', kind: 'batch' });
    });
  });
});
