/**
 * How a workflow stands, where an operator looks: its outcome in search attributes (`SubagentStatus`,
 * `StopReason`, `TotalTokens`: the Web UI's list and `subagents list` filter on them) and its live state in
 * the current details the Web UI shows (turn, tokens, what it is doing, the last tool call). Workflows
 * started before these existed carry no `SubagentStatus` and are left as they were, so their histories replay.
 */
import {
  getCurrentDetails,
  setCurrentDetails,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { STOP_REASON, SUBAGENT_STATUS, TOTAL_TOKENS } from '../contracts/search-attributes';
import type { TokenUsage } from '../contracts/messages';
import { groupThousands } from '../contracts/text';

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
}

/** The final status, stop reason and tokens: one search attribute update, as the workflow ends. */
export function reportOutcome(outcome: Outcome): void {
  if (!reportsOutcome()) return;
  upsertSearchAttributes([
    { key: SUBAGENT_STATUS, value: outcome.status },
    ...(outcome.stopReason !== undefined ? [{ key: STOP_REASON, value: outcome.stopReason }] : []),
    ...(outcome.tokens !== undefined ? [{ key: TOTAL_TOKENS, value: outcome.tokens.total_tokens }] : []),
  ]);
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
  /** What it is doing now, e.g. `waiting for the model (turn 3)`. */
  doing: string;
  lastCall?: string;
  /** Deferred MCP tools `tool_search` promoted in this run. */
  promoted?: readonly string[];
}

/** The Web UI's "Current Details" (markdown): set in memory, answered by the worker; no history event. */
export function showLiveState(live: LiveState): void {
  const lines = [
    `**${live.agent}** · turn ${live.turns}` +
      (live.tokens ? ` · ${groupThousands(live.tokens.total_tokens)} tokens` : ''),
    `Now: ${live.doing}`,
    ...(live.lastCall !== undefined ? [`Last tool call: \`${live.lastCall.replace(/`/g, "'")}\``] : []),
    ...(live.promoted && live.promoted.length > 0 ? [`Promoted tools: ${live.promoted.join(', ')}`] : []),
  ];
  const text = lines.join('\n\n');
  const details = text.length > DETAILS_MAX_CHARS ? `${text.slice(0, DETAILS_MAX_CHARS - 1)}…` : text;
  if (details !== getCurrentDetails()) setCurrentDetails(details);
}
