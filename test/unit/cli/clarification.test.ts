import type { PendingQuestion } from '../../../contracts/clarification';
import type { TaskEvent } from '../../../contracts/events';
import { eventLine } from '../../../cli/progress';
import { openStatusLines } from '../../../cli/inspect-commands';
import { pendingQuestionLines } from '../../../cli/questions';
import { foldTaskProgress, renderTree, type TreeSnapshot } from '../../../cli/tree';

const question = (ref: string, fields: Partial<PendingQuestion> = {}): PendingQuestion => ({
  ref,
  id: ref.split('/').pop() ?? ref,
  workflow_id: 'run-1',
  asked_by: 'lead',
  asked_at: '2025-01-01T00:00:00.000Z',
  expires_at: '2025-01-01T01:00:00.000Z',
  timeout_seconds: 3600,
  question: 'Which region?',
  clarification_type: 'missing_info',
  ...fields,
});

describe('questions as the CLI prints them', () => {
  it('give the question and the command that answers it, one line each', () => {
    expect(pendingQuestionLines('run-1', [question('q1', { options: ['EU', 'US'] })])).toEqual([
      'question q1 (lead, missing_info): "Which region?" [EU | US]',
      '  answer: subagents answer run-1 "<answer>" (closes unanswered at 2025-01-01T01:00:00.000Z)',
    ]);
  });

  it('carry the flags another terminal needs to reach a server only the following command knows', () => {
    expect(pendingQuestionLines('run-1', [question('q1')], '--address 127.0.0.1:7233')).toEqual([
      'question q1 (lead, missing_info): "Which region?"',
      '  answer: subagents answer run-1 "<answer>" --address 127.0.0.1:7233 (closes unanswered at 2025-01-01T01:00:00.000Z)',
    ]);
  });

  it("name the question when it is a subagent's or one of several", () => {
    const lines = pendingQuestionLines('run-1', [
      question('q1'),
      question('call_1/q1', { asked_by: 'painter', question: 'Which\ncolour?\x1b[2J' }),
    ]);
    expect(lines).toEqual([
      'question q1 (lead, missing_info): "Which region?"',
      '  answer: subagents answer run-1 "<answer>" --question q1 (closes unanswered at 2025-01-01T01:00:00.000Z)',
      'question call_1/q1 (painter, missing_info): "Which colour?[2J"',
      '  answer: subagents answer run-1 "<answer>" --question call_1/q1 (closes unanswered at 2025-01-01T01:00:00.000Z)',
    ]);
  });

  it('show in status while the run waits', () => {
    const status = {
      state: 'running' as const,
      turns: 1,
      token_usage: {},
      counts: {
        queued: 0,
        in_progress: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
        timed_out: 0,
        polling_timed_out: 0,
      },
      last_seq: 1,
      questions: [question('q1')],
    };
    expect(openStatusLines('run-1', status)).toEqual([
      'run-1: running, 1 lead turn; delegations: none',
      'question q1 (lead, missing_info): "Which region?"',
      '  answer: subagents answer run-1 "<answer>" (closes unanswered at 2025-01-01T01:00:00.000Z)',
    ]);
  });

  it('are drawn under the live tree, and their events carry no progress', () => {
    const snapshot: TreeSnapshot = {
      run_id: 'run-1',
      lead: { state: 'running', turns: 1, started_at_ms: 0 },
      ledger: [],
      progress: {},
      questions: [question('q1')],
    };
    expect(renderTree(snapshot, { now: 1000, color: false }).slice(2)).toEqual(
      pendingQuestionLines('run-1', [question('q1')]),
    );
    const events: TaskEvent[] = [
      {
        seq: 1,
        type: 'clarification_requested',
        task_id: 'q1',
        at: '2025-01-01T00:00:05.000Z',
        question_id: 'q1',
        asked_by: 'lead',
        workflow_id: 'run-1',
        question: 'Which region?',
        clarification_type: 'missing_info',
        timeout_seconds: 60,
      },
      {
        seq: 2,
        type: 'clarification_answered',
        task_id: 'q1',
        at: '2025-01-01T00:00:09.000Z',
        question_id: 'q1',
        answer: 'EU',
        by: 'ana@desk',
      },
      {
        seq: 3,
        type: 'clarification_timed_out',
        task_id: 'q2',
        at: '2025-01-01T00:01:09.000Z',
        question_id: 'q2',
        timeout_seconds: 60,
      },
    ];
    expect(foldTaskProgress({}, events)).toEqual({});
    expect(events.map((event) => eventLine(event))).toEqual([
      '00:00:05 q1 (lead, missing_info): "Which region?" waits for an answer (60 s)',
      '00:00:09 q1 answered by ana@desk: "EU"',
      '00:01:09 q2 timed out: no answer within 60 s',
    ]);
  });
});
