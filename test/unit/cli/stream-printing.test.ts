import type { StreamEvent, StreamEventKind } from '../../../contracts/stream';
import type { TaskEvent } from '../../../contracts/events';
import { StreamTexts } from '../../../client/stream-text';
import { AgentTextPrinter, TreeTextPrinter } from '../../../cli/stream-printing';
import { watchedAgentPath } from '../../../cli/watch-command';

const event = (kind: StreamEventKind, path: string, fields: Partial<StreamEvent> = {}): StreamEvent => ({
  kind,
  run_id: 'run-1',
  path,
  workflow_id: path === '' ? 'run-1' : `run-1/task/${path}`,
  at: '2025-01-01T00:00:00.000Z',
  ...fields,
});
const text = (path: string, piece: string, attempt = 1) => event('text', path, { text: piece, attempt });

/** A subagent's turn 1 streamed by attempt 1, killed, then retried whole by attempt 2. */
const killedTurn: StreamEvent[] = [
  event('turn_started', 'p', { turn: 0 }),
  text('p', 'Looking first. '),
  event('turn_ended', 'p', { turn: 0, text: 'Looking first. ' }),
  event('turn_started', 'p', { turn: 1 }),
  text('p', 'The answer '),
  text('p', 'is'),
  event('interrupted', 'p', { turn: 1, attempt: 2 }),
  text('p', 'The answer ', 2),
  text('p', 'is 42.', 2),
  event('turn_ended', 'p', { turn: 1, attempt: 2, text: 'The answer is 42.' }),
];

describe('StreamTexts', () => {
  it("drops a turn's pieces when a retry supersedes them: each turn once", () => {
    const texts = new StreamTexts();
    for (const e of killedTurn) texts.add(e);
    expect(texts.text('p')).toBe('Looking first. The answer is 42.');
    expect(texts.newestLine('p')).toBe('Looking first. The answer is 42.');
    expect(texts.text('other')).toBe('');
  });

  it('keeps an ended turn whole when the retry comes with no turn_started before it', () => {
    const texts = new StreamTexts();
    // Attempt 1 of turn 1 was killed before it wrote anything: only the retry's edge is on the stream.
    for (const e of [
      event('turn_started', '', { turn: 0 }),
      text('', 'Turn zero.\n'),
      event('turn_ended', '', { turn: 0 }),
      event('interrupted', '', { turn: 1, attempt: 2 }),
      text('', 'Turn one.', 2),
    ])
      texts.add(e);
    expect(texts.text('')).toBe('Turn zero.\nTurn one.');
    expect(texts.newestLine('')).toBe('Turn one.');
  });
});

describe('AgentTextPrinter (watch --tokens)', () => {
  it("prints one agent's pieces, marks the retry, and ends with the task's end", () => {
    let out = '';
    const printer = new AgentTextPrinter('p', (piece) => (out += piece));
    const done: TaskEvent = {
      type: 'task_completed',
      task_id: 'p',
      seq: 3,
      at: '2025-01-01T00:00:01.000Z',
      status: 'completed',
      turns: 2,
    } as TaskEvent;
    const events = [...killedTurn, text('q', 'another agent'), event('task_event', '', { event: done })];
    expect(events.map((e) => printer.add(e))).toEqual([...events.map(() => false).slice(1), true]);
    expect(out).toBe(
      'Looking first. \nThe answer is\n' +
        '[interrupted: the model call is retried (attempt 2); its text starts over]\n' +
        'The answer is 42.\np completed\n',
    );
    expect(printer.ended).toBe('completed');
    expect(printer.add(event('run_ended', '', { status: 'failed' }))).toBe(true);
  });

  it("waits for a completed subagent's answer when its task's end comes first", () => {
    let out = '';
    const printer = new AgentTextPrinter('p', (piece) => (out += piece));
    const done = { type: 'task_completed', task_id: 'p', status: 'completed' } as TaskEvent;
    expect(printer.add(event('turn_started', 'p', { turn: 0 }))).toBe(false);
    expect(printer.add(event('task_event', '', { event: done }))).toBe(false);
    expect(printer.add(text('p', 'Done.'))).toBe(false);
    expect(printer.add(event('turn_ended', 'p', { turn: 0, tool_calls: [] }))).toBe(true);
    expect(out).toBe('Done.\np completed\n');
  });

  it("ends the lead's with the run's end", () => {
    let out = '';
    const printer = new AgentTextPrinter('', (piece) => (out += piece));
    printer.add(text('', 'Half'));
    expect(printer.add(event('run_ended', '', { status: 'completed', stop_reason: 'turn_capped' }))).toBe(
      true,
    );
    expect(out).toBe('Half\nrun completed (turn_capped)\n');
  });
});

describe('TreeTextPrinter (run --stream)', () => {
  it("prints the lead's text bare and each subagent's lines behind its path, a new line when the speaker changes", () => {
    let out = '';
    const printer = new TreeTextPrinter((piece) => (out += piece), 'run-1');
    for (const e of [
      text('', 'Delegating. '),
      text('a', 'Part a '),
      text('b/c', 'Nested\nsecond line\n'),
      text('a', 'done.'),
      event('turn_ended', 'a'),
      event('interrupted', 'b/c', { attempt: 2 }),
      text('', 'All done.'),
    ])
      printer.add(e);
    printer.finish();
    expect(out).toBe(
      'Delegating. \n[b/c] Nested\n[b/c] second line\n[a] Part a done.\n' +
        '[b/c] [interrupted: the model call is retried (attempt 2); its text starts over]\nAll done.\n',
    );
  });

  it("never mixes two subagents' pieces in a line; a long line goes out at a word's end; a retry drops the unprinted piece", () => {
    let out = '';
    const printer = new TreeTextPrinter((piece) => (out += piece), 'run-1');
    const long = `${'word '.repeat(30)}tail`;
    for (const e of [
      text('a', 'Counting '),
      text('b', 'Reading '),
      text('a', 'with grep.\nnorth: 2'),
      text('b', 'half'),
      event('interrupted', 'b', { attempt: 2 }),
      text('b', 'the list.', 2),
      text('c', long),
      event('turn_ended', 'a'),
    ])
      printer.add(e);
    printer.finish();
    expect(out.split('\n')).toEqual([
      '[a] Counting with grep.',
      '[b] [interrupted: the model call is retried (attempt 2); its text starts over]',
      `[c] ${'word '.repeat(29)}word`,
      '[a] north: 2',
      '[b] the list.',
      '[c] tail',
      '',
    ]);
  });
});

describe('watch --agent', () => {
  it('takes a delegation path or a subagent id of the run', () => {
    expect(watchedAgentPath('run-1', undefined)).toBe('');
    expect(watchedAgentPath('run-1', 'part0/call_7')).toBe('part0/call_7');
    expect(watchedAgentPath('run-1', 'run-1/task/part0/task/call_7')).toBe('part0/call_7');
    expect(() => watchedAgentPath('run-1', 'run-2/task/part0')).toThrow(/not an agent of run run-1/);
  });
});
