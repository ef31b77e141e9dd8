/**
 * What the model reads in place of a tool result saved to the workspace (`tool_output`): DeerFlow's typed
 * synopsis (`render_tool_output_preview`) in DeerFlow's words — where the full output is, what kind of output it
 * is, and a raw head + tail sample of `preview_head_chars` / `preview_tail_chars`. JSON, CSV/TSV tables, code and
 * text are typed as DeerFlow types them; XML and YAML are read as text here. Pure, no LLM.
 */
import { looksCode, summarizeCode, tryTable } from './tool-output-kinds';

type SynopsisKind = 'json' | 'csv' | 'tsv' | 'code' | 'text' | 'unknown';

export interface Synopsis {
  kind: SynopsisKind;
  title: string;
  summary: string[];
  structure: string[];
  notable: string[];
  /** A sample the synopsis brings itself (binary-like or oversized output), used instead of the head/tail one. */
  sample?: string;
}

const KEY_LIMIT = 12;
const SCALAR_LIMIT = 6;
const TEXT_HEADER_LIMIT = 16;
const TEXT_EXCERPT_CHARS = 420;
const JSON_SHAPE_MAX_DEPTH = 2;
const JSON_STRUCTURE_LIMIT = 24;
const JSON_STRUCTURE_DEPTH = 4;
/** Beyond this the output is not parsed: a raw sample only (DeerFlow's `_MAX_SYNOPSIS_INPUT_BYTES`). */
const MAX_SYNOPSIS_INPUT_BYTES = 5_000_000;

function clip(value: string, limit: number): string {
  if (limit <= 0) return '';
  return value.length <= limit ? value : `${value.slice(0, Math.max(0, limit - 3))}...`;
}

function oneLine(value: string, limit: number): string {
  return clip(value.replace(/\s+/g, ' ').trim(), limit);
}

function headTailSample(content: string, limit: number): string {
  if (content.length <= limit) return content;
  const half = Math.max(1, Math.floor(limit / 2));
  return `${content.slice(0, half)}\n...\n${content.slice(-half)}`;
}

function looksBinary(content: string): boolean {
  if (content.includes('\0')) return true;
  const sample = content.slice(0, 1000);
  let controls = 0;
  for (const char of sample) if (char < ' ' && !'\n\r\t'.includes(char)) controls += 1;
  return controls / Math.max(1, sample.length) > 0.05;
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return 'number';
  return 'string';
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function jsonShape(value: unknown, depth = 0): string {
  if (depth >= JSON_SHAPE_MAX_DEPTH) return '...';
  if (isObject(value)) {
    const keys = Object.keys(value);
    const shown = keys.slice(0, KEY_LIMIT);
    return `object(keys=${keys.length}${shown.length > 0 ? `: ${shown.join(', ')}` : ''})`;
  }
  if (Array.isArray(value)) {
    const samples = value.slice(0, 3).map((item) => jsonShape(item, depth + 1));
    return `array(len=${value.length}${samples.length > 0 ? `, first=[${samples.join(', ')}]` : ''})`;
  }
  return typeName(value);
}

function jsonPath(parent: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

function containerDescription(value: unknown): string {
  if (isObject(value)) {
    const keys = Object.keys(value);
    const shown = keys.slice(0, KEY_LIMIT);
    return `object keys ${keys.length}${shown.length > 0 ? `; keys ${shown.join(', ')}` : ''}`;
  }
  if (Array.isArray(value)) {
    return `array length ${value.length}${value.length > 0 ? `; first item ${typeName(value[0])}` : ''}`;
  }
  return typeName(value);
}

function containerPaths(root: unknown): string[] {
  const paths: string[] = [];
  const walk = (node: unknown, at: string, depth: number): void => {
    if (paths.length >= JSON_STRUCTURE_LIMIT || depth >= JSON_STRUCTURE_DEPTH) return;
    if (isObject(node)) {
      for (const [key, child] of Object.entries(node).slice(0, KEY_LIMIT)) {
        if (paths.length >= JSON_STRUCTURE_LIMIT) break;
        const next = jsonPath(at, key);
        if (typeof child === 'object' && child !== null) {
          paths.push(`${next}: ${containerDescription(child)}`);
          walk(child, next, depth + 1);
        }
      }
    } else if (Array.isArray(node) && node.length > 0 && typeof node[0] === 'object' && node[0] !== null) {
      walk(node[0], `${at}[]`, depth + 1);
    }
  };
  walk(root, '$', 0);
  return paths;
}

function scalarExamples(root: unknown): string[] {
  const examples: string[] = [];
  const walk = (node: unknown, at: string, depth: number): void => {
    if (examples.length >= SCALAR_LIMIT || depth >= JSON_STRUCTURE_DEPTH) return;
    if (isObject(node)) {
      for (const [key, child] of Object.entries(node).slice(0, KEY_LIMIT)) {
        walk(child, `${at}.${key}`, depth + 1);
        if (examples.length >= SCALAR_LIMIT) break;
      }
    } else if (Array.isArray(node)) {
      node.slice(0, 2).forEach((child, index) => walk(child, `${at}[${index}]`, depth + 1));
    } else {
      const shown = typeof node === 'string' ? JSON.stringify(clip(node, 80)) : clip(String(node), 80);
      examples.push(`${at}: ${shown}`);
    }
  };
  walk(root, '$', 0);
  return examples;
}

function tryJson(content: string): Synopsis | undefined {
  const stripped = content.trim();
  if (!stripped.startsWith('{') && !stripped.startsWith('[')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(stripped);
  } catch {
    return undefined;
  }
  const summary: string[] = [];
  const structure = [`shape: ${jsonShape(value)}`, ...containerPaths(value)];
  if (isObject(value)) {
    const keys = Object.keys(value);
    summary.push(`JSON object with ${keys.length} top-level keys.`);
    summary.push(`Top-level keys: ${keys.slice(0, KEY_LIMIT).join(', ') || '(none)'}`);
  } else if (Array.isArray(value)) {
    summary.push(`JSON array with ${value.length} items.`);
    if (value.length > 0) structure.push(`first item type: ${typeName(value[0])}`);
  } else {
    summary.push(`JSON ${typeName(value)}.`);
  }
  return { kind: 'json', title: 'JSON output', summary, structure, notable: scalarExamples(value) };
}

function lines(content: string): string[] {
  const split = content.split(/\r\n|\r|\n/);
  if (split.length > 0 && split[split.length - 1] === '') split.pop();
  return split;
}

function summarizeText(content: string, tool: string, excerpts: boolean): Synopsis {
  const all = lines(content);
  const normalized = content.replace(/\s+/g, ' ').trim();
  const headers: string[] = [];
  for (const line of all) {
    const stripped = line.trim();
    if (!/^#{1,6}\s+/.test(stripped) && !/^[A-Z0-9][A-Z0-9\s:_-]{6,}$/.test(stripped)) continue;
    const header = oneLine(stripped, 160);
    if (!headers.includes(header)) headers.push(header);
    if (headers.length >= TEXT_HEADER_LIMIT) break;
  }
  const words = normalized === '' ? 0 : normalized.split(' ').length;
  const summary = [
    `Text output${tool ? ` from ${tool}` : ''} with ${content.length} characters, ${words} words, and ${all.length} lines.`,
    `Detected section headers: ${headers.length > 0 ? headers.join(' | ') : 'none detected'}.`,
  ];
  if (excerpts) {
    summary.push(
      `Opening excerpt: ${oneLine(content.slice(0, TEXT_EXCERPT_CHARS), TEXT_EXCERPT_CHARS) || '(empty)'}`,
    );
    if (content.length > TEXT_EXCERPT_CHARS) {
      const start = Math.max(TEXT_EXCERPT_CHARS, content.length - TEXT_EXCERPT_CHARS);
      summary.push(`Closing excerpt: ${oneLine(content.slice(start), TEXT_EXCERPT_CHARS)}`);
    }
  }
  return { kind: 'text', title: 'Text output', summary, structure: [], notable: [] };
}

function synopsisOf(content: string, tool: string, excerpts: boolean): Synopsis {
  const none = { structure: [], notable: [] };
  if (content === '') {
    return {
      kind: 'unknown',
      title: 'Empty output',
      summary: ['The tool returned an empty string.'],
      ...none,
    };
  }
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > MAX_SYNOPSIS_INPUT_BYTES) {
    const megabytes = (bytes / 1024 / 1024).toFixed(1);
    return {
      kind: 'unknown',
      title: 'Oversized output',
      summary: [
        `The output has ${content.length} characters (${megabytes} MB). Parsing skipped due to size limit.`,
      ],
      ...none,
      sample: headTailSample(content, TEXT_EXCERPT_CHARS * 2),
    };
  }
  if (looksBinary(content)) {
    return {
      kind: 'unknown',
      title: 'Binary-like output',
      summary: [`The output has ${content.length} characters and includes non-text control bytes.`],
      ...none,
      sample: headTailSample(content, TEXT_EXCERPT_CHARS * 2),
    };
  }
  return (
    tryJson(content) ??
    (content.includes('\t') ? tryTable(content, '\t') : undefined) ??
    (content.includes(',') ? tryTable(content, ',') : undefined) ??
    (looksCode(content) ? summarizeCode(content) : undefined) ??
    summarizeText(content, tool, excerpts)
  );
}

/** The head and the tail, each snapped to a line break, as DeerFlow's `_build_raw_sample` cuts them. */
function rawSample(content: string, headBudget: number, tailBudget: number): string {
  if (headBudget <= 0 && tailBudget <= 0) return '';
  if (content.length <= headBudget + tailBudget) return content;
  const parts: string[] = [];
  if (headBudget > 0) {
    const head = content.slice(0, headBudget);
    const snap = head.lastIndexOf('\n');
    parts.push(snap > 0 ? head.slice(0, snap) : head);
  }
  if (tailBudget > 0) {
    const tail = content.slice(-tailBudget);
    const snap = tail.indexOf('\n');
    parts.push(snap >= 0 && snap < tail.length - 1 ? tail.slice(snap + 1) : tail);
  }
  return parts.join('\n...\n');
}

/** The text the model gets for a result saved at `savedAt` (a path it can hand to read_file). */
export function renderToolOutputPreview(
  content: string,
  tool: string,
  savedAt: string,
  headChars: number,
  tailChars: number,
): string {
  const head = Math.max(0, headChars);
  const tail = Math.max(0, tailChars);
  // Text excerpts are left out when the raw sample will show the same bytes.
  const withSample = head + tail > 0 && content.length > head + tail;
  const synopsis = synopsisOf(content, tool, !withSample);
  const total = content.length;
  const out = [
    `[Full ${tool} output saved to ${savedAt} (${total} chars, ~${Math.floor(total / 4)} tokens).]`,
    `[Preview kind: ${synopsis.kind}. This is a structured synopsis, not a raw head/tail truncation.]`,
    '',
    `${synopsis.title}:`,
    ...synopsis.summary.map((item) => `- ${item}`),
  ];
  if (synopsis.structure.length > 0) out.push('', 'Structure:', ...synopsis.structure.map((s) => `- ${s}`));
  if (synopsis.notable.length > 0) out.push('', 'Notable items:', ...synopsis.notable.map((s) => `- ${s}`));
  const sample = synopsis.sample ?? rawSample(content, head, tail);
  if (sample) out.push('', 'Raw sample (head + tail, clipped to head_chars / tail_chars):', sample);
  out.push(
    '',
    'Access:',
    `- Use read_file on ${savedAt} with start_line and end_line to inspect the raw output.`,
  );
  return out.join('\n');
}

/**
 * DeerFlow's fallback where the output could not be saved: at most `maxChars`, head and tail around a marker
 * saying what was left out (`_build_fallback`).
 */
export function fallbackTruncation(
  content: string,
  tool: string,
  maxChars: number,
  headChars: number,
  tailChars: number,
): string {
  const total = content.length;
  if (maxChars <= 0 || total <= maxChars) return content;
  const marker = (omitted: number) =>
    `\n\n[... ${omitted} chars omitted from ${tool} output. Persistent storage unavailable. Consider narrowing the query or using more specific parameters.]\n\n`;
  const overhead = marker(total).length;
  if (overhead >= maxChars) return content.slice(0, maxChars);
  const budget = maxChars - overhead;
  const effectiveHead = Math.min(headChars, budget);
  const effectiveTail = Math.min(tailChars, Math.max(0, budget - effectiveHead));
  const headEnd = snapEnd(content, Math.min(effectiveHead, total));
  const tailStart = snapStart(content, Math.max(headEnd, total - effectiveTail));
  const headText = content.slice(0, headEnd);
  const tailText = tailStart < total ? content.slice(tailStart) : '';
  return `${headText}${marker(total - headText.length - tailText.length)}${tailText}`;
}

/** An end offset moved back to just after a newline in the second half of the slice, if there is one. */
function snapEnd(text: string, pos: number): number {
  if (pos <= 0 || pos >= text.length) return pos;
  const newline = text.lastIndexOf('\n', pos - 1);
  return newline >= Math.floor(pos / 2) ? newline + 1 : pos;
}

/** A start offset moved forward to just after a newline in the first half of the rest, if there is one. */
function snapStart(text: string, pos: number): number {
  if (pos <= 0 || pos >= text.length) return pos;
  const half = pos + Math.floor((text.length - pos) / 2);
  const newline = text.indexOf('\n', pos);
  return newline >= 0 && newline < half ? newline + 1 : pos;
}
