import type { ToolCall } from '../../../../contracts/messages';
import type { LoopDetectionSettings } from '../../../../contracts/subagent';
import { canonicalJson, loopGuard, toolCallSetSignature } from '../../../../workflows/guards';
import { call, drive, guardInput, LOOP_DETECTION } from './fixtures';

function turns(toolCallSets: ToolCall[][], loopDetection: Partial<LoopDetectionSettings> = {}) {
  return drive(
    loopGuard({ ...LOOP_DETECTION, ...loopDetection }),
    toolCallSets.map((toolCalls, i) => guardInput({ turn: i + 1, toolCalls })),
  );
}

const grepTodo = [call('bash', '{"command":"grep -r TODO ."}')];
const lsRoot = [call('ls', '{"path":"."}')];

describe('toolCallSetSignature', () => {
  it('ignores call order, key order, spacing and call ids', () => {
    const a = [call('read_file', '{"path":"a","limit":10}', 'x1'), call('ls', '{"path":"."}', 'x2')];
    const b = [call('ls', '{ "path": "." }', 'y1'), call('read_file', '{"limit":10,"path":"a"}', 'y2')];
    expect(toolCallSetSignature(a)).toBe(toolCallSetSignature(b));
  });

  it('tells apart different arguments, different tools and a repeated call', () => {
    const one = toolCallSetSignature([call('read_file', '{"path":"a"}')]);
    expect(toolCallSetSignature([call('read_file', '{"path":"b"}')])).not.toBe(one);
    expect(toolCallSetSignature([call('ls', '{"path":"a"}')])).not.toBe(one);
    expect(
      toolCallSetSignature([call('read_file', '{"path":"a"}'), call('read_file', '{"path":"a"}')]),
    ).not.toBe(one);
  });

  it('compares arguments that are not JSON as raw text', () => {
    expect(toolCallSetSignature([call('bash', 'ls -la')])).toBe(
      toolCallSetSignature([call('bash', 'ls -la')]),
    );
    expect(toolCallSetSignature([call('bash', 'ls -la')])).not.toBe(
      toolCallSetSignature([call('bash', 'ls  -la')]),
    );
  });

  it('canonicalises nested objects and keeps array order', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: null }], a: 'x' })).toBe('{"a":"x","b":[2,{"c":null,"d":1}]}');
  });
});

describe('loopGuard: repeated tool-call sets', () => {
  it('warns once at the warn threshold and stops with loop_capped at the hard limit', () => {
    const verdicts = turns([grepTodo, grepTodo, grepTodo, grepTodo, grepTodo]);
    expect(verdicts[0]).toEqual({});
    expect(verdicts[1]).toEqual({});
    expect(verdicts[2]).toEqual({
      note:
        '[LOOP WARNING] You have made this same set of tool calls 3 times in your last 3 tool-using turns. ' +
        'Repeating it will not give a different result: change your approach, or stop calling tools and give ' +
        'your final answer with what you have. At 5 repeats the run is stopped.',
    });
    expect(verdicts[3]).toEqual({});
    expect(verdicts[4]).toEqual({ stop: 'loop_capped' });
  });

  it('counts a set however its calls are ordered', () => {
    const ab = [call('ls', '{"path":"a"}'), call('ls', '{"path":"b"}')];
    const ba = [call('ls', '{"path":"b"}'), call('ls', '{"path":"a"}')];
    expect(turns([ab, ba, ab, ba, ab])[4]).toEqual({ stop: 'loop_capped' });
  });

  it('warns separately for each repeated set', () => {
    const verdicts = turns([grepTodo, grepTodo, grepTodo, lsRoot, lsRoot, lsRoot]);
    expect(verdicts.map((verdict) => verdict.note !== undefined)).toEqual([
      false,
      false,
      true,
      false,
      false,
      true,
    ]);
  });

  it('forgets repeats that left the window', () => {
    const other = (n: number) => [call('read_file', `{"path":"f${n}"}`)];
    // With a window of 3 turns the grep repeats every third turn, so it is never in the window twice.
    const spaced = [grepTodo, other(1), other(2), grepTodo, other(3), other(4), grepTodo, other(5), other(6)];
    expect(turns(spaced, { window_size: 3, warn_threshold: 2, hard_limit: 3 })).toEqual(
      spaced.map(() => ({})),
    );
    // The same sequence in a window of 20 catches it.
    const wide = turns(spaced, { window_size: 20, warn_threshold: 2, hard_limit: 3 });
    expect(wide[3].note).toContain('2 times in your last 4 tool-using turns');
    expect(wide[6]).toEqual({ stop: 'loop_capped' });
  });

  it('does not count turns without tool calls, in the count or in the window', () => {
    const verdicts = turns([grepTodo, [], grepTodo, [], grepTodo], { window_size: 3 });
    expect(verdicts[1]).toEqual({});
    expect(verdicts[4].note).toContain('3 times in your last 3 tool-using turns');
  });

  it('does nothing when disabled', () => {
    const verdicts = turns([grepTodo, grepTodo, grepTodo, grepTodo, grepTodo, grepTodo], { enabled: false });
    expect(verdicts).toEqual(verdicts.map(() => ({})));
  });
});

describe('loopGuard: calls of one tool name', () => {
  const bash = (n: number) => [call('bash', `{"command":"echo ${n}"}`)];
  const frequency = { tool_freq_warn: 3, tool_freq_hard_limit: 5 };

  it('warns once per tool at tool_freq_warn and stops at tool_freq_hard_limit, whatever the arguments', () => {
    const verdicts = turns([1, 2, 3, 4, 5].map(bash), frequency);
    expect(verdicts[1]).toEqual({});
    expect(verdicts[2]).toEqual({
      note:
        '[LOOP WARNING] You have called the tool "bash" 3 times in this run. Call it again only when the ' +
        'answer needs it; once you have enough, give your final answer. At 5 calls the run is stopped.',
    });
    expect(verdicts[3]).toEqual({});
    expect(verdicts[4]).toEqual({ stop: 'loop_capped' });
  });

  it('counts every call in a response, not just the turn', () => {
    const verdicts = turns(
      [
        [...bash(1), ...bash(2), ...bash(3)],
        [...bash(4), ...bash(5)],
      ],
      frequency,
    );
    expect(verdicts[0].note).toContain('"bash" 3 times');
    expect(verdicts[1]).toEqual({ stop: 'loop_capped' });
  });

  it('counts over the whole run, beyond the window', () => {
    expect(turns([1, 2, 3, 4, 5].map(bash), { ...frequency, window_size: 2 })[4]).toEqual({
      stop: 'loop_capped',
    });
  });

  it('applies tool_freq_overrides in place of both numbers for that tool only', () => {
    const settings = { ...frequency, tool_freq_overrides: { bash: { warn: 1, hard_limit: 2 } } };
    const bashVerdicts = turns([1, 2].map(bash), settings);
    expect(bashVerdicts[0].note).toContain('"bash" 1 time in this run. Call it again only when the answer');
    expect(bashVerdicts[0].note).toContain('At 2 calls the run is stopped.');
    expect(bashVerdicts[1]).toEqual({ stop: 'loop_capped' });

    const ls = (n: number) => [call('ls', `{"path":"d${n}"}`)];
    const lsVerdicts = turns([1, 2, 3, 4].map(ls), settings);
    expect(lsVerdicts.map((verdict) => verdict.note !== undefined)).toEqual([false, false, true, false]);
    expect(lsVerdicts.some((verdict) => verdict.stop !== undefined)).toBe(false);
  });

  it('an override can raise a limit above the default', () => {
    const settings = { ...frequency, tool_freq_overrides: { bash: { warn: 10, hard_limit: 20 } } };
    expect(turns([1, 2, 3, 4, 5, 6].map(bash), settings)).toEqual([{}, {}, {}, {}, {}, {}]);
  });

  it('counts tools named like object built-ins as ordinary names', () => {
    const odd = (name: string, n: number) => [call(name, `{"n":${n}}`)];
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const verdicts = turns(
        [1, 2, 3, 4, 5].map((n) => odd(name, n)),
        frequency,
      );
      expect(verdicts[2].note).toContain(`"${name}" 3 times`);
      expect(verdicts[4]).toEqual({ stop: 'loop_capped' });
    }
  });

  it('joins a repeated-set warning and a frequency warning from the same turn into one note', () => {
    const verdicts = turns([grepTodo, grepTodo, grepTodo], frequency);
    expect(verdicts[2].note).toMatch(
      /same set of tool calls 3 times[\s\S]*\n\n\[LOOP WARNING\] You have called/,
    );
  });
});
