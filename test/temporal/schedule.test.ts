/**
 * Scheduled lead runs on the server's Schedules API, against the real dev server with the scripted model:
 * `subagents schedule …` as processes of their own (create, list, pause, trigger, delete, describe), overlap
 * SKIP through the client API, and the CLI's refusals.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { BatchesClient } from '../../client/batches';
import type { LeadRunResult } from '../../contracts/lead';
import { cliEnv, runCli, type Finished } from '../support/cli-process';
import { leadInput, scriptedBatchInput, tempDir, writeScript } from '../support/subagent-input';
import {
  InvalidScheduleError,
  SubagentsSchedules,
  type ScheduleListEntry,
  type ScheduleView,
} from '../../client/schedules';
import {
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();
const schedules = () => new SubagentsSchedules(testClient(), testNamespace());

const SCHEDULED_BY = defineSearchAttributeKey('TemporalScheduledById', SearchAttributeType.KEYWORD);
const SUBAGENT_TYPE = defineSearchAttributeKey('SubagentType', SearchAttributeType.KEYWORD);
const DELEGATION_DEPTH = defineSearchAttributeKey('DelegationDepth', SearchAttributeType.INT);

const uniqueName = (label: string) => `${label}-${randomUUID().slice(0, 8)}`;

/** A scripted lead that answers "Done." after `delayMs`, in every run. */
function leadScript(dir: string, delayMs: number): string {
  return writeScript(dir, {
    scripts: [{ agent: 'lead', repeat_last: true, turns: [{ content: 'Done.', delay_ms: delayMs }] }],
  });
}

/** The server's view of a schedule's runs once `count` of them have closed. */
async function closedRuns(name: string, count: number, timeoutMs: number): Promise<ScheduleView> {
  let view: ScheduleView | undefined;
  await waitFor(
    `${count} closed runs of schedule ${name}`,
    async () => {
      view = await schedules().describe(name);
      return view.recent_runs.filter((run) => run.workflow_status !== 'running').length >= count;
    },
    timeoutMs,
  );
  return view as ScheduleView;
}

function oneLine(finished: Finished): string {
  const lines = finished.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0];
}

it('runs a lead every 2s from `schedule create`; pause stops it, trigger runs it now, delete removes it', async () => {
  const name = uniqueName('every');
  const taskQueue = uniqueTaskQueue('schedule');
  const dir = tempDir('schedule');
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `models:\n  - name: scripted\n    provider: scripted\n    script_file: ${leadScript(dir, 0)}\n`,
  );
  const workspace = join(dir, 'workspace');
  const env = cliEnv({ SUBAGENTS_SCHEDULE_MIN_SECONDS: '1' });
  const server = ['--address', testAddress(), '--namespace', testNamespace()];
  const cli = (...args: string[]) => runCli(['schedule', ...args, ...server], env);

  await withProjectWorker(taskQueue, async () => {
    const created = await runCli(
      [
        'schedule',
        'create',
        name,
        '--every',
        '2s',
        ...server,
        '--task-queue',
        taskQueue,
        '--config',
        config,
        '--workspace',
        workspace,
        '--json',
        'Check the workspace.',
      ],
      env,
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(created.stdout)).toMatchObject({
      name,
      schedule_id: `subagents-schedule/${name}`,
      action: { kind: 'lead', prompt: 'Check the workspace.', workspace },
      task_queue: taskQueue,
      timing: { kind: 'every', seconds: 2 },
      overlap: 'skip',
      paused: false,
    });

    // Two occurrences, each a completed lead run whose run id is its own workflow id.
    const fired = await closedRuns(name, 2, 20_000);
    const runs = fired.recent_runs.filter((run) => run.workflow_status !== 'running');
    const ids = runs.map((run) => run.run_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const run of runs) {
      // The server appends the nominal time to the action's workflow id: one id per occurrence.
      expect(run.run_id).toMatch(new RegExp(`^schedule-${name}-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`));
      expect(run).toMatchObject({ workflow_status: 'completed', outcome: 'completed' });
      const handle = testClient().workflow.getHandle(run.run_id);
      const result = (await handle.result()) as LeadRunResult;
      expect(result).toMatchObject({ run_id: run.run_id, status: 'completed', final_output: 'Done.' });
      const attributes = (await handle.describe()).typedSearchAttributes;
      expect(attributes.get(SCHEDULED_BY)).toBe(`subagents-schedule/${name}`);
      expect(attributes.get(SUBAGENT_TYPE)).toBe('lead');
      expect(attributes.get(DELEGATION_DEPTH)).toBe(0);
    }

    let listed: ScheduleListEntry[] = [];
    await waitFor('the schedule in `schedule list`', async () => {
      listed = JSON.parse((await cli('list', '--json')).stdout) as ScheduleListEntry[];
      return listed.some((entry) => entry.name === name);
    });
    expect(listed.find((entry) => entry.name === name)).toMatchObject({
      action_kind: 'lead',
      timing: { kind: 'every', seconds: 2 },
      paused: false,
    });

    const paused = await cli('pause', name, '--note', 'maintenance window', '--json');
    expect(paused.code).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ paused: true, note: 'maintenance window' });
    // One that was due as the pause landed may still be closing: count from when all have closed.
    await waitFor('no run in progress', async () => (await schedules().describe(name)).running.length === 0);
    const taken = (await schedules().describe(name)).actions_taken;
    // Nothing fires while paused. A wait, as a check that something does not happen needs one; a busy host can
    // only lengthen it. 3 s holds a tick of the 2 s interval, and a tick the server takes late is still caught:
    // after the trigger below, exactly one action more must have been taken.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect((await schedules().describe(name)).actions_taken).toBe(taken);

    const triggeredAt = Date.now();
    const triggered = await cli('trigger', name);
    expect(triggered.code).toBe(0);
    expect(triggered.stdout).toMatch(/triggered \(overlap skip\)/);
    let afterTrigger = await schedules().describe(name);
    await waitFor(
      'the triggered run to close',
      async () => {
        afterTrigger = await schedules().describe(name);
        return (
          afterTrigger.actions_taken > taken && afterTrigger.recent_runs.at(-1)?.workflow_status !== 'running'
        );
      },
      20_000,
    );
    expect(afterTrigger.actions_taken).toBe(taken + 1);
    expect(afterTrigger.paused).toBe(true);
    const manual = afterTrigger.recent_runs.at(-1);
    expect(manual).toMatchObject({ workflow_status: 'completed', outcome: 'completed' });
    // Due when it was triggered (to the second), not at an interval's tick.
    expect(Date.parse(manual?.scheduled_at ?? '')).toBeGreaterThanOrEqual(triggeredAt - 1000);

    const human = await cli('describe', name);
    expect(human.stdout).toMatch(new RegExp(`^Schedule ${name} \\(subagents-schedule/${name}\\): every 2s`));
    expect(human.stdout).toMatch(/paused — maintenance window/);

    expect((await cli('delete', name)).code).toBe(0);
    const gone = await cli('describe', name);
    expect(gone.code).toBe(2);
    expect(oneLine(gone)).toBe(
      `subagents: schedule describe: no schedule "${name}" on ${testAddress()} (subagents schedule list)`,
    );
  });
});

it('never overlaps two runs under the default SKIP when a run outlasts the interval', async () => {
  const name = uniqueName('skip');
  const taskQueue = uniqueTaskQueue('schedule-skip');
  const dir = tempDir('schedule-skip');
  const input = leadInput({ workspace: join(dir, 'workspace'), scriptFile: leadScript(dir, 1800) });
  await withProjectWorker(taskQueue, async () => {
    await schedules().create({
      name,
      timing: { kind: 'every', seconds: 1 },
      action: { kind: 'lead', input },
      taskQueue,
    });
    try {
      const view = await closedRuns(name, 2, 20_000);
      expect(view.overlap).toBe('skip');
      expect(view.skipped_for_overlap).toBeGreaterThan(0);
      const spans = await Promise.all(
        view.recent_runs.map(async (run) => {
          const description = await testClient().workflow.getHandle(run.run_id).describe();
          return { start: description.startTime.getTime(), close: description.closeTime?.getTime() };
        }),
      );
      spans.sort((a, b) => a.start - b.start);
      for (let i = 1; i < spans.length; i++) {
        const previous = spans[i - 1].close;
        expect(previous).toBeDefined();
        expect(spans[i].start).toBeGreaterThanOrEqual(previous ?? Infinity);
      }
    } finally {
      await schedules().delete(name);
    }
  });
});

it('takes a cron expression and refuses one the server cannot read', async () => {
  const name = uniqueName('cron');
  const dir = tempDir('schedule-cron');
  const input = leadInput({ workspace: join(dir, 'workspace'), scriptFile: leadScript(dir, 0) });
  const action = { kind: 'lead', input } as const;
  const view = await schedules().create({
    name,
    timing: { kind: 'cron', expression: '0 2 * * *' },
    action,
    taskQueue: uniqueTaskQueue('schedule-cron'),
  });
  try {
    expect(view.timing).toEqual({ kind: 'cron', expression: '0 2 * * *' });
    expect(view.next_runs.length).toBeGreaterThan(0);
    for (const time of view.next_runs) expect(time).toMatch(/T02:00:00\.000Z$/);
  } finally {
    await schedules().delete(name);
  }
  await expect(
    schedules().create({
      name: uniqueName('bad-cron'),
      timing: { kind: 'cron', expression: 'every tuesday' },
      action,
      taskQueue: 'unused',
    }),
  ).rejects.toThrow(InvalidScheduleError);
});

describe('schedule create refuses, in one line with exit 2, before asking a server', () => {
  const cases: [string, string[], RegExp][] = [
    [
      'a name with a space',
      ['bad name', '--every', '1h', 'p'],
      /^subagents: schedule create: schedule name "bad name" may hold only letters, digits/,
    ],
    [
      'an interval under the minimum',
      ['ok', '--every', '30s', 'p'],
      /^subagents: --every: 30s is under the minimum interval of 1m .*SUBAGENTS_SCHEDULE_MIN_SECONDS/,
    ],
    [
      'both --every and --cron',
      ['ok', '--every', '1h', '--cron', '0 2 * * *', 'p'],
      /^subagents: schedule create: give one of --every <duration>/,
    ],
    [
      'neither --every nor --cron',
      ['ok', 'p'],
      /^subagents: schedule create: give one of --every <duration>/,
    ],
    [
      'a duration without a unit',
      ['ok', '--every', '60', 'p'],
      /^subagents: --every: "60" is not a duration/,
    ],
    [
      'an unknown overlap policy',
      ['ok', '--every', '1h', '--overlap', 'sometimes', 'p'],
      /^subagents: --overlap: "sometimes" is not a policy \(skip, buffer_one/,
    ],
  ];
  it.concurrent.each(cases)('%s', async (_label, args, message) => {
    const finished = await runCli(['schedule', 'create', ...args], cliEnv());
    expect(finished.code).toBe(2);
    expect(finished.stdout).toBe('');
    expect(oneLine(finished)).toMatch(message);
  });
});

it('runs a batch on a schedule: each occurrence a batch of its own, its items run and its outcome shown', async () => {
  const name = uniqueName('batch');
  const taskQueue = uniqueTaskQueue('schedule-batch');
  const input = scriptedBatchInput(
    ['a', 'b', 'c'].map((key) => ({ key, prompt: `Check ${key}.` })),
    {},
    { scripts: [{ agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Checked.' }] }] },
    'Nightly checks',
  );
  const { workspace } = input.scope;
  await withProjectWorker(taskQueue, async () => {
    await schedules().create({
      name,
      timing: { kind: 'every', seconds: 2 },
      action: { kind: 'batch', input },
      taskQueue,
    });
    try {
      const view = await closedRuns(name, 2, 30_000);
      expect(view.action).toEqual({
        kind: 'batch',
        description: 'Nightly checks',
        subagent_type: 'general-purpose',
        items: 3,
        workspace,
      });
      const closed = view.recent_runs.filter((run) => run.workflow_status !== 'running');
      expect(closed.slice(0, 2).map((run) => [run.workflow_status, run.outcome])).toEqual([
        ['completed', 'completed'],
        ['completed', 'completed'],
      ]);
      // Each occurrence is a batch of its own id, its items that batch's children.
      for (const run of closed.slice(0, 2)) {
        expect(run.run_id).toMatch(
          new RegExp(`^schedule-${name}-\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ$`),
        );
        const lines: string[] = [];
        for await (const line of new BatchesClient(testClient()).get(run.run_id).results()) {
          lines.push(`${line.key} ${line.status} ${line.result ?? ''}`);
        }
        expect(lines).toEqual(['a completed Checked.', 'b completed Checked.', 'c completed Checked.']);
      }
    } finally {
      await schedules().delete(name);
    }
  });
});

it("settles a guardrail's ask at once in a scheduled run: nobody follows it to approve", async () => {
  const name = uniqueName('unattended');
  const taskQueue = uniqueTaskQueue('schedule-unattended');
  const dir = tempDir('schedule-unattended');
  const script = writeScript(dir, {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: [{ name: 'bash', id: 'clean', args: { command: 'rm -f old.log' } }] },
          { content: 'Lead: {{tool_result:clean}}' },
        ],
      },
    ],
  });
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `models:\n  - name: scripted\n    provider: scripted\n    script_file: ${script}\n` +
      'guardrails:\n  enabled: true\n  rules:\n    - { tool: bash, args: { command: "rm " }, decision: ask, reason: deletes files }\n',
  );
  const env = cliEnv({ SUBAGENTS_SCHEDULE_MIN_SECONDS: '1' });
  const server = ['--address', testAddress(), '--namespace', testNamespace()];
  await withProjectWorker(taskQueue, async () => {
    const created = await runCli(
      [
        'schedule',
        'create',
        name,
        '--every',
        '1h',
        ...server,
        '--task-queue',
        taskQueue,
        '--config',
        config,
        '--workspace',
        join(dir, 'workspace'),
        'Clean up.',
      ],
      env,
    );
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    try {
      expect((await runCli(['schedule', 'trigger', name, ...server], env)).code).toBe(0);
      const [run] = (await closedRuns(name, 1, 30_000)).recent_runs;
      const result = (await testClient().workflow.getHandle(run.run_id).result()) as LeadRunResult;
      expect(result.final_output).toBe(
        'Lead: Guardrail denied: bash — no person is attached to approve it (guardrails.unattended: deny) ' +
          '(rules[0])',
      );
    } finally {
      await runCli(['schedule', 'delete', name, ...server], env);
    }
  });
});
