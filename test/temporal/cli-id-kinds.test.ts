/**
 * Every command that takes a run id, given each kind of id a user meets (a lead run, a subagent, a lead's
 * batch, a batch `batch start` made, a batch item, the admission workflow, a schedule's run, an unknown id):
 * it says in words what the id is, and which command reads it, or shows it; never a JavaScript error.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { ListedBatch } from '../../cli/batch-list-command';
import { BatchesClient } from '../../client/batches';
import { SubagentsSchedules } from '../../client/schedules';
import { admissionWorkflowId } from '../../contracts/admission';
import { leadBatchWorkflowId } from '../../contracts/batch';
import { leadInput, scriptedBatchInput, scriptedWorkspace, tempDir } from '../support/subagent-input';
import type { Finished } from '../support/cli-process';
import {
  startLeadRun,
  suiteCli,
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();
const cli = suiteCli;

const ITEMS = {
  agent: 'general-purpose',
  prompt_contains: 'Check ok',
  repeat_last: true,
  turns: [{ content: 'Fine.' }],
};
/** An item that only ever lists: with one turn and one attempt, it fails (turn_capped). */
const BAD_ITEM = {
  agent: 'general-purpose',
  prompt_contains: 'Check bad',
  repeat_last: true,
  turns: [{ content: '', tool_calls: [{ name: 'ls', args: '{}' }] }],
};

/** The lead delegates `a` and starts batch `b1` from items.jsonl, then answers. */
const LEAD: ModelScriptFileInput = {
  scripts: [
    {
      agent: 'lead',
      turns: [
        {
          tool_calls: [
            {
              name: 'task',
              id: 'a',
              args: { description: 'Part a', prompt: 'Do part a.', subagent_type: 'general-purpose' },
            },
            {
              name: 'batch_task',
              id: 'b1',
              args: { description: 'Checks', subagent_type: 'general-purpose', items_file: 'items.jsonl' },
            },
          ],
        },
        { content: 'Done.' },
      ],
    },
    { agent: 'general-purpose', prompt_contains: 'part a', turns: [{ content: 'Part a done.' }] },
    ITEMS,
  ],
};

const ids: Record<string, string> = {};
let taskQueue: string;
const closed = async (id: string) => {
  const status = (await testClient().workflow.getHandle(id).describe()).status.name;
  return status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW';
};

beforeAll(async () => {
  taskQueue = uniqueTaskQueue('cli-ids');
  const schedules = new SubagentsSchedules(testClient(), testNamespace());
  const name = `ids-${randomUUID().slice(0, 8)}`;
  await withProjectWorker(taskQueue, async () => {
    const { workspace, scriptFile } = scriptedWorkspace('cli-ids', LEAD);
    writeFileSync(join(workspace, 'items.jsonl'), JSON.stringify({ key: 'ok-1', prompt: 'Check ok-1.' }));
    const lead = await startLeadRun(
      testClient(),
      leadInput({
        workspace,
        scriptFile,
        config: { subagents: { batch: { enabled: true, max_running_items: 1, max_live_items: 2 } } },
      }),
      taskQueue,
    );
    const batchInput = scriptedBatchInput(
      [
        { key: 'ok-1', prompt: 'Check ok-1.' },
        { key: 'bad', prompt: 'Check bad.' },
      ],
      { max_attempts: 1 },
      { scripts: [ITEMS, BAD_ITEM] },
    );
    const batch = await new BatchesClient(testClient()).start(
      { ...batchInput, agent: { ...batchInput.agent, max_turns: 1 } },
      { taskQueue, batchId: `batch-${taskQueue}` },
    );
    const leadScript = tempDir('cli-ids-schedule');
    writeFileSync(
      join(leadScript, 'script.json'),
      JSON.stringify({ scripts: [{ agent: 'lead', repeat_last: true, turns: [{ content: 'Done.' }] }] }),
    );
    await schedules.create({
      name,
      timing: { kind: 'every', seconds: 86_400 },
      action: {
        kind: 'lead',
        input: leadInput({
          workspace: tempDir('cli-ids-occurrence'),
          scriptFile: join(leadScript, 'script.json'),
        }),
      },
      taskQueue,
    });
    await schedules.trigger(name);
    await waitFor('the schedule to start its run', async () => {
      const view = await schedules.describe(name);
      const run = view.recent_runs.at(-1);
      if (run) ids.occurrence = run.run_id;
      return run !== undefined && run.workflow_status !== 'running';
    });
    await schedules.delete(name);
    // A schedule of batches, one of whose items fails.
    await schedules.create({
      name: `${name}-batch`,
      timing: { kind: 'every', seconds: 86_400 },
      action: { kind: 'batch', input: { ...batchInput, agent: { ...batchInput.agent, max_turns: 1 } } },
      taskQueue,
    });
    await schedules.trigger(`${name}-batch`);
    await waitFor('the schedule to run its batch', async () => {
      const run = (await schedules.describe(`${name}-batch`)).recent_runs.at(-1);
      return run !== undefined && run.workflow_status !== 'running';
    });
    ids.batchSchedule = `${name}-batch`;
    Object.assign(ids, {
      lead: lead.workflowId,
      subagent: `${lead.workflowId}/task/a`,
      leadBatch: leadBatchWorkflowId(lead.workflowId, 'b1'),
      cliBatch: batch.batchId,
      item: `${batch.batchId}/item/bad/1`,
      admission: admissionWorkflowId(taskQueue),
      unknown: `no-such-run-${taskQueue}`,
    });
    for (const id of [ids.lead, ids.leadBatch, ids.cliBatch])
      await waitFor(`${id} to close`, async () => (await closed(id).catch(() => false)) === true);
  });
});

/** Words only: no JavaScript error, no stack, no "unexpected error". */
function expectWords(finished: Finished): void {
  const all = `${finished.stdout}\n${finished.stderr}`;
  expect(all).not.toMatch(
    /TypeError|ReferenceError|is not iterable|is not a function|\n\s+at |unexpected error/,
  );
  expect(all.trim()).not.toBe('');
}

const KINDS = ['lead', 'subagent', 'leadBatch', 'cliBatch', 'item', 'admission', 'occurrence', 'unknown'];

describe.each(['status', 'ledger', 'events', 'steps', 'report', 'cancel', 'answer'])('%s', (command) => {
  it.each(KINDS)('on a %s id says what it is in words', async (kind) => {
    const id = ids[kind];
    const args =
      command === 'answer'
        ? [command, id, 'yes']
        : command === 'report'
          ? [command, id, '-o', join(tempDir('cli-ids-report'), 'r.html')]
          : [command, id];
    const finished = await cli(args);
    expectWords(finished);
    expect([0, 1, 2]).toContain(finished.code);
    if (kind === 'unknown') {
      expect(finished.code).toBe(2);
      expect(finished.stderr).toMatch(new RegExp(`no (run|run or subagent) ${id} on ${testAddress()}`));
      return;
    }
    const lead = kind === 'lead' || kind === 'occurrence';
    if (lead) {
      // A closed lead run: read without a worker; cancel and answer say it has ended.
      if (command === 'cancel' || command === 'answer') {
        expect(finished.code).toBe(1);
        expect(finished.stderr).toMatch(/has (already )?ended/);
      } else if (command === 'steps') {
        expect(finished.code).toBe(2);
        expect(finished.stderr).toMatch(`give a task id too: subagents steps ${id} <task-id>`);
      } else {
        expect(finished.code).toBe(0);
      }
      return;
    }
    const is: Record<string, string> = {
      subagent: `is a subagent of run ${ids.lead}`,
      leadBatch: `is a batch of run ${ids.lead}`,
      cliBatch: 'is a batch',
      item: `is attempt 1 of item bad of batch ${ids.cliBatch}`,
      admission: `is the admission workflow of task queue "${taskQueue}"`,
    };
    if (command === 'status' && kind !== 'admission') {
      expect(finished.code).toBe(0);
      expect(finished.stdout).toContain(`${id} ${is[kind]}`);
      return;
    }
    if (command === 'steps' && (kind === 'subagent' || kind === 'item')) {
      expect(finished.code).toBe(0);
      return;
    }
    expect(finished.code).toBe(2);
    expect(finished.stderr).toContain(`${id} ${is[kind]}`);
  });
});

it("status shows a batch's failed item and a subagent's own outcome", async () => {
  const batch = await cli(['status', ids.cliBatch]);
  expect(batch.stdout).toMatch(new RegExp(`^${ids.cliBatch}: completed · 1/2 done · .* · 1 failed`));
  expect(batch.stdout).toContain(`subagents batch status ${ids.cliBatch}`);
  const item = await cli(['status', ids.item]);
  expect(item.stdout).toMatch(new RegExp(`^${ids.item}: failed \\(turn_capped\\) after 1 turn`));
  const subagent = await cli(['status', ids.subagent]);
  expect(subagent.stdout).toMatch(new RegExp(`^${ids.subagent}: completed after 1 turn`));
  expect(subagent.stdout).toContain(`subagents steps ${ids.lead} a`);
  const json = await cli(['status', ids.cliBatch, '--json']);
  expect(JSON.parse(json.stdout)).toMatchObject({
    kind: 'batch',
    state: 'finished',
    result: { counts: { failed: 1, completed: 1 } },
  });
});

it("steps reads a batch item's latest attempt from the batch and its key", async () => {
  const steps = await cli(['steps', ids.cliBatch, 'bad']);
  expectWords(steps);
  expect(steps.code).toBe(0);
  expect(steps.stdout).toMatch(new RegExp(`${ids.item}: failed \\(turn_capped\\)`));
});

it.each(['status', 'ledger', 'events', 'cancel'])(
  '%s on a schedule, by its name or its id, points to schedule describe (exit 2)',
  async (command) => {
    const name = ids.batchSchedule;
    for (const id of [name, `subagents-schedule/${name}`]) {
      const finished = await cli([command, id]);
      expect(finished.code).toBe(2);
      expect(finished.stderr).toBe(
        `subagents: ${command}: ${id} is a schedule, not a run; its timing and the runs it started: ` +
          `subagents schedule describe ${name}\n`,
      );
    }
  },
);

it('schedule describe says which runs are batches and how many of their items failed', async () => {
  const finished = await cli(['schedule', 'describe', ids.batchSchedule]);
  expectWords(finished);
  expect(finished.code).toBe(0);
  expect(finished.stdout).toMatch(/^ {4}\S+ {2}batch, completed: 1 of 2 items completed, 1 failed$/m);
  expect(finished.stdout).toContain("a batch's items: subagents batch status <id>");
  await new SubagentsSchedules(testClient(), testNamespace()).delete(ids.batchSchedule);
});

it('report writes a page for a lead run only', async () => {
  const path = join(tempDir('cli-ids-report'), 'batch.html');
  const report = await cli(['report', ids.cliBatch, '-o', path]);
  expect(report.code).toBe(2);
  expect(existsSync(path)).toBe(false);
  expect(report.stderr).toContain(`subagents batch status ${ids.cliBatch}`);
});

it('list shows lead runs, a schedule’s among them, and no subagent or batch', async () => {
  await waitFor('the runs in the list', async () => {
    const list = await cli(['list', '--json', '--limit', '1000']);
    const listed = (JSON.parse(list.stdout) as { run_id: string }[]).map((run) => run.run_id);
    return listed.includes(ids.lead) && listed.includes(ids.occurrence);
  });
  const list = await cli(['list', '--limit', '1000']);
  expectWords(list);
  for (const id of [ids.subagent, ids.leadBatch, ids.cliBatch, ids.item, ids.admission])
    expect(list.stdout).not.toContain(`${id} `);
});

it('batch list names the run that started a lead’s batch; a batch of batch start or a schedule has none', async () => {
  const occurrence = `schedule-${ids.batchSchedule}-`;
  let batches: ListedBatch[] = [];
  await waitFor('the three batches in the list, ended', async () => {
    const list = await cli(['batch', 'list', '--json', '--limit', '200']);
    batches = (JSON.parse(list.stdout) as ListedBatch[]).filter(
      (batch) =>
        [ids.leadBatch, ids.cliBatch].includes(batch.batch_id) || batch.batch_id.startsWith(occurrence),
    );
    return batches.length === 3 && batches.every((batch) => batch.status !== 'running');
  });
  const byId = (id: string) => batches.find((batch) => batch.batch_id.startsWith(id));
  expect(byId(ids.leadBatch)).toMatchObject({
    status: 'completed',
    lead_run_id: ids.lead,
    items: { completed: 1, failed: 0, cancelled: 0, total: 1 },
  });
  for (const id of [ids.cliBatch, occurrence]) {
    expect(byId(id)).toMatchObject({
      status: 'failed',
      failed_items: 1,
      items: { completed: 1, failed: 1, cancelled: 0, total: 2 },
    });
    expect(byId(id)?.lead_run_id).toBeUndefined();
  }
  const text = await cli(['batch', 'list', '--limit', '200']);
  expectWords(text);
  expect(text.stdout).toMatch(
    new RegExp(`^${ids.leadBatch} +completed +1/0/1 +default +${ids.lead} +\\d+[smhd]$`, 'm'),
  );
});
