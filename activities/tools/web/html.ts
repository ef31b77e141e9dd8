/**
 * HTML as readable text, for a page fetched directly and for the snippets of a search page: one linear scan (no
 * backtracking regex over a page someone else wrote), scripts and styles dropped, block elements as line breaks.
 */

const SKIPPED: ReadonlySet<string> = new Set(['script', 'style', 'noscript', 'template', 'svg', 'head']);
const BLOCKS: ReadonlySet<string> = new Set([
  ...['p', 'div', 'br', 'li', 'ul', 'ol', 'tr', 'table', 'section', 'article', 'header', 'footer'],
  ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'pre', 'blockquote', 'hr', 'main', 'nav', 'title', 'dd', 'dt'],
]);
const NAMED: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  mdash: '—',
  ndash: '–',
  hellip: '…',
  copy: '©',
};

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g, (whole, body: string) => {
    if (body.startsWith('#x') || body.startsWith('#X'))
      return safeCodePoint(parseInt(body.slice(2), 16), whole);
    if (body.startsWith('#')) return safeCodePoint(parseInt(body.slice(1), 10), whole);
    return NAMED[body.toLowerCase()] ?? whole;
  });
}

function safeCodePoint(code: number, fallback: string): string {
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : fallback;
}

function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

function tagName(tag: string): string {
  return /^<\/?\s*([a-zA-Z][a-zA-Z0-9-]*)/.exec(tag)?.[1]?.toLowerCase() ?? '';
}

/** The text of an HTML document or fragment. */
export function htmlToText(html: string): string {
  // ASCII-only lowering keeps every index of `html` (String#toLowerCase may change lengths).
  const lower = asciiLower(html);
  const out: string[] = [];
  let i = 0;
  while (i < html.length) {
    const open = html.indexOf('<', i);
    if (open < 0) {
      out.push(html.slice(i));
      break;
    }
    out.push(html.slice(i, open));
    if (html.startsWith('<!--', open)) {
      const end = html.indexOf('-->', open + 4);
      i = end < 0 ? html.length : end + 3;
      continue;
    }
    const close = html.indexOf('>', open + 1);
    if (close < 0) break;
    const tag = html.slice(open, close + 1);
    const name = tagName(tag);
    i = close + 1;
    if (SKIPPED.has(name) && !tag.startsWith('</') && !tag.endsWith('/>')) {
      const end = lower.indexOf(`</${name}`, i);
      i = end < 0 ? html.length : html.indexOf('>', end) + 1 || html.length;
      continue;
    }
    if (BLOCKS.has(name)) out.push('\n');
  }
  return decodeEntities(out.join(''))
    .replace(/[ \t\f\v\r\u00a0]+/g, ' ')
    .replace(/ *\n[\n ]*/g, (breaks) => (breaks.split('\n').length > 2 ? '\n\n' : '\n'))
    .trim();
}

/** The document's `<title>`, if it has one. */
export function htmlTitle(html: string): string | undefined {
  const lower = asciiLower(html.slice(0, 200_000));
  const start = lower.indexOf('<title');
  if (start < 0) return undefined;
  const open = lower.indexOf('>', start);
  const end = lower.indexOf('</title', open);
  if (open < 0 || end < 0) return undefined;
  const title = htmlToText(html.slice(open + 1, end));
  return title === '' ? undefined : title;
}
