/**
 * What an id names, from the workflow's type and search attributes: a subagent's fork is a run of its own
 * (its `LeadRunId` its own id, `ForkedFrom` the original), read as a subagent by `status` and `steps`.
 */
import { insteadLines, kindOf, kindText } from '../../../client/id-kinds';

describe('kindOf', () => {
  const original = 'run-1/task/part-b';

  it("takes a subagent workflow forked from a subagent for that subagent's fork, in either execution", () => {
    const fork = { kind: 'subagent_fork', id: 'run-2', forkedFrom: original };
    expect(kindOf('run-2', 'subagentWorkflow', 'run-2', original)).toEqual(fork);
    // Its first execution, reading the original's state before it continues as a subagent.
    expect(kindOf('run-2', 'forkSubagentWorkflow', 'run-2', original)).toEqual(fork);
    expect(kindText(fork as ReturnType<typeof kindOf>)).toBe(
      `a fork of subagent ${original}, a run of its own`,
    );
  });

  it("keeps a fork's own delegations, and a subagent workflow that is no fork, as they were", () => {
    expect(kindOf('run-2/task/x', 'subagentWorkflow', 'run-2', original)).toMatchObject({
      kind: 'subagent',
      leadId: 'run-2',
      taskId: 'x',
    });
    expect(kindOf('run-3', 'subagentWorkflow', 'run-3')).toMatchObject({ kind: 'other' });
    expect(kindOf('run-3', 'forkSubagentWorkflow')).toMatchObject({ kind: 'other' });
  });

  it('points a command that reads a lead run at what reads a fork', () => {
    const fork = kindOf('run-2', 'subagentWorkflow', 'run-2', original);
    expect(insteadLines('ledger', fork)).toEqual([
      'its status: subagents status run-2',
      'its steps: subagents steps run-2',
      `the subagent it was forked from: subagents status ${original}`,
    ]);
  });
});
