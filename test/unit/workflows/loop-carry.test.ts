import { initialLoopState, loopCarry, restoreLoopState } from '../../../workflows/agent-loop';

describe('the loop state across continue-as-new', () => {
  const transcript = { tail: [{ role: 'user' as const, content: 'Do it.' }] };

  it('starts a task run with nothing promoted', () => {
    expect(initialLoopState(transcript, 0)).not.toHaveProperty('promoted_tools');
  });

  it("carries tool_search's promotions to the next execution", () => {
    const state = { ...initialLoopState(transcript, 0), promoted_tools: ['github__create_issue'] };
    const carry = loopCarry(state, 1);
    expect(carry.promoted_tools).toEqual(['github__create_issue']);
    expect(restoreLoopState(JSON.parse(JSON.stringify(carry)) as typeof carry).promoted_tools).toEqual([
      'github__create_issue',
    ]);
  });
});
