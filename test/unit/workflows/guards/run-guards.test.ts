import { initialGuardStates, runGuards, type Guard, type GuardVerdict } from '../../../../workflows/guards';
import { call, guardInput, seedGuards } from './fixtures';

const DEFAULT_GUARDS = seedGuards(10);

function fixedGuard(name: string, verdict: GuardVerdict): Guard<number> {
  return {
    name,
    initial: () => 0,
    check: (calls) => ({ state: calls + 1, verdict }),
  };
}

describe('runGuards', () => {
  it('lets the first guard in list order that stops decide the stop reason', () => {
    const guards = [
      fixedGuard('quiet', {}),
      fixedGuard('loop', { stop: 'loop_capped' }),
      fixedGuard('turns', { stop: 'turn_capped' }),
    ];
    expect(runGuards(guards, initialGuardStates(guards), guardInput({})).stop).toBe('loop_capped');
    expect(runGuards([...guards].reverse(), initialGuardStates(guards), guardInput({})).stop).toBe(
      'turn_capped',
    );
  });

  it('asks every guard even after one stopped, and keeps each state under its name', () => {
    const guards = [fixedGuard('first', { stop: 'token_capped' }), fixedGuard('second', {})];
    const once = runGuards(guards, initialGuardStates(guards), guardInput({}));
    const twice = runGuards(guards, once.states, guardInput({}));
    expect(twice.states).toEqual({ first: 2, second: 2 });
  });

  it('collects notes in guard order', () => {
    const guards = [
      fixedGuard('a', { note: 'from a' }),
      fixedGuard('b', {}),
      fixedGuard('c', { note: 'from c' }),
    ];
    expect(runGuards(guards, {}, guardInput({}))).toEqual({
      states: { a: 1, b: 1, c: 1 },
      notes: ['from a', 'from c'],
      warnedBy: ['a', 'c'],
    });
  });

  it('starts a guard that has no state yet from its initial state', () => {
    const guards = [fixedGuard('old', {}), fixedGuard('added_later', {})];
    expect(runGuards(guards, { old: 7 }, guardInput({})).states).toEqual({ old: 8, added_later: 1 });
  });

  it('refuses two guards with the same name, which would share state', () => {
    const guards = [fixedGuard('same', {}), fixedGuard('same', {})];
    expect(() => runGuards(guards, {}, guardInput({}))).toThrow('guard name "same" is used twice');
  });
});

describe('defaultGuards', () => {
  it('orders token budget, loop detection, turns', () => {
    expect(DEFAULT_GUARDS.map((guard) => guard.name)).toEqual(['token_budget', 'loop_detection', 'turns']);
  });

  it('reports token_capped over turn_capped when both fire on the same response', () => {
    const input = guardInput({
      turn: 10,
      totalTokens: 2_000_000,
      toolCalls: [call('ls', '{"path":"."}')],
    });
    expect(runGuards(DEFAULT_GUARDS, initialGuardStates(DEFAULT_GUARDS), input).stop).toBe('token_capped');
  });

  it('keeps its states plain JSON, so they survive continue-as-new', () => {
    let states = initialGuardStates(DEFAULT_GUARDS);
    for (let turn = 1; turn <= 4; turn++) {
      const input = guardInput({
        turn,
        totalTokens: turn * 400_000,
        toolCalls: [call('bash', '{"command":"make"}')],
      });
      states = runGuards(DEFAULT_GUARDS, states, input).states;
      expect(JSON.parse(JSON.stringify(states))).toEqual(states);
    }
    const input = guardInput({
      turn: 5,
      totalTokens: 1_900_000,
      toolCalls: [call('bash', '{"command":"make"}')],
    });
    const carried = runGuards(DEFAULT_GUARDS, JSON.parse(JSON.stringify(states)), input);
    const direct = runGuards(DEFAULT_GUARDS, states, input);
    expect(carried).toEqual(direct);
    expect(carried.stop).toBe('loop_capped');
  });
});
