/** The pure parts of inspection: events from a closed run's ledger, status lines, list and step text. */
import { join } from 'node:path';
import type { LedgerEntry } from '../../../contracts/ledger';
import { eventsFromLedger } from '../../../client/api';
import {
  closedRunStatus,
  closedStatusLines,
  eventText,
  noWorkerMessage,
  openStatusLines,
} from '../../../cli/inspect-commands';
import { workerCommandLine } from '../../../cli/worker-presence';
import { listFilter, renderRunList } from '../../../cli/list-command';
import { ageText, visibilityQuery } from '../../../cli/visibility-listing';
import { stepsFromHistory } from '../../../client/subagent-steps';
import { stepLines } from '../../../cli/steps-command';
import { UsageError } from '../../../cli/flags';

const usage = (total: number) => ({ input_tokens: total - 10, output_tokens: 10, total_tokens: total });

function entry(id: string, fields: Partial<LedgerEntry> & Pick<LedgerEntry, 'status'>): LedgerEntry {
  return {
    id,
    run_id: 'run-1',
    description: `Part ${id}`,
    subagent_type: 'general-purpose',
    created_at: '2025-01-01T00:00:00.000Z',
    updated_at: '2025-01-01T00:00:05.000Z',
    workflow_id: `run-1/task/${id}`,
    ...fields,
  };
}

describe('eventsFromLedger', () => {
  it('gives each delegation its start and its end, in time order, numbered from 1', () => {
    const events = eventsFromLedger([
      entry('a', { status: 'completed', updated_at: '2025-01-01T00:00:09.000Z', model_name: 'm' }),
      entry('b', { status: 'failed', stop_reason: 'turn_capped', error: 'No text.' }),
      entry('c', { status: 'in_progress', created_at: '2025-01-01T00:00:01.000Z' }),
    ]);
    expect(events.map((e) => [e.seq, e.type, e.task_id])).toEqual([
      [1, 'task_started', 'a'],
      [2, 'task_started', 'b'],
      [3, 'task_started', 'c'],
      [4, 'task_failed', 'b'],
      [5, 'task_completed', 'a'],
    ]);
    expect(events[3]).toMatchObject({ status: 'failed', stop_reason: 'turn_capped', error: 'No text.' });
  });

  it('has no start for a delegation refused at admission, and a batch as batch events', () => {
    const events = eventsFromLedger([
      entry('r', { status: 'failed', admission_failure: true, error: 'full' }),
      entry('x', { status: 'cancelled', kind: 'batch', batch: { total: 3, completed: 1, cancelled: 2 } }),
      entry('p', { status: 'polling_timed_out' }),
    ]);
    expect(events.map((e) => [e.type, e.task_id])).toEqual([
      ['batch_started', 'x'],
      ['task_started', 'p'],
      ['task_failed', 'r'],
      ['batch_finished', 'x'],
      ['task_timed_out', 'p'],
    ]);
  });
});

describe('status lines', () => {
  const result = {
    run_id: 'run-1',
    status: 'completed' as const,
    stop_reason: 'token_capped' as const,
    final_output: '',
    ledger: [entry('a', { status: 'completed' }), entry('b', { status: 'failed' })],
    token_usage: { total: usage(1500) },
    turns: 1,
  };

  it('say how a closed run ended, its turns (one turn singular), tokens and the Web UI', () => {
    const closed = closedRunStatus(
      {
        open: false,
        execution_status: 'COMPLETED',
        status: 'completed',
        stop_reason: 'token_capped',
        result,
      },
      'http://ui/x',
    );
    expect(closedStatusLines('run-1', closed)).toEqual([
      'run-1: completed (token_capped), 1 lead turn, 1500 tokens; delegations: 1 completed, 1 failed',
      'Web UI: http://ui/x',
    ]);
  });

  it('say when an execution ended without a result, with its error', () => {
    const closed = closedRunStatus({
      open: false,
      execution_status: 'TIMED_OUT',
      status: 'timed_out',
      error: 'timed out: workflow execution timed out',
    });
    expect(closedStatusLines('run-1', closed)).toEqual([
      'run-1: timed_out; the execution timed out without a result (turns and delegations unknown)',
      'error: timed out: workflow execution timed out',
    ]);
  });

  it('keep the open run line', () => {
    const counts = {
      queued: 0,
      in_progress: 2,
      completed: 0,
      failed: 0,
      cancelled: 0,
      timed_out: 0,
      polling_timed_out: 0,
    };
    expect(
      openStatusLines('run-1', { state: 'running', turns: 2, token_usage: {}, counts, last_seq: 3 }),
    ).toEqual(['run-1: running, 2 lead turns; delegations: 2 in_progress']);
    const skilled = { state: 'running' as const, turns: 2, token_usage: {}, counts, last_seq: 3 };
    expect(openStatusLines('run-1', { ...skilled, active_skills: ['csv-summary'] })).toEqual([
      'run-1: running, 2 lead turns; delegations: 2 in_progress',
      'active skills: csv-summary',
    ]);
  });
});

it('event text names a terminal event by its ledger description and carries the error', () => {
  const [, failed] = eventsFromLedger([entry('b', { status: 'failed', error: 'Boom.\nstack' })]);
  expect(eventText(failed, false, new Map([['b', 'Part b']]))).toBe('2 00:00:05 b "Part b" failed: Boom.');
  expect(JSON.parse(eventText(failed, true))).toMatchObject({
    seq: 2,
    type: 'task_failed',
    error: 'Boom.\nstack',
  });
});

describe('the worker hint of status, ledger and cancel', () => {
  const place = { address: 'temporal.example:7233', namespace: 'team', taskQueue: 'agents q' };

  it('names the config the command was given, as a path that works from any folder', () => {
    expect(workerCommandLine({ ...place, configFile: 'conf/config.yaml' })).toBe(
      `subagents worker --address temporal.example:7233 --task-queue 'agents q' --namespace team ` +
        `--config ${join(process.cwd(), 'conf/config.yaml')}`,
    );
    expect(workerCommandLine(place)).not.toContain('--config');
  });

  it('is the same in the no-worker message', () => {
    const message = noWorkerMessage({
      command: 'status',
      runId: 'run r1',
      ...place,
      configFile: '/etc/s.yaml',
    });
    expect(message).toMatch(/Start one with: subagents worker .* --config \/etc\/s\.yaml$/);
  });
});

describe('list', () => {
  it('checks the filters against the contract and builds the query', () => {
    // A run that continued as new leaves its earlier execution behind under the same id: listed once.
    const latest = "WorkflowType = 'leadRunWorkflow' AND ExecutionStatus != 'ContinuedAsNew'";
    expect(visibilityQuery(listFilter('failed', 'token_capped'))).toBe(
      `${latest} AND SubagentStatus = 'failed' AND StopReason = 'token_capped'`,
    );
    expect(visibilityQuery(listFilter(undefined, undefined))).toBe(latest);
    expect(visibilityQuery(listFilter('running', undefined, 'alice@example.org'))).toBe(
      `${latest} AND SubagentStatus = 'running' AND UserId = 'alice@example.org'`,
    );
    expect(() => listFilter(undefined, undefined, "x' OR 1=1")).toThrow(
      `--user: "x' OR 1=1" is not a user id (letters, digits`,
    );
    expect(() => listFilter("x' OR 1=1", undefined)).toThrow(UsageError);
    expect(() => listFilter(undefined, 'bored')).toThrow(
      '--stop-reason: "bored" is not one of token_capped, turn_capped, loop_capped, cost_capped, subagent_limit_capped, model_length_capped',
    );
  });

  it("renders a table, marking a status that is Temporal's own", () => {
    const now = Date.parse('2025-01-02T00:00:00.000Z');
    expect(
      renderRunList(
        [
          {
            run_id: 'run-2',
            status: 'failed',
            status_source: 'search_attribute',
            execution_status: 'COMPLETED',
            stop_reason: 'token_capped',
            total_tokens: 900,
            started_at: '2025-01-01T23:59:15.000Z',
          },
          {
            run_id: 'run-1',
            status: 'completed',
            status_source: 'execution',
            execution_status: 'COMPLETED',
            started_at: '2025-01-01T00:00:00.000Z',
          },
        ],
        now,
      ),
    ).toEqual([
      'RUN ID  STATUS       STOP REASON   TOKENS  AGE',
      'run-2   failed       token_capped     900  45s',
      'run-1   (completed)  -                  -   1d',
      "(status): Temporal's execution status, for runs that carry no SubagentStatus",
    ]);
    expect([ageText(59_000), ageText(60_000), ageText(3_600_000)]).toEqual(['59s', '1m', '1h']);
  });
});

describe('steps from history', () => {
  const model = (content: string, calls: string[] = []) => ({
    kind: 'model' as const,
    result: {
      content,
      model_name: 'm',
      tool_calls: calls.map((id) => ({ id, name: id === 'd' ? 'task' : 'ls', args: '{}' })),
    },
  });
  const tool = (id: string, content: string) => ({
    kind: 'tool' as const,
    result: { tool_call_id: id, name: 'ls', content, is_error: false },
  });

  it('puts results in the order of the calls and says what history lacks', () => {
    const { steps, missing } = stepsFromHistory(
      [model('Looking.', ['x', 'y', 'd']), tool('y', 'second'), tool('x', 'first'), model('Done.')],
      { guardStopped: false },
    );
    expect(steps.map((s) => [s.seq, s.kind, s.text])).toEqual([
      [1, 'ai', 'Looking.'],
      [2, 'tool', 'first'],
      [3, 'tool', 'second'],
      [4, 'ai', 'Done.'],
    ]);
    expect(missing).toEqual([expect.stringMatching(/^the result of delegation d /)]);
    expect(stepLines(steps[0])).toEqual([
      '1 ai: Looking.',
      '    → ls [x] {}',
      '    → ls [y] {}',
      '    → task [d] {}',
    ]);
  });

  it("drops a guard-stopped last turn's calls and skips an error fallback", () => {
    const fallback = {
      kind: 'model' as const,
      result: { ...model('').result, error_fallback: { message: '400' } },
    };
    const { steps, missing } = stepsFromHistory([model('', ['x']), tool('x', 'ok'), model('', ['z'])], {
      guardStopped: true,
    });
    expect(steps.map((s) => s.kind)).toEqual(['ai', 'tool', 'ai']);
    expect(steps[2]).toMatchObject({ kind: 'ai', tool_calls: [] });
    expect(missing).toEqual([]);
    expect(stepsFromHistory([fallback], { guardStopped: false }).steps).toEqual([]);
  });

  it('reports a failed tool activity as an error step', () => {
    const { steps } = stepsFromHistory(
      [
        model('', ['x']),
        { kind: 'tool_failed', call: { id: 'x', name: 'ls', args: '{}' }, message: 'worker lost' },
      ],
      { guardStopped: false },
    );
    expect(stepLines(steps[1])).toEqual(['2 tool ls [x] error: Tool "ls" failed: worker lost']);
  });

  it("replays the skills' policy: the read that activated a skill, and the call it refused (which never ran)", () => {
    const skill = {
      name: 'a',
      description: 'A.',
      category: 'public' as const,
      container_path: '/mnt/skills/public/a/SKILL.md',
      content_hash: 'sha256:0',
      allowed_tools: ['read_file'],
      required_secrets: [],
    };
    const call = (id: string, name: string, args: Record<string, unknown>) => ({
      id,
      name,
      args: JSON.stringify(args),
    });
    const { steps, missing } = stepsFromHistory(
      [
        { kind: 'skills', skills: [skill] },
        {
          kind: 'model',
          result: {
            content: '',
            model_name: 'm',
            tool_calls: [
              call('r', 'read_file', { path: '/mnt/skills/public/a/SKILL.md' }),
              call('b', 'bash', { command: 'ls' }),
            ],
          },
        },
        { kind: 'tool', result: { tool_call_id: 'r', name: 'read_file', content: '# a', is_error: false } },
      ],
      { guardStopped: false },
    );
    expect(missing).toEqual([]);
    expect(steps.slice(1).map(stepLines)).toEqual([
      ['2 tool read_file [r] (skill a active): # a'],
      [expect.stringMatching(/^3 tool bash \[b\] error: Tool bash is not allowed while skill a is active/)],
    ]);
  });

  it('names the skill a read of its SKILL.md made active', () => {
    const read = {
      seq: 3,
      kind: 'tool' as const,
      text: '# CSV summary',
      truncated: false,
      tool_call_id: 'r',
      name: 'read_file',
      is_error: false,
      activated_skill: 'csv-summary',
    };
    expect(stepLines(read)).toEqual(['3 tool read_file [r] (skill csv-summary active): # CSV summary']);
  });
});
