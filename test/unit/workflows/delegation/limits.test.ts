import type { AssistantMessage, ToolCall } from '../../../../contracts/messages';
import {
  applyDelegationLimits,
  delegationDepthAllows,
  SUBAGENT_LIMIT_NOTE,
} from '../../../../workflows/delegation/limits';

function task(id: string): ToolCall {
  return { id, name: 'task', args: `{"description":"d","prompt":"p","subagent_type":"bash"}` };
}

function tool(id: string, name = 'read_file'): ToolCall {
  return { id, name, args: '{"path":"a.txt"}' };
}

function response(content: string, calls: ToolCall[]): AssistantMessage {
  return { role: 'assistant', content, tool_calls: calls };
}

const ids = (message: AssistantMessage) => (message.tool_calls ?? []).map((call) => call.id);

describe('applyDelegationLimits', () => {
  it('keeps the first max_concurrent task calls of a response and logs the rest as dropped', () => {
    const calls = ['t1', 't2', 't3', 't4', 't5'].map(task);
    const out = applyDelegationLimits(response('Splitting the work.', calls), {
      maxConcurrent: 3,
      maxTotalPerRun: 6,
      usedThisRun: 0,
    });
    expect(ids(out.message)).toEqual(['t1', 't2', 't3']);
    expect(out.message.content).toBe('Splitting the work.');
    expect(out.dropped.map((call) => call.id)).toEqual(['t4', 't5']);
    expect(out.capped).toBe(false);
    expect(out.log).toEqual([
      'dropped 2 task calls of 5 beyond the per-response limit (max_concurrent = 3): t4, t5',
    ]);
  });

  it('leaves a response within the limits as it is', () => {
    const message = response('', [task('t1'), tool('r1'), task('t2')]);
    const out = applyDelegationLimits(message, { maxConcurrent: 3, maxTotalPerRun: 6, usedThisRun: 4 });
    expect(out).toEqual({ message, dropped: [], capped: false, log: [] });
  });

  it('never touches other tool calls, nor their order', () => {
    const message = response('', [tool('r1'), task('t1'), tool('b1', 'bash'), task('t2'), task('t3')]);
    const out = applyDelegationLimits(message, { maxConcurrent: 1, maxTotalPerRun: 6, usedThisRun: 0 });
    expect(ids(out.message)).toEqual(['r1', 't1', 'b1']);
    expect(out.dropped.map((call) => call.id)).toEqual(['t2', 't3']);
  });

  it('trims a response that crosses the per-run total, with only a log line', () => {
    const message = response('Two more.', [task('t1'), task('t2'), task('t3')]);
    const out = applyDelegationLimits(message, { maxConcurrent: 3, maxTotalPerRun: 6, usedThisRun: 5 });
    expect(ids(out.message)).toEqual(['t1']);
    expect(out.message.content).toBe('Two more.');
    expect(out.dropped.map((call) => call.id)).toEqual(['t2', 't3']);
    expect(out.capped).toBe(false);
    expect(out.log).toEqual([
      'dropped 2 task calls beyond the per-run total (max_total_per_run = 6, 5 used before this response): t2, t3',
    ]);
  });

  it('logs each gate that dropped calls when both do', () => {
    const calls = ['t1', 't2', 't3', 't4'].map(task);
    const out = applyDelegationLimits(response('', calls), {
      maxConcurrent: 3,
      maxTotalPerRun: 6,
      usedThisRun: 4,
    });
    expect(ids(out.message)).toEqual(['t1', 't2']);
    expect(out.dropped.map((call) => call.id)).toEqual(['t3', 't4']);
    expect(out.log).toHaveLength(2);
    expect(out.log[0]).toContain('max_concurrent = 3');
    expect(out.log[1]).toContain('max_total_per_run = 6');
  });

  it('removes every task call once the total was already spent, appends the note and stops the run', () => {
    const message = response('I will delegate two more.', [task('t1'), tool('r1'), task('t2')]);
    const out = applyDelegationLimits(message, { maxConcurrent: 3, maxTotalPerRun: 6, usedThisRun: 6 });
    expect(out.message).toEqual({
      role: 'assistant',
      content:
        'I will delegate two more.\n\n[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has ' +
        'been reached. Continue using the subagent results already collected, execute remaining simple work ' +
        'directly, or summarize the remaining work instead of launching more subagents.',
      tool_calls: [tool('r1')],
    });
    expect(out.dropped.map((call) => call.id)).toEqual(['t1', 't2']);
    expect(out.capped).toBe(true);
    expect(out.log).toHaveLength(1);
  });

  it('puts the note alone in an empty message, with no tool_calls left', () => {
    const out = applyDelegationLimits(response('', [task('t1')]), {
      maxConcurrent: 3,
      maxTotalPerRun: 2,
      usedThisRun: 3,
    });
    expect(out.message).toEqual({ role: 'assistant', content: SUBAGENT_LIMIT_NOTE });
    expect(out.capped).toBe(true);
  });

  it('does not stop a run that asks for no delegation after the total is spent', () => {
    const message = response('Summarising.', [tool('r1')]);
    expect(applyDelegationLimits(message, { maxConcurrent: 3, maxTotalPerRun: 6, usedThisRun: 6 })).toEqual({
      message,
      dropped: [],
      capped: false,
      log: [],
    });
  });
});

describe('delegationDepthAllows', () => {
  it('lets a lead delegate while its child stays within max_depth', () => {
    expect(delegationDepthAllows(0, 1)).toBe(true);
    expect(delegationDepthAllows(1, 1)).toBe(false);
    expect(delegationDepthAllows(1, 2)).toBe(true);
    expect(delegationDepthAllows(0, 0)).toBe(false);
  });
});
