/**
 * How a workflow stands, where an operator looks: its outcome in search attributes (`SubagentStatus`,
 * `StopReason`, `TotalTokens`: the Web UI's list and `subagents list` filter on them) and its live state in
 * the current details the Web UI shows (turn, tokens, what it is doing, the last tool call). Workflows
 * started before these existed carry no `SubagentStatus` and are left as they were, so their histories replay.
 */
import {
  ApplicationFailure,
  CancelledFailure,
  getCurrentDetails,
  patched,
  setCurrentDetails,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { OUTCOME_MEMO, RESULT_MEMO } from '../contracts/closing';
import { STOP_REASON, SUBAGENT_STATUS, TOTAL_COST_USD, TOTAL_TOKENS } from '../contracts/search-attributes';
import type { TokenUsage } from '../contracts/messages';
import { codeSpan, formatUsd, groupThousands, markdownText } from '../contracts/text';

/** Whether this workflow reports its outcome: it was started with `SubagentStatus` (every start does now). */
export function reportsOutcome(): boolean {
  return workflowInfo().typedSearchAttributes.get(SUBAGENT_STATUS) !== undefined;
}

/** `queued` while it waits for a slot, `running` once it has one. */
export function reportState(state: 'queued' | 'running'): void {
  if (!reportsOutcome() || workflowInfo().typedSearchAttributes.get(SUBAGENT_STATUS) === state) return;
  upsertSearchAttributes([{ key: SUBAGENT_STATUS, value: state }]);
}

export interface Outcome {
  status: string;
  stopReason?: string;
  tokens?: TokenUsage;
  /** What the tokens cost in USD (`models[].pricing`); absent when nothing was priced. */
  costUsd?: number;
}

/** The final status, stop reason, tokens and cost: one search attribute update, as the workflow ends. */
export function reportOutcome(outcome: Outcome): void {
  if (!reportsOutcome()) return;
  upsertSearchAttributes([
    { key: SUBAGENT_STATUS, value: outcome.status },
    ...(outcome.stopReason !== undefined ? [{ key: STOP_REASON, value: outcome.stopReason }] : []),
    ...(outcome.tokens !== undefined ? [{ key: TOTAL_TOKENS, value: outcome.tokens.total_tokens }] : []),
    ...(outcome.costUsd !== undefined ? [{ key: TOTAL_COST_USD, value: outcome.costUsd }] : []),
  ]);
}

/** Histories recorded before a workflow closed as its result says (they returned every result). */
const HONEST_CLOSE_PATCH = 'honest-close';

/** How a closing workflow's result reads, for its final line and its closing failure. */
export interface Closing {
  /** `lead`, the subagent's type, `<type> batch`. */
  agent: string;
  status: string;
  stopReason?: string;
  error?: string;
  turns?: number;
  tokens?: TokenUsage;
  /** What the tokens cost in USD, shown as `$0.0123` when some call was priced. */
  costUsd?: number;
  /** Anything else worth the line (a batch's counts). */
  extra?: string;
  /** The input says the workflow closes as its result says (`honest_close`): no patch is checked. */
  declared: boolean;
  /** A failed / timed-out ending's failure type and message prefix; absent: the kind cannot fail that way. */
  failure?: { type: string; prefix: string };
}

/**
 * The workflow's last act: its final line in the current details (no `Now:` line is left behind), the same
 * line in its memo (`outcome`, readable without a worker), and the ending Temporal shows: `failed` and
 * `timed_out` fail the workflow with the result as the failure's detail, `cancelled` records the result in
 * the memo and ends Canceled, everything else returns the result (Completed). Histories from before the patch
 * return every result, as they did.
 */
export function closeWith<R>(
  result: R,
  closing: Closing,
  /** How a history from before the patch closed (default: it returned the result). */
  before: () => R = () => result,
): R {
  const line = finalLine(closing);
  if (line !== getCurrentDetails()) setCurrentDetails(line);
  if (!closing.declared && !patched(HONEST_CLOSE_PATCH)) return before();
  const cancelled = closing.status === 'cancelled';
  upsertMemo({ [OUTCOME_MEMO]: line, ...(cancelled && { [RESULT_MEMO]: result }) });
  if (cancelled) throw new CancelledFailure(closing.error ?? 'cancelled');
  if ((closing.status === 'failed' || closing.status === 'timed_out') && closing.failure) {
    throw ApplicationFailure.create({
      type: closing.failure.type,
      message: `${closing.failure.prefix}${closing.error ?? 'no error given'}`,
      nonRetryable: true,
      details: [result],
    });
  }
  return result;
}

/** `**lead** · failed · 2 turns · 10,020 tokens`, then the error or stop reason on a line of its own. */
export function finalLine(closing: Closing): string {
  const head = [
    `**${markdownText(closing.agent)}**`,
    closing.status,
    ...(closing.turns !== undefined ? [`${closing.turns} turn${closing.turns === 1 ? '' : 's'}`] : []),
    ...(closing.tokens ? [`${groupThousands(closing.tokens.total_tokens)} tokens`] : []),
    ...(closing.costUsd !== undefined ? [formatUsd(closing.costUsd)] : []),
    ...(closing.extra !== undefined ? [closing.extra] : []),
  ].join(' · ');
  const why = [
    ...(closing.stopReason !== undefined ? [`Stop reason: \`${closing.stopReason}\``] : []),
    ...(closing.error !== undefined ? [`Error: ${markdownText(oneLine(closing.error, 300))}`] : []),
  ];
  const text = [head, ...why].join('\n\n');
  return text.length > DETAILS_MAX_CHARS ? `${text.slice(0, DETAILS_MAX_CHARS - 1)}…` : text;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Temporal's default limit on current details is 20 KB; these stay far below. */
const DETAILS_MAX_CHARS = 2_000;
/**
 * One tool call's line (an activity's summary too): its name and its arguments on one line, cut so that even
 * four-byte characters stay within the 400 bytes Temporal allows a summary.
 */
const CALL_LINE_MAX_CHARS = 96;

/** `bash: {"command":"ls -la"}` on one line, cut to fit. */
export function callLine(name: string, args: string): string {
  const flat = `${name}: ${args.replace(/\s+/g, ' ').trim()}`;
  return flat.length > CALL_LINE_MAX_CHARS ? `${flat.slice(0, CALL_LINE_MAX_CHARS - 1)}…` : flat;
}

export interface LiveState {
  agent: string;
  turns: number;
  tokens?: TokenUsage;
  /** What it is doing now, e.g. `waiting for the model (turn 3)`: plain text, shown as it is. */
  doing: string;
  /** A command that moves it on (the answer to its question), shown as code to copy. */
  command?: string;
  /** Commands that move it on, each under its own label (`Approve with`, `Deny with`), shown as code to copy. */
  commands?: readonly { label: string; command: string }[];
  lastCall?: string;
  /** Deferred MCP tools `tool_search` promoted in this run. */
  promoted?: readonly string[];
  /** The skills active in this run (their allowed-tools apply). */
  skills?: readonly string[];
}

/** The Web UI's "Current Details" (markdown): set in memory, answered by the worker; no history event. */
export function showLiveState(live: LiveState): void {
  const lines = [
    `**${markdownText(live.agent)}** · turn ${live.turns}` +
      (live.tokens ? ` · ${groupThousands(live.tokens.total_tokens)} tokens` : ''),
    `Now: ${markdownText(live.doing)}`,
    ...(live.command !== undefined ? [`Answer with: ${codeSpan(live.command)}`] : []),
    ...(live.commands ?? []).map(({ label, command }) => `${markdownText(label)}: ${codeSpan(command)}`),
    ...(live.lastCall !== undefined ? [`Last tool call: ${codeSpan(live.lastCall)}`] : []),
    ...(live.promoted && live.promoted.length > 0
      ? [`Promoted tools: ${markdownText(live.promoted.join(', '))}`]
      : []),
    ...(live.skills && live.skills.length > 0
      ? [`Active skills: ${markdownText(live.skills.join(', '))}`]
      : []),
  ];
  const text = lines.join('\n\n');
  const details = text.length > DETAILS_MAX_CHARS ? `${text.slice(0, DETAILS_MAX_CHARS - 1)}…` : text;
  if (details !== getCurrentDetails()) setCurrentDetails(details);
}
