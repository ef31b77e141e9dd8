/**
 * `subagents report`'s page, built from what the command read: one self-contained HTML file (inline CSS and
 * script, nothing fetched when it is viewed) with a timeline of the lead and every subagent, the ledger as a
 * table and each subagent's step log. Everything a run holds is untrusted text (descriptions, prompts,
 * errors, model output): it is escaped here, and the page's policy lets only its own script run.
 */
import { createHash } from 'node:crypto';
import type { LeadCostUsd, LeadTokenUsage } from '../contracts/lead';
import type { TokenUsage } from '../contracts/messages';
import type { LedgerBatchCounts, LedgerEntry } from '../contracts/ledger';
import type { SubagentStep } from '../contracts/steps';
import { stepLines } from './steps-command';
import { formatUsd } from '../contracts/text';
import { batchCountsText, cacheNote, costLine, formatDuration } from './tree';

/** How a bar is coloured: completed green, completed with a stop reason amber, failed red, … */
export type BarTone = 'completed' | 'capped' | 'failed' | 'cancelled' | 'timed-out' | 'running';

export const TONE_COLOURS: Record<BarTone, string> = {
  completed: '#2e9e44',
  capped: '#e0a100',
  failed: '#d93025',
  cancelled: '#9aa0a6',
  'timed-out': '#f57c00',
  running: '#1a73e8',
};

/** The tone of a status (a ledger's, a lead's, or Temporal's lower-cased), with or without a stop reason. */
export function barTone(status: string, stopReason?: string): BarTone {
  switch (status) {
    case 'completed':
      return stopReason ? 'capped' : 'completed';
    case 'failed':
    case 'terminated':
      return 'failed';
    case 'cancelled':
    case 'canceled':
      return 'cancelled';
    case 'timed_out':
    case 'polling_timed_out':
      return 'timed-out';
    default:
      return 'running';
  }
}

/** One row of the timeline: the lead, a delegation, a nested one, or a batch as a whole. */
export interface ReportBar {
  kind: 'lead' | 'task' | 'batch';
  /** 0 for the lead, 1 for its delegations, 2 for theirs… */
  depth: number;
  workflow_id: string;
  type: string;
  description: string;
  status: string;
  stop_reason?: string;
  error?: string;
  /** ISO 8601: when it was asked for, when it waited for a slot before `started_at`. */
  queued_at?: string;
  started_at: string;
  /** Absent while it runs. */
  ended_at?: string;
  tokens?: number;
  turns?: number;
  batch?: LedgerBatchCounts;
  ui_url?: string;
}

/** A subagent's step log, from its history (closed) or its query (open). */
export interface ReportStepLog {
  workflow_id: string;
  type: string;
  description: string;
  tone: BarTone;
  prompt?: string;
  steps: SubagentStep[];
  /** What the record lacks, one sentence each. */
  missing: string[];
  /** How it ended, in one line (absent while it runs). */
  outcome?: string;
  /** Why the steps could not be read, when they could not. */
  unavailable?: string;
}

export interface RunReport {
  run_id: string;
  /** ISO 8601. */
  generated_at: string;
  open: boolean;
  status: string;
  stop_reason?: string;
  error?: string;
  prompt?: string;
  final_output?: string;
  turns?: number;
  token_usage?: LeadTokenUsage;
  /** What those tokens cost, when any call was priced. */
  cost_usd?: LeadCostUsd;
  ui_url?: string;
  /** The lead first, each delegation followed by its own. */
  bars: ReportBar[];
  /** Undefined when the run ended without a result (its ledger is not kept then). */
  ledger?: LedgerEntry[];
  step_logs: ReportStepLog[];
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text as HTML text or attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** A link to a page over http(s) only: a URL from a config must not become script. */
function link(url: string | undefined, text: string): string {
  if (!url || !/^https?:\/\//i.test(url)) return '';
  return `<a class="ui-link" href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">${escapeHtml(text)}</a>`;
}

const number = (n: number) => n.toLocaleString('en-US');

/** Element id of a workflow's step log. */
const logId = (workflowId: string) =>
  `log-${createHash('sha256').update(workflowId).digest('hex').slice(0, 12)}`;

const CSS = `
:root { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #202124; }
body { margin: 24px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; }
.facts { color: #5f6368; margin: 0 0 8px; } .facts span + span::before { content: "·"; display: inline-block; margin: 0 .4em; }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; font: 12px/1.4 ui-monospace, monospace; }
.error { color: #d93025; }
.tone { display: inline-block; padding: 0 6px; border-radius: 3px; color: #fff; }
${Object.entries(TONE_COLOURS)
  .map(([tone, colour]) => `.bar--${tone} .bar, .tone--${tone} { background: ${colour}; }`)
  .join('\n')}
.timeline { border: 1px solid #dadce0; border-radius: 4px; }
.row { display: grid; grid-template-columns: minmax(260px, 38%) 1fr; border-top: 1px solid #f1f3f4; }
.row:first-child { border-top: 0; }
.label { padding: 6px 8px; min-width: 0; }
.label .name { font-weight: 600; overflow-wrap: anywhere; }
.label .meta { color: #5f6368; font-size: 12px; }
.label .meta > * + *::before { content: "·"; display: inline-block; margin: 0 .4em; color: #5f6368; }
.track { position: relative; background: #fafafa; border-left: 1px solid #dadce0; min-height: 36px; }
.bar { position: absolute; top: 9px; height: 18px; min-width: 3px; border-radius: 3px; }
.wait { position: absolute; top: 16px; height: 4px; background: #c6cacf; }
.bar--running .bar { background-image: repeating-linear-gradient(45deg, transparent 0 6px, rgba(255,255,255,.3) 6px 12px); }
.axis .track { min-height: 22px; background: none; }
.tick { position: absolute; top: 2px; font-size: 11px; color: #5f6368; border-left: 1px solid #dadce0; padding-left: 3px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #eceff1; }
td.num, th.num { text-align: right; }
td .brief { max-height: 8em; overflow: auto; }
details { border: 1px solid #dadce0; border-radius: 4px; margin: 6px 0; padding: 4px 8px; }
summary { cursor: pointer; }
.step--tool pre { color: #3c4043; } .step--error pre { color: #d93025; }
`;

/** The page's only script: a link to a step log opens it. Its hash is the one script the policy allows. */
const SCRIPT = `
function openLog() {
  var el = location.hash && document.getElementById(location.hash.slice(1));
  if (el && el.tagName === 'DETAILS') el.open = true;
}
window.addEventListener('hashchange', openLog);
openLog();
`;

const POLICY =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; " +
  `script-src 'sha256-${createHash('sha256').update(SCRIPT).digest('base64')}'`;

/** The time span the axis covers: the lead's start to the last end (now, while something runs). */
function span(report: RunReport): { from: number; to: number } {
  const starts = report.bars.map((bar) => Date.parse(bar.queued_at ?? bar.started_at));
  const ends = report.bars.map((bar) => Date.parse(bar.ended_at ?? report.generated_at));
  const from = Math.min(...starts);
  const to = Math.max(...ends, from + 1);
  return { from, to };
}

/** A tick every 1, 2 or 5 × 10ⁿ seconds, about six over the span. */
function tickStep(ms: number): number {
  const rough = ms / 6;
  const magnitude = 10 ** Math.floor(Math.log10(Math.max(rough, 1)));
  return [1, 2, 5, 10].map((f) => f * magnitude).find((step) => step >= rough) ?? 10 * magnitude;
}

function axis(from: number, to: number): string {
  const step = tickStep(to - from);
  const ticks: string[] = [];
  for (let t = 0; t <= to - from; t += step) {
    const left = ((t / (to - from)) * 100).toFixed(3);
    ticks.push(`<span class="tick" style="left:${left}%">${t === 0 ? '0' : formatDuration(t)}</span>`);
  }
  return `<div class="row axis"><div class="label"></div><div class="track">${ticks.join('')}</div></div>`;
}

function barRow(bar: ReportBar, report: RunReport, from: number, to: number, hasLog: boolean): string {
  const tone = barTone(bar.status, bar.stop_reason);
  const at = (iso: string) => ((Date.parse(iso) - from) / (to - from)) * 100;
  const start = at(bar.started_at);
  const end = at(bar.ended_at ?? report.generated_at);
  const wait =
    bar.queued_at && Date.parse(bar.queued_at) < Date.parse(bar.started_at)
      ? `<div class="wait" style="left:${at(bar.queued_at).toFixed(3)}%;width:${(start - at(bar.queued_at)).toFixed(3)}%" title="waiting for a slot"></div>`
      : '';
  const took = Date.parse(bar.ended_at ?? report.generated_at) - Date.parse(bar.started_at);
  const meta = [
    `<span class="status">${escapeHtml(bar.status)}</span>`,
    bar.stop_reason ? `<span class="stop-reason">${escapeHtml(bar.stop_reason)}</span>` : '',
    bar.batch
      ? `<span class="batch">${escapeHtml(batchCountsText({ batch: bar.batch } as LedgerEntry))}</span>`
      : '',
    bar.tokens === undefined ? '' : `<span class="tokens">${number(bar.tokens)} tokens</span>`,
    bar.turns === undefined
      ? ''
      : `<span class="turns">${bar.turns} ${bar.turns === 1 ? 'turn' : 'turns'}</span>`,
    `<span class="duration">${bar.ended_at ? '' : 'running for '}${formatDuration(took)}</span>`,
    hasLog ? `<a class="log-link" href="#${logId(bar.workflow_id)}">steps</a>` : '',
    link(bar.ui_url, 'Web UI ↗'),
  ].filter(Boolean);
  const title = `${bar.type}: ${bar.description}\n${bar.started_at} → ${bar.ended_at ?? 'running'}`;
  return (
    `<div class="row bar--${tone} depth-${bar.depth}" data-kind="${bar.kind}" data-workflow-id="${escapeHtml(bar.workflow_id)}">` +
    `<div class="label" style="padding-left:${8 + bar.depth * 18}px">` +
    `<div class="name"><span class="type">${escapeHtml(bar.type)}</span>: <span class="description">${escapeHtml(bar.description)}</span></div>` +
    `<div class="meta">${meta.join('')}</div>` +
    (bar.error ? `<div class="error">${escapeHtml(bar.error)}</div>` : '') +
    `</div><div class="track">${wait}<div class="bar" title="${escapeHtml(title)}" ` +
    `style="left:${start.toFixed(3)}%;width:${Math.max(end - start, 0).toFixed(3)}%"></div></div></div>`
  );
}

function timeline(report: RunReport): string {
  const { from, to } = span(report);
  const logged = new Set(report.step_logs.map((log) => log.workflow_id));
  const rows = report.bars.map((bar) => barRow(bar, report, from, to, logged.has(bar.workflow_id)));
  return `<div class="timeline">${axis(from, to)}${rows.join('')}</div>`;
}

/** The ledger with `subagents ledger`'s columns: the result's brief, or the error, in full. */
function ledgerTable(ledger: readonly LedgerEntry[] | undefined): string {
  if (ledger === undefined) return '<p>The run ended without a result: its ledger was not kept.</p>';
  if (ledger.length === 0) return '<p>(no delegations)</p>';
  // The cost column appears when some entry was priced (no pricing: no cost, not 0).
  const priced = ledger.some((entry) => entry.cost_usd !== undefined);
  const costCell = (entry: LedgerEntry) =>
    priced ? `<td class="num">${entry.cost_usd === undefined ? '-' : formatUsd(entry.cost_usd)}</td>` : '';
  const rows = ledger.map((entry) => {
    const tone = barTone(entry.status, entry.stop_reason);
    const result =
      entry.kind === 'batch'
        ? `batch: ${escapeHtml(batchCountsText(entry))}`
        : entry.result_brief
          ? `<pre class="brief">${escapeHtml(entry.result_brief)}</pre>`
          : entry.error
            ? `<pre class="brief error">error: ${escapeHtml(entry.error)}</pre>`
            : '';
    return (
      `<tr><td>${escapeHtml(entry.id)}</td><td>${escapeHtml(entry.subagent_type)}</td>` +
      `<td><span class="tone tone--${tone}">${escapeHtml(entry.status)}</span></td>` +
      `<td>${escapeHtml(entry.stop_reason ?? '-')}</td>` +
      `<td class="num">${entry.token_usage ? number(entry.token_usage.total_tokens) : '-'}</td>` +
      `${costCell(entry)}<td>${result}</td></tr>`
    );
  });
  return (
    '<table class="ledger"><thead><tr><th>ID</th><th>TYPE</th><th>STATUS</th><th>STOP REASON</th>' +
    `<th class="num">TOKENS</th>${priced ? '<th class="num">COST</th>' : ''}<th>RESULT</th></tr></thead>` +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

function stepBlock(step: SubagentStep): string {
  const kind =
    step.kind === 'tool'
      ? step.is_error
        ? 'tool step--error'
        : 'tool'
      : step.kind === 'approval'
        ? 'tool'
        : 'ai';
  return `<div class="step step--${kind}"><pre>${escapeHtml(stepLines(step).join('\n'))}</pre></div>`;
}

function stepLog(log: ReportStepLog): string {
  const body = log.unavailable
    ? `<p class="error">${escapeHtml(log.unavailable)}</p>`
    : [
        log.prompt
          ? `<details class="prompt"><summary>prompt</summary><pre>${escapeHtml(log.prompt)}</pre></details>`
          : '',
        log.steps.length === 0 ? '<p>(no steps)</p>' : log.steps.map(stepBlock).join(''),
        ...log.missing.map((what) => `<pre class="missing">(missing: ${escapeHtml(what)})</pre>`),
        log.outcome
          ? `<pre class="outcome${log.tone === 'failed' ? ' error' : ''}">${escapeHtml(log.outcome)}</pre>`
          : '',
      ].join('');
  return (
    `<details class="step-log" id="${logId(log.workflow_id)}" data-workflow-id="${escapeHtml(log.workflow_id)}">` +
    `<summary><span class="tone tone--${log.tone}">${escapeHtml(log.type)}</span> ${escapeHtml(log.description)} ` +
    `<small>${escapeHtml(log.workflow_id)}</small></summary>${body}</details>`
  );
}

function usageText(usage: LeadTokenUsage | undefined): string | undefined {
  if (!usage?.total) return undefined;
  const part = (name: string, value: TokenUsage | undefined) =>
    value ? `${name} ${number(value.total_tokens)}${cacheNote(value)}` : undefined;
  return [part('lead', usage.lead), part('subagents', usage.subagents), part('total', usage.total)]
    .filter(Boolean)
    .join(', ');
}

/** The report page, whole. */
export function renderReport(report: RunReport): string {
  const how = `${report.status}${report.stop_reason ? ` (${report.stop_reason})` : ''}`;
  const tokens = usageText(report.token_usage);
  const facts = [
    `<span class="tone tone--${barTone(report.open ? 'running' : report.status, report.stop_reason)}">${escapeHtml(how)}</span>`,
    report.turns === undefined
      ? ''
      : `<span>${report.turns} lead ${report.turns === 1 ? 'turn' : 'turns'}</span>`,
    tokens ? `<span>tokens: ${escapeHtml(tokens)}</span>` : '',
    report.cost_usd ? `<span>cost: ${escapeHtml(costLine(report.cost_usd))}</span>` : '',
    `<span>report made ${escapeHtml(report.generated_at)}${report.open ? ', while the run was still going' : ''}</span>`,
    link(report.ui_url, 'Web UI ↗') && `<span>${link(report.ui_url, 'Web UI ↗')}</span>`,
  ].filter(Boolean);
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${POLICY}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>Run ${escapeHtml(report.run_id)}</title><style>${CSS}</style></head><body>`,
    `<h1>Run <span class="run-id">${escapeHtml(report.run_id)}</span></h1>`,
    `<p class="facts">${facts.join('')}</p>`,
    report.error ? `<p class="error run-error">${escapeHtml(report.error)}</p>` : '',
    report.prompt
      ? `<details class="prompt"><summary>prompt</summary><pre>${escapeHtml(report.prompt)}</pre></details>`
      : '',
    report.final_output
      ? `<details class="final-output" open><summary>final output</summary><pre>${escapeHtml(report.final_output)}</pre></details>`
      : '',
    '<h2>Timeline</h2>',
    timeline(report),
    '<h2>Ledger</h2>',
    ledgerTable(report.ledger),
    '<h2>Steps</h2>',
    report.step_logs.length === 0 ? '<p>(no subagents)</p>' : report.step_logs.map(stepLog).join(''),
    `<script>${SCRIPT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}
