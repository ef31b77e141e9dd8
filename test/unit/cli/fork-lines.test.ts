import { forkedFromLines, forkedSubagentLines, forkListLines } from '../../../cli/fork-lines';

it('says where a fork came from and what it reused, without billing it again', () => {
  expect(
    forkedFromLines({
      from_run_id: 'run-a',
      turn: 1,
      reused_delegations: 3,
      reused_usage: { input_tokens: 130, output_tokens: 35, total_tokens: 165 },
    }),
  ).toEqual([
    'forked from run-a at lead turn 1 (reused: 1 lead turn, 3 delegations, 165 tokens shown as reused, not billed again)',
  ]);
  expect(forkedFromLines(undefined)).toEqual([]);
});

it("lists a run's forks, a resume still reading its turn by id alone", () => {
  expect(forkListLines([{ run_id: 'run-b', turn: 2 }, { run_id: 'run-c' }])).toEqual([
    'forks: run-b (turn 2), run-c',
  ]);
  expect(forkListLines([])).toEqual([]);
});

it("prints a subagent's fork: how it ended, where it came from in its own turns, its answer", () => {
  expect(
    forkedSubagentLines({
      run_id: 'run-f',
      status: 'completed',
      turns: 2,
      result: 'Part a is done.',
      token_usage: { input_tokens: 20, output_tokens: 7, total_tokens: 27 },
      forked_from: {
        from_run_id: 'run-a/task/part-a',
        turn: 1,
        reused_delegations: 0,
        reused_usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
      },
    }),
  ).toEqual([
    'run-f: completed after 2 turns',
    'forked from run-a/task/part-a at turn 1 (reused: 1 turn, 15 tokens shown as reused, not billed again)',
    'tokens: 27 (its own calls)',
    '',
    'Part a is done.',
  ]);
});
