/**
 * The delegation ledger as pure functions over plain JSON: each update returns a new array, so the lead
 * keeps it in workflow state, carries it across continue-as-new and answers queries with it as is.
 */
import {
  LEDGER_DESCRIPTION_MAX_CHARS,
  type LedgerBatchCounts,
  type LedgerEntry,
} from '../../contracts/ledger';
import { roundUsd } from '../../contracts/budget';
import type { LeadCostUsd, LeadTokenUsage } from '../../contracts/lead';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../../contracts/messages';
import { STOP_REASON_LABELS, type LedgerStatus } from '../../contracts/status';
import { RESULT_BRIEF_MAX_CHARS, type SubagentResult } from '../../contracts/subagent';
import { capText, truncateHeadTail } from '../../contracts/text';
import { sha256Hex } from '../digest';

export interface EntryStart {
  /** The tool_call_id of the `task` call. */
  id: string;
  runId: string;
  description: string;
  subagentType: string;
  /** The child workflow's id. */
  workflowId: string;
  /** The effective model the child runs with, when the lead knows it up front. */
  modelName?: string;
  /** `queued` when the delegation first waits for an execution slot (default `in_progress`). */
  status?: 'queued' | 'in_progress';
}

/** What a `task_running` snapshot tells the ledger. */
export interface EntryProgress {
  modelName?: string;
  /** Cumulative for the child, never a delta. */
  tokenUsage?: TokenUsage;
  /** Cumulative too: USD of its priced calls so far. */
  costUsd?: number;
}

export function isTerminal(status: LedgerStatus): boolean {
  return status !== 'in_progress' && status !== 'queued';
}

function capDescription(description: string): string {
  if (description.length <= LEDGER_DESCRIPTION_MAX_CHARS) return description;
  return `${capText(description, LEDGER_DESCRIPTION_MAX_CHARS - 1).text}…`;
}

/**
 * Adds a `queued` or `in_progress` entry. A second start for an id already in the ledger leaves it unchanged: a task
 * call starts one child, and a finished entry is never reset.
 */
export function startEntry(ledger: readonly LedgerEntry[], start: EntryStart, now: string): LedgerEntry[] {
  if (ledger.some((entry) => entry.id === start.id)) return [...ledger];
  const entry: LedgerEntry = {
    id: start.id,
    run_id: start.runId,
    description: capDescription(start.description),
    subagent_type: start.subagentType,
    status: start.status ?? 'in_progress',
    ...(start.modelName !== undefined && { model_name: start.modelName }),
    created_at: now,
    updated_at: now,
    workflow_id: start.workflowId,
  };
  return [...ledger, entry];
}

/** Adds an `in_progress` entry for a batch a `batch_task` call started (unchanged when the id is there). */
export function startBatchEntry(
  ledger: readonly LedgerEntry[],
  start: Omit<EntryStart, 'status'> & { items: number },
  now: string,
): LedgerEntry[] {
  if (ledger.some((entry) => entry.id === start.id)) return [...ledger];
  const [entry] = startEntry([], start, now);
  return [...ledger, { ...entry, kind: 'batch', batch: { total: start.items } }];
}

/** How a batch ended: its status and counts, or the failure of its workflow. */
export interface BatchEnd {
  status: 'completed' | 'cancelled' | 'failed';
  counts: LedgerBatchCounts;
  error?: string;
}

/** Records a batch's end; an entry already terminal keeps its first outcome. */
export function applyBatchEnd(
  ledger: readonly LedgerEntry[],
  id: string,
  end: BatchEnd,
  now: string,
): LedgerEntry[] {
  return replaceEntry(ledger, id, (entry) => ({
    ...entry,
    status: end.status,
    batch: end.counts,
    ...(end.error !== undefined && { error: truncateHeadTail(end.error, RESULT_BRIEF_MAX_CHARS) }),
    updated_at: now,
  }));
}

function replaceEntry(
  ledger: readonly LedgerEntry[],
  id: string,
  update: (entry: LedgerEntry) => LedgerEntry,
): LedgerEntry[] {
  const index = ledger.findIndex((entry) => entry.id === id);
  if (index < 0) {
    const known = ledger.map((entry) => entry.id).join(', ') || 'none';
    throw new Error(`ledger has no entry for task call ${JSON.stringify(id)} (entries: ${known})`);
  }
  const entry = ledger[index];
  // The first terminal outcome stands: a late progress snapshot or a second result never overwrites it.
  if (isTerminal(entry.status)) return [...ledger];
  return ledger.map((existing, i) => (i === index ? update(existing) : existing));
}

/** Updates a running entry's model and cumulative usage; ignored once the entry is terminal. */
export function applyProgress(
  ledger: readonly LedgerEntry[],
  id: string,
  progress: EntryProgress,
  now: string,
): LedgerEntry[] {
  return replaceEntry(ledger, id, (entry) => ({
    ...entry,
    ...(progress.modelName !== undefined && { model_name: progress.modelName }),
    ...(progress.tokenUsage !== undefined && { token_usage: progress.tokenUsage }),
    ...(progress.costUsd !== undefined && { cost_usd: progress.costUsd }),
    updated_at: now,
  }));
}

/** Marks an entry as waiting for an execution slot (`queued`) or as running (`in_progress`). */
export function applyAdmission(
  ledger: readonly LedgerEntry[],
  id: string,
  status: 'queued' | 'in_progress',
  now: string,
): LedgerEntry[] {
  return replaceEntry(ledger, id, (entry) =>
    entry.status === status
      ? entry
      : { ...entry, status, ...(status === 'in_progress' && { started_at: now }), updated_at: now },
  );
}

/** Records a child's result; an entry that is already terminal keeps its first outcome. */
export function applyResult(
  ledger: readonly LedgerEntry[],
  id: string,
  result: SubagentResult,
  now: string,
): LedgerEntry[] {
  const brief = result.result_brief ?? result.result;
  const sha256 = result.result_sha256 ?? (result.result !== undefined ? sha256Hex(result.result) : undefined);
  const modelName = result.model_name;
  const tokenUsage = result.token_usage;
  return replaceEntry(ledger, id, (entry) => ({
    ...entry,
    status: result.status,
    ...(brief !== undefined && { result_brief: truncateHeadTail(brief, RESULT_BRIEF_MAX_CHARS) }),
    ...(sha256 !== undefined && { result_sha256: sha256 }),
    ...(result.stop_reason !== undefined && { stop_reason: result.stop_reason }),
    ...(result.admission_failure === true && { admission_failure: true as const }),
    ...(result.error !== undefined && { error: truncateHeadTail(result.error, RESULT_BRIEF_MAX_CHARS) }),
    ...(modelName !== undefined && { model_name: modelName }),
    ...(tokenUsage !== undefined && { token_usage: tokenUsage }),
    ...(result.cost_usd !== undefined && { cost_usd: result.cost_usd }),
    updated_at: now,
  }));
}

/** Delegations made by this run: what `max_total_per_run` is checked against (batches are not counted). */
export function countForRun(ledger: readonly LedgerEntry[], runId: string): number {
  return ledger.filter((entry) => entry.run_id === runId && entry.kind !== 'batch').length;
}

/** This run's entries by status, with every status present. */
export function countByStatus(ledger: readonly LedgerEntry[], runId: string): Record<LedgerStatus, number> {
  const counts: Record<LedgerStatus, number> = {
    queued: 0,
    in_progress: 0,
    completed: 0,
    failed: 0,
    cancelled: 0,
    timed_out: 0,
    polling_timed_out: 0,
  };
  for (const entry of ledger) if (entry.run_id === runId) counts[entry.status] += 1;
  return counts;
}

/** The lead's usage beside this run's children's; a part no provider reported stays absent. */
export function leadTokenUsage(
  ledger: readonly LedgerEntry[],
  runId: string,
  lead: TokenUsage | undefined,
): LeadTokenUsage {
  let subagents: TokenUsage | undefined;
  for (const entry of ledger) {
    if (entry.run_id === runId && entry.token_usage !== undefined) {
      subagents = addUsage(subagents ?? ZERO_USAGE, entry.token_usage);
    }
  }
  const total =
    lead === undefined && subagents === undefined ? undefined : addUsage(lead ?? ZERO_USAGE, subagents);
  return {
    ...(lead !== undefined && { lead }),
    ...(subagents !== undefined && { subagents }),
    ...(total !== undefined && { total }),
  };
}

/** What the lead's and this run's children's priced calls cost; absent when none was priced. */
export function leadCostUsd(
  ledger: readonly LedgerEntry[],
  runId: string,
  lead: number | undefined,
): LeadCostUsd | undefined {
  let subagents: number | undefined;
  for (const entry of ledger) {
    if (entry.run_id === runId && entry.cost_usd !== undefined) {
      subagents = roundUsd((subagents ?? 0) + entry.cost_usd);
    }
  }
  if (lead === undefined && subagents === undefined) return undefined;
  return {
    ...(lead !== undefined && { lead }),
    ...(subagents !== undefined && { subagents }),
    total: roundUsd((lead ?? 0) + (subagents ?? 0)),
  };
}

// ---------------------------------------------------------------------------------------------------------
// The "work already delegated" block of the lead's context

const LEDGER_HEADER =
  'Work already delegated (newest first). Do not delegate it again: reuse these results, and delegate ' +
  'again only to retry a failure or to do what is still missing.';

/** DeerFlow's wording: the lead reuses a capped completion knowingly, not taking it for a clean one. */
export const CAPPED_GUIDANCE =
  'hit a guardrail cap with a partial result; reuse it, retry tighter, or raise the per-agent budget ' +
  '(`max_turns` / `token_budget`).';

/** Below this many characters of result or error per entry, older entries are left out instead. */
const MIN_DETAIL_CHARS = 200;

/** One line: whitespace runs (newlines included) become single spaces. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** An entry with its texts already on one line, so fitting the block to its budget only shortens them. */
interface PreparedEntry {
  entry: LedgerEntry;
  description: string;
  brief: string;
  error: string;
}

function prepare(entry: LedgerEntry): PreparedEntry {
  return {
    entry,
    description: JSON.stringify(oneLine(entry.description)),
    brief: oneLine(entry.result_brief ?? ''),
    error: oneLine(entry.error ?? ''),
  };
}

/** Head and tail kept; the cut's marker is put on the same line. */
function shorten(flat: string, maxChars: number): string {
  return flat.length <= maxChars ? flat : oneLine(truncateHeadTail(flat, maxChars));
}

/** A batch's line: its id for the batch tools, its counts, and what to do next. */
function batchLine({ entry, description, ...texts }: PreparedEntry, detailChars: number): string {
  const { total, completed = 0, failed = 0, cancelled = 0 } = entry.batch ?? { total: 0 };
  const head = `- [${entry.status}] batch ${entry.id}: ${total} ${entry.subagent_type} items ${description}`;
  if (entry.status === 'in_progress') {
    return `${head} — still running; follow it with batch_status, read answers with read_batch_result.`;
  }
  const counts = `${completed} completed, ${failed} failed, ${cancelled} cancelled`;
  const error = shorten(texts.error, detailChars);
  return `${head} — ${counts}.${error !== '' ? ` Error: ${error}` : ''} Read answers with read_batch_result.`;
}

function entryLine(prepared: PreparedEntry, detailChars: number): string {
  if (prepared.entry.kind === 'batch') return batchLine(prepared, detailChars);
  const { entry, description, ...texts } = prepared;
  const capped = entry.stop_reason === undefined ? '' : `, capped: ${STOP_REASON_LABELS[entry.stop_reason]}`;
  const head = `- [${entry.status}${capped}] ${entry.subagent_type} ${description}`;
  const brief = shorten(texts.brief, detailChars);
  const error = shorten(texts.error, detailChars);
  const parts: string[] = [];
  if (entry.status === 'in_progress') parts.push('still running.');
  else if (entry.status === 'queued') parts.push('waiting for an execution slot.');
  else if (entry.status === 'completed') {
    if (entry.stop_reason !== undefined) {
      parts.push(CAPPED_GUIDANCE);
      if (brief !== '') parts.push(`Partial result: ${brief}`);
    } else if (brief !== '') parts.push(`Result: ${brief}`);
  } else {
    if (error !== '') parts.push(`Error: ${error}`);
    if (brief !== '') parts.push(`Partial result: ${brief}`);
  }
  return parts.length === 0 ? head : `${head} — ${parts.join(' ')}`;
}

function renderBlock(newestFirst: readonly PreparedEntry[], shown: number, detailChars: number): string {
  const lines = [LEDGER_HEADER];
  for (const prepared of newestFirst.slice(0, shown)) lines.push(entryLine(prepared, detailChars));
  const omitted = newestFirst.length - shown;
  if (omitted > 0) lines.push(`(${omitted} more ${omitted === 1 ? 'delegation' : 'delegations'} not shown.)`);
  return lines.join('\n');
}

/** The largest value in [low, high] that `fits` (which must hold below any value it holds for), or undefined. */
function largestFitting(low: number, high: number, fits: (value: number) => boolean): number | undefined {
  if (low > high || !fits(low)) return undefined;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/**
 * The "work already delegated" block for the lead's context, at most `maxChars` long. Results and errors
 * are shortened first (down to MIN_DETAIL_CHARS); when that is not enough the oldest entries are left out
 * and counted. An empty ledger, or a budget too small for even the header, gives an empty string.
 */
export function renderLedgerForPrompt(entries: readonly LedgerEntry[], maxChars: number): string {
  if (entries.length === 0) return '';
  const newestFirst = [...entries].reverse().map(prepare);
  const fits = (shown: number, detailChars: number) =>
    renderBlock(newestFirst, shown, detailChars).length <= maxChars;
  // As many entries as fit with a useful detail each, the detail as long as the room allows.
  const shown = largestFitting(1, newestFirst.length, (count) => fits(count, MIN_DETAIL_CHARS));
  if (shown !== undefined) {
    const detailChars = largestFitting(MIN_DETAIL_CHARS, RESULT_BRIEF_MAX_CHARS, (chars) =>
      fits(shown, chars),
    );
    return renderBlock(newestFirst, shown, detailChars ?? MIN_DETAIL_CHARS);
  }
  // Not even one: the newest entry with whatever detail still fits.
  const newestDetail = largestFitting(0, MIN_DETAIL_CHARS, (chars) => fits(1, chars));
  if (newestDetail !== undefined) return renderBlock(newestFirst, 1, newestDetail);
  return fits(0, 0) ? renderBlock(newestFirst, 0, 0) : '';
}
