/**
 * Text shaping for what crosses into history, queries and model prompts. Lengths are JavaScript string
 * lengths (UTF-16 code units); a cut never splits a surrogate pair, so no lone half of an emoji is left.
 */

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** The first `count` code units of `text`, one fewer when the last would be half of a pair. */
function headOf(text: string, count: number): string {
  if (count <= 0) return '';
  if (count >= text.length) return text;
  const end = isHighSurrogate(text.charCodeAt(count - 1)) ? count - 1 : count;
  return text.slice(0, end);
}

/** The last `count` code units of `text`, one fewer when the first would be half of a pair. */
function tailOf(text: string, count: number): string {
  if (count <= 0) return '';
  if (count >= text.length) return text;
  const start = text.length - count;
  return text.slice(isLowSurrogate(text.charCodeAt(start)) ? start + 1 : start);
}

/**
 * Text from a model or a user on one line: whitespace runs become one space and control characters go, so
 * no escape sequence a model wrote can reach a terminal.
 */
export function oneLine(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (/\s/.test(char)) out += ' ';
    else if (code >= 0x20 && (code < 0x7f || code > 0x9f)) out += char;
  }
  return out.replace(/ {2,}/g, ' ').trim();
}

/** 1234567 → "1,234,567", without locale data (the workflow sandbox must not depend on ICU). */
export function groupThousands(value: number): string {
  const sign = value < 0 ? '-' : '';
  const digits = String(Math.trunc(Math.abs(value)));
  return sign + digits.replace(/\B(?=(\d{3})+$)/g, ',');
}

/** 0.0123 → "$0.0123": four decimals (a model call may cost a fraction of a cent), no locale data. */
export function formatUsd(usd: number): string {
  return `$${usd.toFixed(4)}`;
}

function omissionMarker(omitted: number): string {
  return `\n\n[… ${groupThousands(omitted)} characters omitted …]\n\n`;
}

/**
 * Shortens `text` to at most `maxChars` by keeping its head (two thirds) and tail (one third) around a
 * marker that says how much was cut. Text that already fits comes back unchanged.
 */
export function truncateHeadTail(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : joinHeadTail(text, text, text.length, maxChars);
}

/**
 * At most `maxChars` of a text `total` code units long, of which only a head and a tail were kept (a stream
 * that was not held whole): two thirds of the room from `head`'s start, one third from `tail`'s end, and the
 * marker saying how much is missing between them.
 */
export function joinHeadTail(head: string, tail: string, total: number, maxChars: number): string {
  // The longest marker this text can need, so head + marker + tail never exceeds maxChars.
  const budget = maxChars - omissionMarker(total).length;
  if (budget <= 0) return headOf(head, maxChars);
  const headChars = Math.ceil((budget * 2) / 3);
  const kept = headOf(head, headChars);
  const end = tailOf(tail, budget - headChars);
  return kept + omissionMarker(total - kept.length - end.length) + end;
}

/** Keeps the first `maxChars` of `text` and says whether anything was cut. */
export function capText(text: string, maxChars: number): { text: string; truncated: boolean } {
  if (text.length <= maxChars) return { text, truncated: false };
  return { text: headOf(text, maxChars), truncated: true };
}

/** The longest static summary this project sets: it fits the Web UI's timeline (Temporal allows 400 bytes). */
export const SUMMARY_MAX_CHARS = 96;
/** The longest static details: well within the 20 KB Temporal allows. */
export const DETAILS_MAX_CHARS = 4_000;

/** A workflow's one-line summary for the Web UI: whitespace runs become spaces, cut with an ellipsis. */
export function summaryLine(text: string, maxChars = SUMMARY_MAX_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= maxChars ? flat : `${capText(flat, maxChars - 1).text}…`;
}

/** A workflow's static details for the Web UI: the text, its head and tail when it is long. */
export function detailsText(text: string): string {
  return truncateHeadTail(text, DETAILS_MAX_CHARS);
}

/**
 * The placeholders the Web UI fills in, code blocks included, in whatever it renders as markdown on a workflow's
 * page (`{namespace}`, `{workflowId}`, `{runId}` become that page's): a match at each one's brace.
 */
const UI_PLACEHOLDER = /\{(?=(?:namespace|workflowId|runId)\})/g;
/** Written after a placeholder's brace in a code block, where nothing else escapes it: it shows as nothing. */
const WORD_JOINER = '\u2060';

/**
 * Text from a user, a model or a provider, inside a line, as the Web UI's markdown shows it: what markdown or
 * the HTML under it takes as syntax (emphasis, code, links, tags, entities, strikethrough, tables), what its
 * typography rewrites (`--`, `...`, `(c)`, `1/2`) and the UI's placeholders are escaped; parentheses, dots and
 * single dashes elsewhere, harmless inside a line, are left readable. Quotes are left as they are: the UI
 * server's markdown (gomarkdown, with SmartyPants) curls them and takes no escape for them, so an escaped quote
 * would show its backslash; text that must keep straight quotes (a command to copy) goes in a {@link codeSpan}.
 */
export function markdownText(text: string): string {
  return (
    text
      .replace(/[\\`*_[\]<>&~|#!]/g, (c) => `\\${c}`)
      .replace(/-{2,}/g, (dashes) => '\\-'.repeat(dashes.length))
      .replace(/\.{3,}/g, (dots) => '\\.'.repeat(dots.length))
      .replace(/\((?=(?:c|r|tm)\))/gi, '\\(')
      // A character reference, not an escape: CommonMark escapes no `/`, SmartyPants would make ½ of 1/2.
      .replace(/(?<=\d)\/(?=\d)/g, '&#47;')
      .replace(UI_PLACEHOLDER, '&#123;')
  );
}

/**
 * `text` as one markdown code span, shown verbatim (quotes, `--flags`, `<placeholders>`) so it can be copied: the
 * fence is one backtick longer than the longest run inside, padded when the text starts or ends with one.
 */
export function codeSpan(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  const fence = '`'.repeat(longestBacktickRun(flat) + 1);
  const pad = flat.startsWith('`') || flat.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${flat}${pad}${fence}`;
}

function longestBacktickRun(text: string): number {
  return Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
}

/**
 * A prompt as a workflow's static details: one fenced code block, so the Web UI shows it as written (tags,
 * `--flags`, stars, quotes, backticks, its line breaks), cut like {@link detailsText} when long. The fence is
 * longer than any backtick run inside (at least three), so no line of the prompt can close it; a word joiner
 * after the brace of `{namespace}`, `{workflowId}` or `{runId}` keeps the UI from filling it in.
 */
export function promptDetails(prompt: string): string {
  const text = detailsText(prompt).replace(UI_PLACEHOLDER, `{${WORD_JOINER}`);
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(text) + 1));
  return `${fence}\n${text}\n${fence}`;
}

/**
 * The prompt in static details that {@link promptDetails} wrote (as far as it was kept); details of a workflow
 * started before it (the prompt as it was) come back unchanged.
 */
export function promptFromDetails(details: string): string {
  const block = /^(`{3,})\n([\s\S]*)\n\1$/.exec(details);
  if (!block || longestBacktickRun(block[2]) >= block[1].length) return details;
  return block[2].replace(/\{\u2060(?=(?:namespace|workflowId|runId)\})/g, '{');
}
