import {
  capText,
  codeSpan,
  DETAILS_MAX_CHARS,
  groupThousands,
  markdownText,
  promptDetails,
  promptFromDetails,
  truncateHeadTail,
} from '../../../contracts/text';

describe('truncateHeadTail', () => {
  it('returns text that fits unchanged', () => {
    expect(truncateHeadTail('short', 5)).toBe('short');
    expect(truncateHeadTail('', 0)).toBe('');
  });

  it('keeps head and tail around a marker that says how much was cut', () => {
    const text = 'H'.repeat(3000) + 'M'.repeat(4000) + 'T'.repeat(3000);
    const cut = truncateHeadTail(text, 2000);
    expect(cut.length).toBeLessThanOrEqual(2000);
    expect(cut.startsWith('H'.repeat(1000))).toBe(true);
    expect(cut.endsWith('T'.repeat(500))).toBe(true);
    const marker = /\n\n\[… ([\d,]+) characters omitted …\]\n\n/.exec(cut);
    expect(marker).not.toBeNull();
    const omitted = Number(marker![1].replace(/,/g, ''));
    expect(cut.length - marker![0].length + omitted).toBe(text.length);
  });

  it('gives the head about two thirds of the room', () => {
    const cut = truncateHeadTail('a'.repeat(500) + 'b'.repeat(500), 300);
    const [head, tail] = cut.split(/\n\n\[…[^\]]*\]\n\n/);
    expect(head.length + tail.length).toBeGreaterThan(250);
    expect(Math.abs(head.length - 2 * tail.length)).toBeLessThanOrEqual(2);
  });

  it('never exceeds the limit, down to limits smaller than the marker', () => {
    const text = 'x'.repeat(12_345);
    for (const max of [0, 1, 10, 30, 40, 100, 2000, 12_344]) {
      expect(truncateHeadTail(text, max).length).toBeLessThanOrEqual(max);
    }
    expect(truncateHeadTail(text, 10)).toBe('x'.repeat(10));
  });

  it('does not split a surrogate pair at either cut', () => {
    const text = '😀'.repeat(2000);
    const cut = truncateHeadTail(text, 501);
    expect(cut.length).toBeLessThanOrEqual(501);
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});

describe('capText', () => {
  it('keeps text that fits and says nothing was cut', () => {
    expect(capText('abc', 3)).toEqual({ text: 'abc', truncated: false });
  });

  it('keeps the head and flags the cut', () => {
    expect(capText('abcdef', 4)).toEqual({ text: 'abcd', truncated: true });
  });

  it('does not leave half of a surrogate pair', () => {
    expect(capText('ab😀', 3)).toEqual({ text: 'ab', truncated: true });
  });
});

describe('groupThousands', () => {
  it('groups digits in threes', () => {
    expect([0, 999, 1000, 1_400_000, -12_345].map(groupThousands)).toEqual([
      '0',
      '999',
      '1,000',
      '1,400,000',
      '-12,345',
    ]);
  });
});

describe('markdownText', () => {
  it('escapes markdown syntax and what typography rewrites, and leaves quotes for the UI to show', () => {
    expect(markdownText('*a* _b_ `c` <d> [e] & ~f~ | #g !h \\ i')).toBe(
      '\\*a\\* \\_b\\_ \\`c\\` \\<d\\> \\[e\\] \\& \\~f\\~ \\| \\#g \\!h \\\\ i',
    );
    expect(markdownText('--flag --- a - b')).toBe('\\-\\-flag \\-\\-\\- a - b');
    expect(markdownText('wait... (c) (TM) (r) (see) 1/2 a/b')).toBe(
      'wait\\.\\.\\. \\(c) \\(TM) \\(r) (see) 1&#47;2 a/b',
    );
    expect(markdownText('{namespace} {workflowId} {runId} {other}')).toBe(
      '&#123;namespace} &#123;workflowId} &#123;runId} {other}',
    );
    // An escaped quote would show its backslash in the UI; a quote is left alone.
    expect(markdownText(`"Which region?" it's`)).toBe(`"Which region?" it's`);
  });
});

describe('codeSpan', () => {
  it('fences the text with one backtick more than its longest run, on one line', () => {
    expect(codeSpan('subagents answer r1 "<answer>" --question q1')).toBe(
      '`subagents answer r1 "<answer>" --question q1`',
    );
    expect(codeSpan('a ``b`` c')).toBe('```a ``b`` c```');
    expect(codeSpan('`x`')).toBe('`` `x` ``');
    expect(codeSpan('one\ntwo')).toBe('`one two`');
  });
});

describe('promptDetails', () => {
  const prompt = 'Check <tag> with --flag and *stars*,\n`code`, ``two`` and\n```\nfenced\n```\n"quoted"';

  it('is one fenced block, its fence longer than any backtick run in the prompt', () => {
    expect(promptDetails('Do the work.')).toBe('```\nDo the work.\n```');
    expect(promptDetails(prompt)).toBe(`\`\`\`\`\n${prompt}\n\`\`\`\``);
    expect(promptDetails('a ````` b')).toBe('``````\na ````` b\n``````');
  });

  it('gives the prompt back (placeholders the UI would fill in too), and older details unchanged', () => {
    for (const text of [prompt, 'Do the work.', '', '\n lines \n\n', '```', 'x\n```']) {
      expect(promptFromDetails(promptDetails(text))).toBe(text);
    }
    expect(promptFromDetails('Do the work.')).toBe('Do the work.');
    const placeholders = 'In {namespace}, {workflowId} of {runId}: {other}';
    expect(promptDetails(placeholders)).toBe(
      '```\nIn {\u2060namespace}, {\u2060workflowId} of {\u2060runId}: {other}\n```',
    );
    expect(promptFromDetails(promptDetails(placeholders))).toBe(placeholders);
    expect(promptFromDetails('```\nopen')).toBe('```\nopen');
    // A fence that a run inside would close is not one promptDetails wrote.
    expect(promptFromDetails('```\na ``` b\n```')).toBe('```\na ``` b\n```');
  });

  it('cuts a long prompt as static details are cut, within the fence', () => {
    const long = 'H'.repeat(3000) + 'T'.repeat(3000);
    const details = promptDetails(long);
    expect(details.length).toBeLessThanOrEqual(DETAILS_MAX_CHARS + 8);
    expect(details.startsWith('```\nHHH')).toBe(true);
    expect(details.endsWith('TTT\n```')).toBe(true);
    expect(promptFromDetails(details)).toContain('characters omitted');
  });
});
