import type { NewTaskEvent, TaskEvent } from '../../../../contracts/events';
import type { SubagentResult } from '../../../../contracts/subagent';
import { appendEvent, terminalEvent, terminalEventFor } from '../../../../workflows/delegation/events';

const AT = '2025-01-01T00:00:00.000Z';

function started(taskId: string): NewTaskEvent {
  return {
    type: 'task_started',
    task_id: taskId,
    at: AT,
    description: 'Survey the loader',
    subagent_type: 'general-purpose',
    model_name: 'gpt-4o-mini',
    workflow_id: `run/task/${taskId}`,
  };
}

function result(fields: Partial<SubagentResult> & Pick<SubagentResult, 'status'>): SubagentResult {
  return { turns: 4, ...fields };
}

describe('appendEvent', () => {
  it('numbers events from 1 in the order they are appended', () => {
    let log: TaskEvent[] = [];
    log = appendEvent(log, started('a'));
    log = appendEvent(log, { type: 'task_running', task_id: 'a', at: AT, turns: 1 });
    log = appendEvent(log, started('b'));
    expect(log.map((event) => [event.seq, event.type, event.task_id])).toEqual([
      [1, 'task_started', 'a'],
      [2, 'task_running', 'a'],
      [3, 'task_started', 'b'],
    ]);
    expect(log[0]).toEqual({ ...started('a'), seq: 1 });
  });

  it('leaves the log it was given untouched', () => {
    const log = appendEvent([], started('a'));
    appendEvent(log, started('b'));
    expect(log).toHaveLength(1);
  });
});

describe('terminal events', () => {
  it('maps each status to its event, a polling timeout to task_timed_out', () => {
    expect(terminalEventFor(result({ status: 'completed' }))).toBe('task_completed');
    expect(terminalEventFor(result({ status: 'failed' }))).toBe('task_failed');
    expect(terminalEventFor(result({ status: 'cancelled' }))).toBe('task_cancelled');
    expect(terminalEventFor(result({ status: 'timed_out' }))).toBe('task_timed_out');
    expect(terminalEventFor(result({ status: 'polling_timed_out' }))).toBe('task_timed_out');
  });

  it('carries the result’s structured fields, not the full result text', () => {
    const usage = { input_tokens: 5, output_tokens: 1, total_tokens: 6 };
    const event = terminalEvent(
      'a',
      result({
        status: 'completed',
        stop_reason: 'loop_capped',
        result: 'The full text.',
        result_brief: 'The brief.',
        model_name: 'm',
        token_usage: usage,
      }),
      AT,
    );
    expect(event).toEqual({
      type: 'task_completed',
      task_id: 'a',
      at: AT,
      status: 'completed',
      stop_reason: 'loop_capped',
      result_brief: 'The brief.',
      model_name: 'm',
      token_usage: usage,
      turns: 4,
    });
  });

  it('keeps the child’s own status on a polling timeout, and leaves absent fields out', () => {
    const event = terminalEvent('a', result({ status: 'polling_timed_out', error: 'no answer' }), AT);
    expect(event).toEqual({
      type: 'task_timed_out',
      task_id: 'a',
      at: AT,
      status: 'polling_timed_out',
      error: 'no answer',
      turns: 4,
    });
  });
});
