import type { ChatMessage } from '../../../contracts/messages';
import { forkMessages } from '../../../contracts/fork';

const SYSTEM: ChatMessage = { role: 'system', content: 'You are the lead.' };
const USER: ChatMessage = { role: 'user', content: 'Fix the failing test.' };

function call(id: string, name = 'read_file') {
  return { id, name, args: '{}' };
}

function answer(id: string, name = 'read_file'): ChatMessage {
  return { role: 'tool', tool_call_id: id, name, content: `result of ${id}` };
}

describe('forkMessages', () => {
  it('keeps the completed turns and drops the system message', () => {
    const reading: ChatMessage = {
      role: 'assistant',
      content: 'Reading.',
      tool_calls: [call('r1'), call('r2')],
    };
    const transcript: ChatMessage[] = [SYSTEM, USER, reading, answer('r1'), answer('r2')];
    expect(forkMessages(transcript)).toEqual([USER, reading, answer('r1'), answer('r2')]);
  });

  it('drops the in-flight turn that issued the task call, and everything after it', () => {
    const done: ChatMessage = { role: 'assistant', content: 'Reading.', tool_calls: [call('r1')] };
    const delegating: ChatMessage = {
      role: 'assistant',
      content: 'Delegating.',
      tool_calls: [call('r2'), call('t1', 'task')],
    };
    const transcript: ChatMessage[] = [
      SYSTEM,
      USER,
      done,
      answer('r1'),
      delegating,
      // The read_file call already answered; the task call (this fork) is not.
      answer('r2'),
      { role: 'user', content: 'A budget note.' },
    ];
    expect(forkMessages(transcript)).toEqual([USER, done, answer('r1')]);
  });

  it('keeps a plain answer and later user turns', () => {
    const transcript: ChatMessage[] = [
      SYSTEM,
      USER,
      { role: 'assistant', content: 'Which test?' },
      { role: 'user', content: 'The parser test.' },
    ];
    expect(forkMessages(transcript)).toEqual(transcript.slice(1));
  });

  it('leaves out a tool result whose call it never saw, and a duplicate result', () => {
    const turn: ChatMessage = { role: 'assistant', content: '', tool_calls: [call('r1')] };
    const transcript: ChatMessage[] = [
      USER,
      answer('stray'),
      turn,
      answer('r1'),
      answer('r1'),
      answer('other'),
    ];
    expect(forkMessages(transcript)).toEqual([USER, turn, answer('r1')]);
  });

  it('returns nothing to fork from an empty transcript', () => {
    expect(forkMessages([])).toEqual([]);
    expect(forkMessages([SYSTEM])).toEqual([]);
  });
});
