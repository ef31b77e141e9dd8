/**
 * A `matches:` criterion is checked at start by the engine that runs it (RE2): a pattern RE2 refuses is refused
 * with RE2's message before anything starts, and one RE2 takes is not refused for JavaScript's sake. The old
 * check (JavaScript's RegExp) stays only for workflow code replaying a history it decided.
 */
import { batchItemsProblems, parseBatchItemsJsonl } from '../../../contracts/batch-items';

const item = (...criteria: string[]) => ({ key: 'a', prompt: 'p', acceptance_criteria: criteria });

describe('matches: checked on RE2', () => {
  it('refuses lookaround and backreferences with RE2 message, naming the criterion', () => {
    const problems = batchItemsProblems([item('matches: x(?=y)', 'matches: (\\w)\\1', 'matches: ^ok')]);
    expect(problems).toEqual([
      expect.stringMatching(
        /^items\[0\]\.acceptance_criteria\[0\]: "matches: x\(\?=y\)" is not a valid regular expression: error parsing regexp: invalid or unsupported Perl syntax: `\(\?=` \(patterns run on a linear-time engine/,
      ),
      expect.stringMatching(
        /^items\[0\]\.acceptance_criteria\[1\]: .* invalid escape sequence: `\\1` \(patterns run on a linear-time engine/,
      ),
    ]);
  });

  it("accepts RE2's own syntax that JavaScript's RegExp refuses", () => {
    expect(batchItemsProblems([item('matches: (?i)done', 'matches: (?P<n>\\d+)')])).toEqual([]);
  });

  it('checks an items file the same way', () => {
    const { problems } = parseBatchItemsJsonl(JSON.stringify(item('matches: a(?!b)')), 'items.jsonl');
    expect(problems).toEqual([expect.stringMatching(/^items\.jsonl:1: acceptance_criteria\[0\]: .*`\(\?!`/)]);
  });

  it('keeps the JavaScript RegExp check for replaying what it decided', () => {
    expect(batchItemsProblems([item('matches: x(?=y)')], 'javascript-regexp')).toEqual([]);
    expect(batchItemsProblems([item('matches: (?P<n>x)')], 'javascript-regexp')).toEqual([
      expect.stringMatching(
        /^items\[0\]\.acceptance_criteria\[0\]: .* is not a valid regular expression: Invalid/,
      ),
    ]);
  });
});
