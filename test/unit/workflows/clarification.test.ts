import type { ToolCall, ToolMessage } from '../../../contracts/messages';
import { combineClaimedCalls } from '../../../workflows/claimed-calls';

const call = (id: string, name: string): ToolCall => ({ id, name, args: '{}' });

/** A plugin claiming one tool name; it answers each call with `<name>:<id>` and records what it was given. */
function plugin(name: string) {
  const given: string[][] = [];
  return {
    given,
    claimer: {
      claims: (c: ToolCall) => c.name === name,
      run: async (calls: ToolCall[]): Promise<ToolMessage[]> => {
        given.push(calls.map((c) => c.id));
        return calls.map((c) => ({
          role: 'tool',
          tool_call_id: c.id,
          name: c.name,
          content: `${name}:${c.id}`,
        }));
      },
    },
  };
}

describe('combineClaimedCalls', () => {
  it('is the one plugin itself when only one claims calls (a run runs as it did before)', () => {
    const task = plugin('task');
    expect(combineClaimedCalls(task.claimer, undefined)).toBe(task.claimer);
    expect(combineClaimedCalls(undefined, undefined)).toBeUndefined();
  });

  it('gives each plugin its own calls, and the results back in the calls’ order', async () => {
    const task = plugin('task');
    const asking = plugin('ask_clarification');
    const combined = combineClaimedCalls(task.claimer, asking.claimer)!;
    expect(combined.claims(call('x', 'ls'))).toBe(false);
    expect(combined.claims(call('x', 'ask_clarification'))).toBe(true);
    const calls = [
      call('a', 'task'),
      call('b', 'ask_clarification'),
      call('c', 'task'),
      call('d', 'ask_clarification'),
    ];
    const results = await combined.run(calls);
    expect(results.map((r) => r.content)).toEqual([
      'task:a',
      'ask_clarification:b',
      'task:c',
      'ask_clarification:d',
    ]);
    expect(task.given).toEqual([['a', 'c']]);
    expect(asking.given).toEqual([['b', 'd']]);
  });

  it('does not call a plugin that claims none of the calls', async () => {
    const task = plugin('task');
    const asking = plugin('ask_clarification');
    await combineClaimedCalls(task.claimer, asking.claimer)!.run([call('a', 'task')]);
    expect(asking.given).toEqual([]);
  });
});
