import { assignDelegationIds } from '../../../../workflows/delegation/delegation-ids';

describe('assignDelegationIds', () => {
  it("keeps the model's ids when they are plain and new", () => {
    expect(assignDelegationIds(['reorder', 'call_0', 'toolu_01A:b.c-d'], ['earlier'])).toEqual([
      'reorder',
      'call_0',
      'toolu_01A:b.c-d',
    ]);
  });

  it('gives a reused id (another turn, or the same response) a new one', () => {
    // A provider numbering calls per response: call_0 again at the second turn, and twice in one response.
    expect(assignDelegationIds(['call_0', 'call_0', 'call_1'], ['call_0'])).toEqual(['d2', 'd3', 'call_1']);
  });

  it('replaces ids too long or too strange to name a workflow, never colliding with a taken d<n>', () => {
    expect(assignDelegationIds(['x'.repeat(2000), 'a/b', ''], ['d3', 'd4'])).toEqual(['d5', 'd6', 'd7']);
  });

  it('is deterministic: the same ledger and calls give the same ids', () => {
    const calls = ['call_0', 'z'.repeat(70), 'call_0'];
    expect(assignDelegationIds(calls, ['call_0', 'd1'])).toEqual(
      assignDelegationIds(calls, ['call_0', 'd1']),
    );
  });
});
