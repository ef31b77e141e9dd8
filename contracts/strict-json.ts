/**
 * JSON that a person wrote, read strictly: `JSON.parse` keeps the last of two values given under one key and
 * says nothing, so `{"prompt": "a", "prompt": "b"}` would run "b" while its author meant either. Here a key
 * given twice in one object is refused, naming it. Pure: no Node APIs (the workflow bundle may import it).
 */

/**
 * What a strict read gives: the value; or `notJson`, the parser's own message (control characters escaped);
 * or `duplicateKey`, a sentence naming the key given twice and where.
 */
export type StrictJson = { value: unknown } | { notJson: string } | { duplicateKey: string };

/** Where a value sits in the document: `prompt`, `a.b`, `list[2].x`; empty at the top. */
function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
  return parent === '' ? name : `${parent}.${name}`;
}

type Frame =
  | { kind: 'object'; path: string; keys: Set<string>; expectKey: boolean; current: string }
  | { kind: 'array'; path: string; index: number };

/**
 * The first key given twice in one object of `text`, with the path of that object's place (empty at the top),
 * or undefined when there is none. `text` must be valid JSON (JSON.parse accepted it): only its strings and
 * brackets are looked at, so a scan in one pass, with no recursion, whatever the nesting.
 */
export function firstDuplicateKey(text: string): { key: string; path: string } | undefined {
  const stack: Frame[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    const top = stack[stack.length - 1];
    if (ch === '"') {
      let end = i + 1;
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
      if (top?.kind === 'object' && top.expectKey) {
        // Decoded, so that "a" and "\u0061" are the same key, as they are to JSON.parse.
        const key = JSON.parse(text.slice(i, end + 1)) as string;
        if (top.keys.has(key)) return { key, path: top.path };
        top.keys.add(key);
        top.current = key;
        top.expectKey = false;
      }
      i = end + 1;
      continue;
    }
    if (ch === '{' || ch === '[') {
      let path = '';
      if (top?.kind === 'object') path = childPath(top.path, top.current);
      else if (top?.kind === 'array') path = childPath(top.path, top.index);
      stack.push(
        ch === '{'
          ? { kind: 'object', path, keys: new Set(), expectKey: true, current: '' }
          : { kind: 'array', path, index: 0 },
      );
    } else if (ch === '}' || ch === ']') {
      stack.pop();
    } else if (ch === ',') {
      if (top?.kind === 'object') top.expectKey = true;
      else if (top?.kind === 'array') top.index += 1;
    }
    i += 1;
  }
  return undefined;
}

/** Control characters (a binary file's bytes) shown as escapes, so that a message stays one readable line. */
export function printable(text: string): string {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    /[\u0000-\u001f\u007f-\u009f]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** `text` parsed as JSON, refusing a key given twice in one object (see StrictJson). */
export function parseStrictJson(text: string): StrictJson {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { notJson: printable(err instanceof Error ? err.message : String(err)) };
  }
  const duplicate = firstDuplicateKey(text);
  if (duplicate !== undefined) {
    const where = duplicate.path === '' ? '' : ` in ${duplicate.path}`;
    return {
      duplicateKey:
        `key ${JSON.stringify(duplicate.key)} is given twice${where} ` +
        '(JSON would keep only the last value: give each key once)',
    };
  }
  return { value };
}
