/**
 * The table and code kinds of DeerFlow's tool-output synopsis (`_try_table`, `_looks_code`, `_summarize_code`):
 * a CSV or TSV table by its columns and first row, code by its imports and symbols. Pure.
 */
import type { Synopsis } from './tool-output-synopsis';

const TABLE_SAMPLE_ROWS = 50;
const TABLE_COLUMN_LIMIT = 18;
const TABLE_MIN_DATA_ROWS = 5;
const CODE_IMPORT_LIMIT = 12;
const CODE_SYMBOL_LIMIT = 24;
const HEADER_CELL = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

const CODE_HINTS = [
  /^\s*(?:from\s+\S+\s+import|import\s+\S+)/m,
  /^\s*(?:class|def|async\s+def|function|export\s+function)\s+[A-Za-z_]\w*/m,
  // Rust/Java need stronger signals than a bare `use <word>` (prose says "use the following …").
  /^\s*(?:package\s+[A-Za-z_][\w.]*|use\s+[A-Za-z_][\w:]*\s*;|pub\s+fn\s+[A-Za-z_]\w*\s*\(|fn\s+[A-Za-z_]\w*\s*\(|public\s+class\s+[A-Za-z_]\w*)/m,
];

function clip(value: string, limit: number): string {
  return value.length <= limit ? value : `${value.slice(0, Math.max(0, limit - 3))}...`;
}

function oneLine(value: string, limit: number): string {
  return clip(value.replace(/\s+/g, ' ').trim(), limit);
}

/** One line's cells, double quotes read as CSV quotes them (`"a, b"`, `""` for a quote inside). */
function cells(line: string, delimiter: string): string[] {
  const out: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const char = line[i];
    if (quoted) {
      if (char === '"' && line[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"' && cell === '') quoted = true;
    else if (char === delimiter) {
      out.push(cell);
      cell = '';
    } else cell += char;
  }
  out.push(cell);
  return out;
}

/** A table when the first rows agree on a width and the header looks like column names (DeerFlow's gates). */
export function tryTable(content: string, delimiter: ',' | '\t'): Synopsis | undefined {
  const lines = content.split(/\r\n|\r|\n/);
  const rows = lines
    .slice(0, TABLE_SAMPLE_ROWS)
    .map((line) => cells(line, delimiter))
    .filter((row) => row.some((cell) => cell.trim() !== ''));
  if (rows.length < 2 || rows[0].length < 2) return undefined;
  const [header, ...data] = rows;
  const width = header.length;
  if (data.slice(0, 10).filter((row) => row.length === width).length < TABLE_MIN_DATA_ROWS) return undefined;
  if (header.some((cell) => !HEADER_CELL.test(cell.trim()) || /^[ \t]/.test(cell))) return undefined;
  const columns = header.map((cell, i) => cell.trim() || `column_${i + 1}`);
  const dataRows = Math.max(0, lines.filter((line) => line.trim() !== '').length - 1);
  const first = columns
    .slice(0, TABLE_COLUMN_LIMIT)
    .flatMap((name, i) => (i < data[0].length ? [`${name}=${clip(data[0][i], 80)}`] : []));
  const kind = delimiter === ',' ? 'csv' : 'tsv';
  return {
    kind,
    title: kind === 'csv' ? 'CSV table output' : 'TSV table output',
    summary: [`${kind.toUpperCase()} table with ${dataRows} data rows and ${width} columns.`],
    structure: [
      `columns: ${columns.slice(0, TABLE_COLUMN_LIMIT).join(', ')}`,
      `first data row: ${first.join(' | ') || '(none)'}`,
    ],
    notable: [],
  };
}

export function looksCode(content: string): boolean {
  return CODE_HINTS.some((hint) => hint.test(content));
}

export function summarizeCode(content: string): Synopsis {
  const imports: string[] = [];
  const symbols: string[] = [];
  const lines = content.split(/\r\n|\r|\n/);
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    const stripped = line.trim();
    const imported = /^(?:from\s+(\S+)\s+import|import\s+(\S+))/.exec(stripped);
    if (imported) {
      imports.push(oneLine(imported[1] ?? imported[2] ?? '', 160));
      continue;
    }
    const symbol = /^(class|def|async\s+def|function|export\s+function|pub\s+fn|fn)\s+([A-Za-z_]\w*)/.exec(
      stripped,
    );
    if (symbol) symbols.push(oneLine(`${symbol[1]} ${symbol[2]}`, 180));
  }
  const structure = [`line count: ${lines.length}`];
  if (imports.length > 0) structure.push(`imports: ${imports.slice(0, CODE_IMPORT_LIMIT).join(', ')}`);
  return {
    kind: 'code',
    title: 'Code-like output',
    summary: [`Code-like text with ${lines.length} lines.`],
    structure,
    notable: symbols.slice(0, CODE_SYMBOL_LIMIT),
  };
}
