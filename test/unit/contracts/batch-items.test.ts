/**
 * Batch items and their acceptance criteria: a bad batch is refused with one line per problem, naming the item
 * (or the file and line), the field, the value and what is accepted; each criterion form is parsed, refused
 * when it cannot be checked, and decided on the answer.
 */
import {
  answerVerdict,
  batchItemsProblems,
  MAX_ACCEPTANCE_CRITERIA,
  MAX_CRITERION_CHARS,
  MAX_ITEM_KEY_CHARS,
  needsWorkspace,
  parseBatchItemsJsonl,
  parseCriterion,
  type Criterion,
} from '../../../contracts/batch-items';

const FORMS =
  'contains: <text>, not_contains: <text>, matches: <regex>, file_exists: <path>, file_contains: <path> :: <text>';

const RE2_LIMITS =
  '(patterns run on a linear-time engine (RE2 syntax): no backreferences, no lookaround, [\\s\\S] for any character)';

/** A criterion that must parse. */
function criterion(text: string): Criterion {
  const parsed = parseCriterion(text);
  if ('problem' in parsed) throw new Error(`expected ${JSON.stringify(text)} to parse: ${parsed.problem}`);
  return parsed;
}

describe('batchItemsProblems', () => {
  it('accepts valid items, with and without criteria', () => {
    expect(
      batchItemsProblems([
        { key: 'a', prompt: 'Do a.' },
        { key: 'B.2_x-y', prompt: 'Do b.', acceptance_criteria: ['contains: done', 'file_exists: out.txt'] },
        { key: 'k'.repeat(MAX_ITEM_KEY_CHARS), prompt: 'p', acceptance_criteria: [] },
      ]),
    ).toEqual([]);
  });

  it('refuses what is not a non-empty list', () => {
    expect(batchItemsProblems(undefined)).toEqual([
      'items: is missing (a list of batch items: key, prompt, acceptance_criteria)',
    ]);
    expect(batchItemsProblems({ key: 'a' })).toEqual(['items: a mapping is not a list of batch items']);
    expect(batchItemsProblems('a')).toEqual(['items: "a" is not a list of batch items']);
    expect(batchItemsProblems([])).toEqual([
      'items: is an empty list (give at least one item, e.g. {"key": "a", "prompt": "…"})',
    ]);
  });

  it('names every problem of every item, one a line', () => {
    expect(
      batchItemsProblems([
        'just a prompt',
        null,
        ['a'],
        { prompt: 'p' },
        { key: '', prompt: '' },
        { key: 7, prompt: 3 },
        { key: 'a b/c', prompt: '   ' },
        { key: 'x'.repeat(MAX_ITEM_KEY_CHARS + 1), prompt: 'p' },
        { key: '..', prompt: 'p', acceptance_critera: ['contains: x'] },
      ]),
    ).toEqual([
      'items[0]: "just a prompt" is not a mapping (an item: key, prompt and optionally acceptance_criteria)',
      'items[1]: null is not a mapping (an item: key, prompt and optionally acceptance_criteria)',
      'items[2]: a list is not a mapping (an item: key, prompt and optionally acceptance_criteria)',
      'items[3].key: is missing (1–64 ASCII letters, digits, ".", "_" and "-")',
      'items[4].key: "" is empty (write some text)',
      'items[4].prompt: "" is empty (write some text)',
      'items[5].key: 7 is not text (1–64 ASCII letters, digits, ".", "_" and "-")',
      "items[5].prompt: 3 is not text (the task for the item's subagent)",
      `items[6].key: "a b/c" has characters other than ASCII letters, digits, ".", "_" and "-" (" ", "/"; the key becomes part of the item's workflow id)`,
      'items[6].prompt: "   " is empty (write some text)',
      `items[7].key: "${'x'.repeat(57)}..." is 65 characters long (at most 64: the key becomes part of the item's workflow id)`,
      'items[8].key: ".." is not a key (write a name, e.g. item-1)',
      'items[8].acceptance_critera: unknown key (accepted: key, prompt, acceptance_criteria)',
    ]);
  });

  it('names every duplicated key once, with how often it is given, in one line', () => {
    const items = ['a', 'b', 'a', 'c', 'b', 'b'].map((key) => ({ key, prompt: `Do ${key}.` }));
    expect(batchItemsProblems(items)).toEqual([
      'items: duplicate keys: "a" ×2, "b" ×3 (each key must be unique)',
    ]);
  });

  it('refuses bad acceptance criteria, naming the item and the criterion', () => {
    const tooMany = Array.from({ length: MAX_ACCEPTANCE_CRITERIA + 1 }, (_, i) => `contains: ${i}`);
    const long = `contains: ${'y'.repeat(MAX_CRITERION_CHARS)}`;
    expect(
      batchItemsProblems([
        { key: 'a', prompt: 'p', acceptance_criteria: 'contains: x' },
        { key: 'b', prompt: 'p', acceptance_criteria: tooMany },
        { key: 'c', prompt: 'p', acceptance_criteria: [5, long, 'the tests pass', 'matches: (a'] },
        {
          key: 'd',
          prompt: 'p',
          acceptance_criteria: ['file_exists: /etc/passwd', 'file_contains: ../x :: y'],
        },
      ]),
    ).toEqual([
      'items[0].acceptance_criteria: "contains: x" is not a list of criteria (e.g. ["contains: done"])',
      'items[1].acceptance_criteria: a list of 21 criteria is too long (at most 20)',
      'items[2].acceptance_criteria[0]: 5 is not text (a criterion, e.g. "contains: done")',
      `items[2].acceptance_criteria[1]: "contains: ${'y'.repeat(47)}..." is 510 characters long (at most 500)`,
      `items[2].acceptance_criteria[2]: "the tests pass" is not a criterion this checks (write one of: ${FORMS})`,
      'items[2].acceptance_criteria[3]: "matches: (a" is not a valid regular expression: error parsing regexp: ' +
        `missing closing ): \`(a\` ${RE2_LIMITS}`,
      'items[3].acceptance_criteria[0]: "file_exists: /etc/passwd" names an absolute path (write a path relative to the workspace, e.g. out/report.md)',
      'items[3].acceptance_criteria[1]: "file_contains: ../x :: y" has ".." in its path (write a path inside the workspace, e.g. out/report.md)',
    ]);
  });
});

describe('parseCriterion', () => {
  it('reads each form, keeping the criterion as written and its argument without surrounding spaces', () => {
    expect(parseCriterion('  contains:  All 3 tests passed ')).toEqual({
      form: 'contains',
      written: '  contains:  All 3 tests passed ',
      text: 'All 3 tests passed',
    });
    expect(parseCriterion('not_contains: TODO')).toEqual({
      form: 'not_contains',
      written: 'not_contains: TODO',
      text: 'TODO',
    });
    expect(parseCriterion('matches: ^Result: \\d+$')).toEqual({
      form: 'matches',
      written: 'matches: ^Result: \\d+$',
      pattern: '^Result: \\d+$',
    });
    expect(parseCriterion('file_exists: ./out/report.md')).toEqual({
      form: 'file_exists',
      written: 'file_exists: ./out/report.md',
      path: './out/report.md',
    });
    expect(parseCriterion('file_contains: out/report.md :: total :: 42')).toEqual({
      form: 'file_contains',
      written: 'file_contains: out/report.md :: total :: 42',
      path: 'out/report.md',
      text: 'total :: 42',
    });
  });

  it('refuses what it cannot check, saying what is accepted', () => {
    const problems = [
      'Contains: x',
      'contains:',
      'matches: [',
      'file_exists: ..',
      'file_exists: a/../../b',
      'file_exists: a/../b',
      'file_exists: ./',
      'file_contains: report.md',
      'file_contains: :: text',
      'file_contains: report.md ::',
      'file_contains: /tmp/x :: y',
    ].map((text) => parseCriterion(text));
    expect(problems).toEqual([
      { problem: `"Contains: x" is not a criterion this checks (write one of: ${FORMS})` },
      { problem: '"contains:" has nothing after "contains:" (contains: <text>)' },
      {
        problem: `"matches: [" is not a valid regular expression: error parsing regexp: missing closing ]: \`[\` ${RE2_LIMITS}`,
      },
      {
        problem:
          '"file_exists: .." has ".." in its path (write a path inside the workspace, e.g. out/report.md)',
      },
      {
        problem:
          '"file_exists: a/../../b" has ".." in its path (write a path inside the workspace, e.g. out/report.md)',
      },
      {
        problem:
          '"file_exists: a/../b" has ".." in its path (write a path inside the workspace, e.g. out/report.md)',
      },
      { problem: '"file_exists: ./" names the workspace itself, not a file (e.g. out/report.md)' },
      {
        problem:
          '"file_contains: report.md" has no "::" between the path and the text (file_contains: <path> :: <text>)',
      },
      { problem: '"file_contains: :: text" has no path before "::" (file_contains: <path> :: <text>)' },
      { problem: '"file_contains: report.md ::" has no text after "::" (file_contains: <path> :: <text>)' },
      {
        problem:
          '"file_contains: /tmp/x :: y" names an absolute path (write a path relative to the workspace, e.g. out/report.md)',
      },
    ]);
  });

  it('takes a criterion of exactly the maximum length', () => {
    const text = `contains: ${'z'.repeat(MAX_CRITERION_CHARS - 'contains: '.length)}`;
    expect(text).toHaveLength(MAX_CRITERION_CHARS);
    expect(parseCriterion(text)).toMatchObject({ form: 'contains' });
  });
});

describe('answerVerdict', () => {
  const answer = 'Fixed the parser. All 3 tests passed.\nResult: 42';

  it('passes each answer form that holds', () => {
    const criteria = [
      'contains: All 3 tests passed',
      'not_contains: FAILED',
      'matches: \\bResult: \\d+$',
    ].map(criterion);
    expect(answerVerdict(criteria, answer)).toEqual({
      passed: true,
      checks: [
        { criterion: 'contains: All 3 tests passed', passed: true },
        { criterion: 'not_contains: FAILED', passed: true },
        { criterion: 'matches: \\bResult: \\d+$', passed: true },
      ],
    });
  });

  it('fails each answer form that does not hold, saying why', () => {
    const criteria = [
      'contains: all 3 tests passed',
      'not_contains: parser',
      'matches: ^Result: [a-z]+$',
    ].map(criterion);
    expect(answerVerdict(criteria, answer)).toEqual({
      passed: false,
      checks: [
        {
          criterion: 'contains: all 3 tests passed',
          passed: false,
          detail: 'the answer does not contain "all 3 tests passed"',
        },
        {
          criterion: 'not_contains: parser',
          passed: false,
          detail: 'the answer contains "parser" (at character 11)',
        },
        {
          criterion: 'matches: ^Result: [a-z]+$',
          passed: false,
          detail: 'the answer (48 characters) has no match for /^Result: [a-z]+$/',
        },
      ],
    });
  });

  it('anchors ^ and $ to the whole answer, not to each line (no flags)', () => {
    expect(answerVerdict([criterion('matches: ^Fixed[\\s\\S]*42$')], answer).passed).toBe(true);
    expect(answerVerdict([criterion('matches: ^Result')], answer).passed).toBe(false);
    expect(answerVerdict([criterion('matches: ^Result')], 'Result: 1').passed).toBe(true);
  });

  it('fails a regex that needs backtracking (a batch checked before RE2 checked it), saying why', () => {
    const matches = (pattern: string): Criterion => ({
      form: 'matches',
      written: `matches: ${pattern}`,
      pattern,
    });
    const [backreference, lookahead] = answerVerdict([matches('(\\w)\\1'), matches('x(?=y)')], 'xxy').checks;
    expect(lookahead).toMatchObject({ passed: false, detail: expect.stringContaining('no lookaround') });
    expect(backreference).toEqual({
      criterion: 'matches: (\\w)\\1',
      passed: false,
      detail:
        '/(\\w)\\1/ cannot be checked: error parsing regexp: invalid escape sequence: `\\1` (patterns run on a ' +
        'linear-time engine (RE2 syntax): no backreferences, no lookaround, [\\s\\S] for any character)',
    });
  });

  it('fails one criterion without failing the others', () => {
    const verdict = answerVerdict([criterion('contains: 42'), criterion('contains: 43')], answer);
    expect(verdict.passed).toBe(false);
    expect(verdict.checks.map((check) => check.passed)).toEqual([true, false]);
  });

  it('passes no criteria', () => {
    expect(answerVerdict([], answer)).toEqual({ passed: true, checks: [] });
  });

  it('fails a file criterion, which only the activity can decide', () => {
    const criteria = [criterion('contains: 42'), criterion('file_exists: out.txt')];
    expect(needsWorkspace(criteria)).toBe(true);
    expect(needsWorkspace(criteria.slice(0, 1))).toBe(false);
    expect(answerVerdict(criteria, answer)).toEqual({
      passed: false,
      checks: [
        { criterion: 'contains: 42', passed: true },
        {
          criterion: 'file_exists: out.txt',
          passed: false,
          detail: "needs the item's workspace: the checkAcceptance activity decides it",
        },
      ],
    });
  });
});

describe('parseBatchItemsJsonl', () => {
  it('reads one item a line, skipping blank lines', () => {
    const text = [
      '\uFEFF{"key": "a", "prompt": "Do a."}',
      '',
      '  ',
      '{"key": "b", "prompt": "Do b.", "acceptance_criteria": ["contains: done"]}\r',
      '',
    ].join('\n');
    expect(parseBatchItemsJsonl(text, 'batch.jsonl')).toEqual({
      items: [
        { key: 'a', prompt: 'Do a.' },
        { key: 'b', prompt: 'Do b.', acceptance_criteria: ['contains: done'] },
      ],
      problems: [],
    });
  });

  it('names the file and line of every problem, and keeps only the valid items', () => {
    const text = [
      '{"key": "a", "prompt": "Do a."}',
      '{"key": "b", "prompt": }',
      '"Do c."',
      '{"key": "", "prompt": "Do d.", "acceptance_criteria": ["file_exists: /abs"]}',
      '{"key": "a", "prompt": "Do a again."}',
      '{"key": "e", "prompt": "Do e."}',
      '{"key": "a", "prompt": "And again."}',
    ].join('\n');
    expect(parseBatchItemsJsonl(text, 'batch.jsonl')).toEqual({
      items: [
        { key: 'a', prompt: 'Do a.' },
        { key: 'a', prompt: 'Do a again.' },
        { key: 'e', prompt: 'Do e.' },
        { key: 'a', prompt: 'And again.' },
      ],
      problems: [
        expect.stringMatching(/^batch\.jsonl:2: is not valid JSON \(Unexpected token .*\)$/),
        'batch.jsonl:3: "Do c." is not a mapping (an item: key, prompt and optionally acceptance_criteria)',
        'batch.jsonl:4: key: "" is empty (write some text)',
        'batch.jsonl:4: acceptance_criteria[0]: "file_exists: /abs" names an absolute path (write a path relative to the workspace, e.g. out/report.md)',
        'batch.jsonl: duplicate keys: "a" ×3 (lines 1, 5, 7) (each key must be unique)',
      ],
    });
  });

  it('counts the lines that are not JSON in one problem, naming the first (a binary file)', () => {
    const binary = Array.from({ length: 146 }, (_, i) => `\u0000\u0001ELF${i}\u00ff`).join('\n');
    const { items, problems } = parseBatchItemsJsonl(binary, 'items.jsonl');
    expect(items).toEqual([]);
    expect(problems).toEqual([
      expect.stringMatching(
        /^items\.jsonl: 146 lines are not JSON \(first: line 1: Unexpected token .*\\u0000\\u0001ELF0.*\); an items file is JSON Lines, one JSON object a line$/,
      ),
    ]);
  });

  it('keeps a single line that is not JSON in line order with the other problems', () => {
    const text = ['"Do a."', '{"key": "b",', '{"key": "", "prompt": "c"}'].join('\n');
    expect(parseBatchItemsJsonl(text, 'batch.jsonl').problems).toEqual([
      'batch.jsonl:1: "Do a." is not a mapping (an item: key, prompt and optionally acceptance_criteria)',
      expect.stringMatching(/^batch\.jsonl:2: is not valid JSON \(.+\)$/),
      'batch.jsonl:3: key: "" is empty (write some text)',
    ]);
  });

  it('refuses a line that gives a key twice, naming the key and the line', () => {
    const text = [
      '{"key": "a", "prompt": "Do a."}',
      '{"key": "b", "prompt": "Do b.", "prompt": "Do c."}',
    ].join('\n');
    expect(parseBatchItemsJsonl(text, 'batch.jsonl')).toEqual({
      items: [{ key: 'a', prompt: 'Do a.' }],
      problems: [
        'batch.jsonl:2: key "prompt" is given twice (JSON would keep only the last value: give each key once)',
      ],
    });
  });

  it('refuses a file with no items', () => {
    expect(parseBatchItemsJsonl('\n  \n', 'empty.jsonl')).toEqual({
      items: [],
      problems: [
        'empty.jsonl: has no items (write one JSON object a line, e.g. {"key": "a", "prompt": "…"})',
      ],
    });
  });
});
