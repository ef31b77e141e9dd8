/** What a call adds to an agent's cost and to the tree budget (workflows/budget/gate.ts), pure. */
import type { Spend } from '../../../contracts/budget';
import { countCall, countReported, type BudgetGate } from '../../../workflows/budget/gate';

function recordingGate(): { gate: BudgetGate; spent: Spend[] } {
  const spent: Spend[] = [];
  const gate: BudgetGate = {
    beforeCall: () => Promise.resolve(undefined),
    afterCall: (spend) => void spent.push(spend),
    takeWarning: () => undefined,
    close: () => Promise.resolve(),
  };
  return { gate, spent };
}

const usage = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  total_tokens: input + output,
});

describe('countCall', () => {
  it("adds a priced call's cost to the agent and its spend to the tree", () => {
    const { gate, spent } = recordingGate();
    const agent: { cost_usd?: number } = {};
    countCall(agent, gate, usage(400, 100), { input: 1000, output: 2000 });
    countCall(agent, gate, usage(400, 100), { input: 1000, output: 2000 });
    expect(agent.cost_usd).toBe(1.2);
    expect(spent.map((spend) => spend.cost_usd)).toEqual([0.6, 0.6]);
  });

  it('leaves an unpriced agent without a cost (not 0), its tokens still spent', () => {
    const { gate, spent } = recordingGate();
    const agent: { cost_usd?: number } = {};
    countCall(agent, gate, usage(400, 100), undefined);
    expect(agent).toEqual({});
    expect(spent).toEqual([{ input_tokens: 400, output_tokens: 100, total_tokens: 500, cost_usd: 0 }]);
  });
});

describe('countReported', () => {
  it('counts what is new in a running total, and nothing when it did not grow', () => {
    const { gate, spent } = recordingGate();
    countReported(gate, undefined, usage(40, 10));
    countReported(gate, usage(40, 10), usage(100, 30));
    countReported(gate, usage(100, 30), usage(100, 30));
    // A remote task started again reports a smaller total: nothing is taken back, nothing added.
    countReported(gate, usage(100, 30), usage(10, 5));
    countReported(gate, usage(10, 5), undefined);
    expect(spent.map((spend) => spend.total_tokens)).toEqual([50, 80]);
    expect(spent[1]).toMatchObject({ input_tokens: 60, output_tokens: 20 });
  });
});
