import { firstDuplicateKey, parseStrictJson, printable } from '../../../contracts/strict-json';

describe('firstDuplicateKey', () => {
  it('finds none where every object names each key once', () => {
    expect(firstDuplicateKey('{"a": 1, "b": {"a": 2}, "c": [{"a": 3}, {"a": 4}]}')).toBeUndefined();
    expect(firstDuplicateKey('[1, "a", "a", {"a": "a"}]')).toBeUndefined();
    expect(firstDuplicateKey('"just text"')).toBeUndefined();
  });

  it('names the key and the object it is in', () => {
    expect(firstDuplicateKey('{"prompt": "a", "key": "k", "prompt": "b"}')).toEqual({
      key: 'prompt',
      path: '',
    });
    expect(firstDuplicateKey('{"a": {"b": 1, "b": 2}}')).toEqual({ key: 'b', path: 'a' });
    expect(firstDuplicateKey('{"list": [{}, {"x": 1, "x": 1}]}')).toEqual({ key: 'x', path: 'list[1]' });
    expect(firstDuplicateKey('{"odd key": {"y": [], "y": {}}}')).toEqual({ key: 'y', path: '"odd key"' });
  });

  it('compares keys as JSON reads them: escapes decoded, strings with quotes and brackets skipped', () => {
    expect(firstDuplicateKey('{"a": 1, "\\u0061": 2}')).toEqual({ key: 'a', path: '' });
    expect(firstDuplicateKey('{"a\\"b": "{\\"a\\": 1, ", "c": "]},", "a\\"b": 0}')).toEqual({
      key: 'a"b',
      path: '',
    });
    expect(firstDuplicateKey('{"a": "\\\\", "b": 1}')).toBeUndefined();
  });

  it('holds for deep nesting without recursion', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    expect(firstDuplicateKey(deep)).toBeUndefined();
  });
});

describe('parseStrictJson', () => {
  it('gives the value of valid JSON', () => {
    expect(parseStrictJson('{"key": "a", "prompt": "p"}')).toEqual({ value: { key: 'a', prompt: 'p' } });
  });

  it('refuses a key given twice, naming it', () => {
    expect(parseStrictJson('{"key": "a", "prompt": "p", "prompt": "q"}')).toEqual({
      duplicateKey: 'key "prompt" is given twice (JSON would keep only the last value: give each key once)',
    });
    expect(parseStrictJson('{"a": {"b": 1, "b": 2}}')).toEqual({
      duplicateKey: 'key "b" is given twice in a (JSON would keep only the last value: give each key once)',
    });
  });

  it("says the parser's message for text that is not JSON, control characters escaped", () => {
    const read = parseStrictJson('\u0000\u0001ELF');
    expect(read).toEqual({ notJson: expect.stringContaining('\\u0000\\u0001ELF') });
    expect('notJson' in read && [...read.notJson].some((ch) => ch.charCodeAt(0) < 0x20)).toBe(false);
  });
});

describe('printable', () => {
  it('escapes control characters and leaves the rest', () => {
    expect(printable('a\tb\u0000ü\u007f')).toBe('a\\u0009b\\u0000ü\\u007f');
  });
});
