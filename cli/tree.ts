/**
 * What `subagents run` prints: the live progress tree (lead → its subagents), the ledger table and the
 * summary after the run. Pure: the caller polls the lead's queries, passes `now`, and writes the lines.
 */
import { stripVTControlCharacters, styleText } from 'node:util';
import stringWidth from 'string-width';
import type { PendingApproval } from '../contracts/approvals';
import type { PendingQuestion } from '../contracts/clarification';
import type { TaskEvent } from '../contracts/events';
import type { LeadCostUsd, LeadRunResult, LeadRunStatus, LeadTokenUsage } from '../contracts/lead';
import type { LedgerEntry } from '../contracts/ledger';
import type { TokenUsage } from '../contracts/messages';
import { STOP_REASON_LABELS, type LedgerStatus, type RunStopReason } from '../contracts/status';
import { ownEntry } from '../contracts/records';
import { formatUsd, groupThousands } from '../contracts/text';
import { pendingApprovalLines } from './approvals';
import { oneLine, pendingQuestionLines } from './questions';

/** A child's latest turns and cumulative usage, from its last `task_running` or terminal event. */
export interface TaskProgress {
  turns: number;
  token_usage?: TokenUsage;
}

export interface TreeSnapshot {
  run_id: string;
  lead: {
    /** From `lead_status`. */
    state: 'queued' | 'running' | 'finished';
    /** While queued for a run slot (`lead_runtime`): the counts when it joined the queue (it included). */
    admission?: { running: number; queued: number };
    /** From the run's result, once the client has it. */
    status?: LeadRunStatus;
    stop_reason?: RunStopReason;
    turns: number;
    token_usage?: LeadTokenUsage;
    /** The workflow's start and close times, as the client describes them. */
    started_at_ms: number;
    finished_at_ms?: number;
  };
  /** From `lead_ledger`; entries carried in from earlier runs (another run_id) are not drawn. */
  ledger: LedgerEntry[];
  /** Per task id, folded from `lead_events` by `foldTaskProgress`. */
  progress: Record<string, TaskProgress>;
  ui_url?: string;
  /** Questions (`ask_clarification`) the run waits on: each drawn with the command that answers it. */
  questions?: PendingQuestion[];
  /** Tool calls the run holds for approval: each drawn with the commands that approve and deny it. */
  approvals?: PendingApproval[];
  /** What the answer command needs besides the run id (`--address …` for a server only this process knows). */
  answer_flags?: string;
  /** Per task id: the child workflow's page, linked under a child that did not complete. */
  children_ui_urls?: Record<string, string>;
  /**
   * Per delegation path ('' for the lead): the newest line of text the agent streamed (docs/live.md), drawn
   * under its row while it runs.
   */
  newest_text?: Record<string, string>;
}

export interface TreeOptions {
  /** Epoch ms: the end of every elapsed time still running. */
  now: number;
  color: boolean;
  /** Terminal columns; no line but a link is wider. */
  width?: number;
}

export interface TableOptions {
  color: boolean;
  width?: number;
}

export interface SummaryOptions {
  color: boolean;
  ui_url?: string;
}

const DEFAULT_WIDTH = 100;
/** A custom agent's long name is cut here so descriptions keep room. */
const TYPE_MAX_WIDTH = 20;
/** Below this a description is no longer worth shrinking for; the line is clipped instead. */
const DESCRIPTION_MIN_WIDTH = 10;
const SEPARATOR = ' · ';
/** A wait for an execution slot shorter than this is not worth a word. */
const WAIT_SHOWN_MS = 1000;

const RUN_STOP_LABELS: Record<RunStopReason, string> = {
  ...STOP_REASON_LABELS,
  subagent_limit_capped: 'delegation limit',
  model_length_capped: 'model output length',
};

const STATUS_GLYPHS: Record<LedgerStatus, string> = {
  queued: '⋯',
  in_progress: '⠿',
  completed: '✓',
  failed: '✗',
  cancelled: '⊘',
  timed_out: '◷',
  polling_timed_out: '◌',
};

const STATUS_EXPLANATIONS: Record<LeadRunStatus, string> = {
  completed: 'the lead finished with an answer',
  failed: 'the run stopped on an error',
  cancelled: 'the run was cancelled before the lead finished',
  timed_out: 'the run ran out of time before the lead finished',
};

const STOP_EXPLANATIONS: Record<RunStopReason, string> = {
  token_capped:
    'the lead (or the run as a whole: token_budget) spent its token budget; the answer may be partial',
  cost_capped: 'the run spent its cost budget (token_budget.max_cost_usd); the answer may be partial',
  turn_capped: 'the lead used all its turns; the answer may be partial',
  loop_capped: 'the lead kept repeating the same tool calls and was stopped (loop_detection)',
  subagent_limit_capped: 'the run used all its delegations (subagents.max_total_per_run)',
  model_length_capped:
    "the model's last reply was cut at its output limit (models[].max_tokens); the answer may be incomplete",
};

// ---------------------------------------------------------------------------------------------------------
// Terminal text: colour, column widths, clipping

type Tone = 'green' | 'red' | 'yellow' | 'grey';

/** A run of text painted in one tone: lines are built from these so clipping never cuts a colour code. */
interface Segment {
  text: string;
  tone?: Tone;
}

function paint(segments: readonly Segment[], color: boolean): string {
  return segments
    .map(({ text, tone }) =>
      // The caller decides whether to colour (a terminal, NO_COLOR): no second check against a stream.
      color && tone && text !== '' ? styleText(tone, text, { validateStream: false }) : text,
    )
    .join('');
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * Columns `text` takes on a terminal: emoji (with skin tones, joined or flags) and CJK take two, combining
 * marks none, colour codes none.
 */
export function displayWidth(text: string): number {
  return stringWidth(stripVTControlCharacters(text));
}

/** Terminal rows `lines` take on a terminal `columns` wide, counting the ones that wrap. */
export function terminalRows(lines: readonly string[], columns: number): number {
  return lines.reduce((rows, line) => rows + Math.max(1, Math.ceil(displayWidth(line) / columns)), 0);
}

/** Keeps newlines and tabs, drops every other control character. */
function printable(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === '\n' || char === '\t' || (code >= 0x20 && (code < 0x7f || code > 0x9f))) out += char;
  }
  return out;
}

/** The longest head of `text` that fits `columns`, never splitting what a terminal shows as one character. */
function headColumns(text: string, columns: number): string {
  let out = '';
  let width = 0;
  for (const { segment } of graphemes.segment(text)) {
    const next = stringWidth(segment);
    if (width + next > columns) break;
    out += segment;
    width += next;
  }
  return out;
}

/** `text` cut to `columns`, ending in '…' when anything was cut. */
function truncate(text: string, columns: number): string {
  if (displayWidth(text) <= columns) return text;
  if (columns <= 0) return '';
  return `${headColumns(text, columns - 1)}…`;
}

function padEnd(text: string, columns: number): string {
  return text + ' '.repeat(Math.max(0, columns - displayWidth(text)));
}

function padStart(text: string, columns: number): string {
  return ' '.repeat(Math.max(0, columns - displayWidth(text))) + text;
}

/** Cuts a line of segments to `columns`, the ellipsis in the tone of the text it replaces. */
function clipSegments(segments: readonly Segment[], columns: number): Segment[] {
  const total = segments.reduce((sum, segment) => sum + displayWidth(segment.text), 0);
  if (total <= columns) return [...segments];
  const out: Segment[] = [];
  let room = Math.max(0, columns - 1);
  for (const segment of segments) {
    const width = displayWidth(segment.text);
    if (width < room) {
      out.push(segment);
      room -= width;
      continue;
    }
    out.push({ ...segment, text: `${headColumns(segment.text, room)}…` });
    break;
  }
  return out;
}

function line(segments: readonly Segment[], columns: number, color: boolean): string {
  return paint(clipSegments(segments, columns), color).trimEnd();
}

// ---------------------------------------------------------------------------------------------------------
// Shared wording

/** 850ms, 4.1s, 2m05s, 1h02m: counts up without ever rounding past what has elapsed. */
export function formatDuration(ms: number): string {
  const clamped = Math.max(0, Math.floor(ms));
  if (clamped < 1000) return `${clamped}ms`;
  if (clamped < 60_000) return `${Math.floor(clamped / 100) / 10}s`.replace(/^(\d+)s$/, '$1.0s');
  const seconds = Math.floor(clamped / 1000);
  const two = (value: number) => String(value).padStart(2, '0');
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${two(seconds % 60)}s`;
  return `${Math.floor(seconds / 3600)}h${two(Math.floor(seconds / 60) % 60)}m`;
}

function plural(count: number, word: string): string {
  return `${groupThousands(count)} ${word}${count === 1 ? '' : 's'}`;
}

function tokens(usage: TokenUsage | undefined): string | undefined {
  return usage === undefined ? undefined : `${groupThousands(usage.total_tokens)} tok`;
}

function statusTone(status: LedgerStatus, capped: boolean): Tone {
  switch (status) {
    case 'in_progress':
      return 'yellow';
    case 'queued':
      return 'grey';
    case 'completed':
      return capped ? 'yellow' : 'green';
    case 'cancelled':
      return 'grey';
    case 'failed':
    case 'timed_out':
    case 'polling_timed_out':
      return 'red';
  }
}

function statusWord(status: LedgerStatus): string {
  return status === 'in_progress' ? 'running' : status.replace(/_/g, ' ');
}

function capped(stopReason: RunStopReason | undefined): string {
  return stopReason === undefined ? '' : ` (capped: ${RUN_STOP_LABELS[stopReason]})`;
}

function firstLine(text: string | undefined): string | undefined {
  const found = text?.split('\n').find((candidate) => candidate.trim() !== '');
  return found === undefined ? undefined : oneLine(found);
}

// ---------------------------------------------------------------------------------------------------------
// The live tree

/**
 * Folds new `lead_events` into the per-task progress: a `task_running` or terminal event replaces the task's
 * turns and usage (both are cumulative), so polling with an `after_seq` cursor loses nothing.
 */
export function foldTaskProgress(
  progress: Readonly<Record<string, TaskProgress>>,
  events: readonly TaskEvent[],
): Record<string, TaskProgress> {
  // No prototype: a task id such as `__proto__` stays an ordinary key.
  const next: Record<string, TaskProgress> = Object.assign(Object.create(null), progress);
  for (const event of events) {
    if (
      event.type === 'task_started' ||
      event.type === 'task_queued' ||
      event.type === 'batch_started' ||
      event.type === 'batch_finished'
    )
      continue;
    // A question's events carry no progress.
    if (!('turns' in event)) continue;
    next[event.task_id] = {
      turns: event.turns,
      ...(event.token_usage !== undefined && { token_usage: event.token_usage }),
    };
  }
  return next;
}

interface ChildRow {
  entry: LedgerEntry;
  tone: Tone;
  type: string;
  description: string;
  details: Segment[];
}

/** A batch entry's items in words: `4 completed, 1 failed of 5 items` (`5 items` while none has ended). */
export function batchCountsText(entry: LedgerEntry): string {
  const { total, completed = 0, failed = 0, cancelled = 0 } = entry.batch ?? { total: 0 };
  const ended = [
    [completed, 'completed'],
    [failed, 'failed'],
    [cancelled, 'cancelled'],
  ]
    .filter(([count]) => (count as number) > 0)
    .map(([count, word]) => `${groupThousands(count as number)} ${word}`);
  const items = plural(total, 'item');
  return ended.length === 0 ? items : `${ended.join(', ')} of ${items}`;
}

function childRow(entry: LedgerEntry, progress: TaskProgress | undefined, now: number): ChildRow {
  const running = entry.status === 'in_progress' || entry.status === 'queued';
  const tone = statusTone(entry.status, entry.stop_reason !== undefined);
  const usage = running
    ? (progress?.token_usage ?? entry.token_usage)
    : (entry.token_usage ?? progress?.token_usage);
  // A child's time counts from its start; the wait for an execution slot before it is shown on its own.
  const created = Date.parse(entry.created_at);
  const started = entry.started_at === undefined ? created : Date.parse(entry.started_at);
  const ended = running ? now : Date.parse(entry.updated_at);
  const waited = started - created;
  const duration = Number.isNaN(started) || Number.isNaN(ended) ? undefined : formatDuration(ended - started);
  const batch = entry.kind === 'batch';
  // A batch's items are followed in the batch itself: its row shows their counts.
  const rest = (
    batch
      ? [batchCountsText(entry), duration]
      : [
          progress === undefined ? undefined : plural(progress.turns, 'turn'),
          tokens(usage),
          entry.cost_usd === undefined ? undefined : formatUsd(entry.cost_usd),
          duration,
          waited >= WAIT_SHOWN_MS ? `waited ${formatDuration(waited)}` : undefined,
        ]
  ).filter((part): part is string => part !== undefined);
  return {
    entry,
    tone,
    type: truncate(oneLine(entry.subagent_type), TYPE_MAX_WIDTH),
    description: `${batch ? 'batch: ' : ''}${oneLine(entry.description)}`,
    details: [
      { text: statusWord(entry.status) + capped(entry.stop_reason), tone },
      { text: rest.map((part) => SEPARATOR + part).join('') },
    ],
  };
}

/** `position 4, 100 running`: a queued run's place when it joined the queue. */
export function queuePlace(admission: { running: number; queued: number }): string {
  return `position ${groupThousands(admission.queued)}, ${groupThousands(admission.running)} running`;
}

function leadLine(lead: TreeSnapshot['lead'], now: number): Segment[] {
  const finished = lead.state === 'finished';
  const queued = lead.state === 'queued';
  const word = finished ? (lead.status ?? 'finished') : queued ? 'queued' : 'running';
  const capReached = lead.stop_reason !== undefined;
  let tone: Tone | undefined;
  if (!finished) tone = statusTone('in_progress', capReached);
  else if (lead.status !== undefined) tone = statusTone(lead.status, capReached);
  let turns: string | undefined;
  if (finished) turns = plural(lead.turns, 'turn');
  else if (lead.turns > 0) turns = `turn ${groupThousands(lead.turns)}`;
  const place = queued && lead.admission ? queuePlace(lead.admission) : undefined;
  const rest = [
    place,
    turns,
    tokens(lead.token_usage?.lead),
    formatDuration((lead.finished_at_ms ?? now) - lead.started_at_ms),
  ].filter((part): part is string => part !== undefined);
  return [
    { text: 'lead  ' },
    { text: word + capped(lead.stop_reason), tone },
    { text: rest.map((part) => SEPARATOR + part).join('') },
  ];
}

/**
 * The progress tree: the run and its link, the lead, then one aligned row per subagent of this run. Every
 * line fits `width` except the links, which are never cut (a cut link cannot be opened); `terminalRows`
 * counts the rows they wrap onto.
 */
export function renderTree(snapshot: TreeSnapshot, options: TreeOptions): string[] {
  const width = options.width ?? DEFAULT_WIDTH;
  const rows = snapshot.ledger
    .filter((entry) => entry.run_id === snapshot.run_id)
    .map((entry) => childRow(entry, ownEntry(snapshot.progress, entry.id), options.now));
  const widest = (values: number[]) => values.reduce((max, value) => Math.max(max, value), 0);
  const typeWidth = widest(rows.map((row) => displayWidth(row.type)));
  const detailsWidth = widest(rows.map((row) => displayWidth(row.details.map((s) => s.text).join(''))));
  // '├─ ' + glyph + ' ' + type + '  ' + description + '  ' + details
  const room = width - (3 + 2 + typeWidth + 2 + 2) - detailsWidth;
  const descriptionWidth = Math.min(
    widest(rows.map((row) => displayWidth(row.description))),
    Math.max(DESCRIPTION_MIN_WIDTH, room),
  );

  const lines = [
    `run ${oneLine(snapshot.run_id)}${snapshot.ui_url === undefined ? '' : `  ${snapshot.ui_url}`}`,
    line(leadLine(snapshot.lead, options.now), width, options.color),
  ];
  const newest = (path: string, indent: string) => {
    const text = ownEntry(snapshot.newest_text, path);
    if (text !== undefined)
      lines.push(line([{ text: `${indent}› ${oneLine(text)}`, tone: 'grey' }], width, options.color));
  };
  if (snapshot.lead.state === 'running') newest('', rows.length > 0 ? '│  ' : '   ');
  rows.forEach((row, index) => {
    const last = index === rows.length - 1;
    const segments: Segment[] = [
      { text: last ? '└─ ' : '├─ ' },
      { text: STATUS_GLYPHS[row.entry.status], tone: row.tone },
      { text: ` ${padEnd(row.type, typeWidth)}  ` },
      { text: `${padEnd(truncate(row.description, descriptionWidth), descriptionWidth)}  ` },
      ...row.details,
    ];
    lines.push(line(segments, width, options.color));
    if (row.entry.status === 'in_progress') newest(row.entry.id, `${last ? '   ' : '│  '}  `);
    const link = ownEntry(snapshot.children_ui_urls, row.entry.id);
    const quiet = ['queued', 'in_progress', 'completed'].includes(row.entry.status);
    // A refusal at admission started no child: there is no page to open.
    if (link !== undefined && !quiet && !row.entry.admission_failure) {
      lines.push(`${last ? '   ' : '│  '}  ${link}`);
    }
  });
  // Never cut: the command must stay whole to be copied.
  lines.push(...pendingQuestionLines(snapshot.run_id, snapshot.questions, snapshot.answer_flags));
  lines.push(...pendingApprovalLines(snapshot.run_id, snapshot.approvals, snapshot.answer_flags));
  return lines;
}

// ---------------------------------------------------------------------------------------------------------
// After the run

/**
 * The delegation ledger as a table: id, type, status, stop reason, tokens, their cost (when any entry was
 * priced) and the result's first line.
 */
export function renderLedgerTable(ledger: readonly LedgerEntry[], options: TableOptions): string[] {
  if (ledger.length === 0) return ['(no delegations)'];
  const width = options.width ?? DEFAULT_WIDTH;
  const priced = ledger.some((entry) => entry.cost_usd !== undefined);
  const header = ['ID', 'TYPE', 'STATUS', 'STOP REASON', 'TOKENS', ...(priced ? ['COST'] : [])];
  const cells = ledger.map((entry) => [
    oneLine(entry.id),
    truncate(oneLine(entry.subagent_type), TYPE_MAX_WIDTH),
    entry.status,
    entry.stop_reason ?? '-',
    entry.token_usage === undefined ? '-' : groupThousands(entry.token_usage.total_tokens),
    ...(priced ? [entry.cost_usd === undefined ? '-' : formatUsd(entry.cost_usd)] : []),
  ]);
  const widths = header.map((title, column) =>
    Math.max(displayWidth(title), ...cells.map((row) => displayWidth(row[column]))),
  );
  const fixed = widths.reduce((sum, columnWidth) => sum + columnWidth + 2, 0);
  const resultWidth = Math.max(DESCRIPTION_MIN_WIDTH, width - fixed);
  const columns = (row: string[]) =>
    row.map((cell, column) =>
      column >= 4 ? `${padStart(cell, widths[column])}  ` : `${padEnd(cell, widths[column])}  `,
    );

  const lines = [line([...columns(header).map((text) => ({ text })), { text: 'RESULT' }], width, false)];
  ledger.forEach((entry, index) => {
    const [id, type, status, stopReason, ...numberCells] = columns(cells[index]);
    const brief = entry.kind === 'batch' ? `batch: ${batchCountsText(entry)}` : firstLine(entry.result_brief);
    const error = firstLine(entry.error);
    const result = brief ?? (error === undefined ? '' : `error: ${error}`);
    const tone = statusTone(entry.status, entry.stop_reason !== undefined);
    const segments: Segment[] = [
      { text: id + type },
      { text: entry.status, tone },
      { text: status.slice(entry.status.length) + stopReason + numberCells.join('') },
      { text: truncate(result, resultWidth) },
    ];
    lines.push(line(segments, width, options.color));
  });
  return lines;
}

function usageLine(usage: LeadTokenUsage): string {
  const part = (name: string, value: TokenUsage | undefined) =>
    `${name} ${value === undefined ? 'not reported' : `${groupThousands(value.total_tokens)}${cacheNote(value)}`}`;
  if (usage.lead === undefined && usage.subagents === undefined && usage.total === undefined) {
    return 'not reported by the provider';
  }
  return [part('lead', usage.lead), part('subagents', usage.subagents), part('total', usage.total)].join(
    SEPARATOR,
  );
}

/** `lead $0.5000 · subagents $2.0000 · total $2.5000`: a part none of whose calls was priced is not priced. */
export function costLine(cost: LeadCostUsd): string {
  const part = (name: string, usd: number | undefined) =>
    `${name} ${usd === undefined ? 'not priced' : formatUsd(usd)}`;
  return [part('lead', cost.lead), part('subagents', cost.subagents), part('total', cost.total)].join(
    SEPARATOR,
  );
}

function delegationsLine(result: LeadRunResult): string {
  const own = result.ledger.filter((entry) => entry.run_id === result.run_id);
  const entries = own.filter((entry) => entry.kind !== 'batch');
  const batches = own.filter((entry) => entry.kind === 'batch');
  const counts = new Map<LedgerStatus, number>();
  for (const entry of entries) counts.set(entry.status, (counts.get(entry.status) ?? 0) + 1);
  const byStatus = [...counts].map(([status, count]) => `${count} ${statusWord(status)}`).join(', ');
  const batchPart = batches
    .map(
      (entry) =>
        `${SEPARATOR}batch ${oneLine(entry.id)} ${statusWord(entry.status)} (${batchCountsText(entry)})`,
    )
    .join('');
  return `${plural(result.turns, 'lead turn')}${SEPARATOR}${plural(entries.length, 'delegation')}${
    entries.length === 0 ? '' : ` (${byStatus})`
  }${batchPart}`;
}

/** The run's outcome in words: status and stop reason explained, usage, the link, then the final answer. */
export function renderSummary(result: LeadRunResult, options: SummaryOptions): string[] {
  const tone = statusTone(result.status, result.stop_reason !== undefined);
  const statusText =
    result.status === 'completed' && result.stop_reason !== undefined
      ? 'the lead stopped at a limit'
      : STATUS_EXPLANATIONS[result.status];
  const rows: [string, Segment[]][] = [
    ['run', [{ text: oneLine(result.run_id) }]],
    ['status', [{ text: result.status, tone }, { text: `: ${statusText}` }]],
  ];
  if (result.stop_reason !== undefined) {
    rows.push([
      'stop reason',
      [{ text: result.stop_reason, tone: 'yellow' }, { text: `: ${STOP_EXPLANATIONS[result.stop_reason]}` }],
    ]);
  }
  const error = result.error === undefined ? undefined : oneLine(result.error);
  if (error !== undefined && error !== '') rows.push(['error', [{ text: error, tone: 'red' }]]);
  rows.push(['work', [{ text: delegationsLine(result) }]]);
  rows.push(['tokens', [{ text: usageLine(result.token_usage) }]]);
  if (result.cost_usd) rows.push(['cost', [{ text: costLine(result.cost_usd) }]]);
  if (options.ui_url !== undefined) rows.push(['Web UI', [{ text: options.ui_url }]]);

  const labelWidth = rows.reduce((max, [label]) => Math.max(max, label.length), 0);
  const lines = rows.map(([label, segments]) =>
    paint([{ text: `${padEnd(label, labelWidth)}  ` }, ...segments], options.color),
  );
  const answer = printable(result.final_output).trimEnd();
  lines.push('', answer === '' ? '(no answer)' : answer);
  return lines.flatMap((text) => text.split('\n'));
}

/** What the provider's prompt cache served and took of these tokens' input, where it reported that. */
export function cacheNote(usage: TokenUsage): string {
  const parts = [
    usage.cache_read_tokens !== undefined && `cache read ${groupThousands(usage.cache_read_tokens)}`,
    usage.cache_write_tokens !== undefined && `written ${groupThousands(usage.cache_write_tokens)}`,
  ].filter(Boolean);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
}
