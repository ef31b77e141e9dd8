import { turnGuard } from '../../../../workflows/guards';
import { call, guardInput } from './fixtures';

describe('turnGuard', () => {
  const read = [call('read_file', '{"path":"a.txt"}')];

  it('lets every turn before the last ask for tools', () => {
    for (let turn = 1; turn < 60; turn++) {
      expect(turnGuard(60).check(null, guardInput({ turn, toolCalls: read })).verdict).toEqual({});
    }
  });

  it('stops with turn_capped when the last allowed model call still asks for tools', () => {
    expect(turnGuard(60).check(null, guardInput({ turn: 60, toolCalls: read })).verdict).toEqual({
      stop: 'turn_capped',
    });
  });

  it('lets the last model call finish normally when it gives an answer', () => {
    const input = guardInput({ turn: 60, content: 'Done.' });
    expect(turnGuard(60).check(null, input).verdict).toEqual({});
  });

  it('caps a one-turn budget on its first tool-calling response', () => {
    expect(turnGuard(1).check(null, guardInput({ turn: 1, toolCalls: read })).verdict.stop).toBe(
      'turn_capped',
    );
  });
});
