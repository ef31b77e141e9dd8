/**
 * The tree's live stream (docs/live.md): what the model and tool activities publish as they go (deltas) and
 * what a reader adds from what the run already answers (its events, what it waits on, its end), keyed by the
 * lead run's id, each event tagged with the delegation path of the agent it is about. Nothing of it is in
 * history: a lost stream changes no run. snake_case on the wire, as every shape here.
 */
import type { PendingApproval } from './approvals';
import type { PendingQuestion } from './clarification';
import type { TaskEvent } from './events';
import type { TokenUsage } from './messages';

/** Published by the activities while an agent's turn runs. */
export const STREAM_DELTA_KINDS = [
  /** A piece of the answer's text, in order. */
  'text',
  /** A piece of the model's thinking, where the provider sends it. */
  'thinking',
  /** The model began a tool call (its name known; its arguments follow in `turn_ended`). */
  'tool_call',
  /** A tool call's result, as the agent will read it (abbreviated past STREAM_TEXT_MAX). */
  'tool_result',
  /** The turn's token usage, as the provider reported it. */
  'usage',
] as const;

/** Published by the activities at a turn's edges. */
export const STREAM_TURN_KINDS = [
  /** An agent's first model call: the agent started. */
  'agent_started',
  /** A model call began (`turn`, `attempt`). */
  'turn_started',
  /**
   * A retried model call began: the deltas of the earlier attempt (`attempt` - 1) of this turn are superseded
   * (a reader drops the turn's text so far and takes the retry's).
   */
  'interrupted',
  /** A model call ended: its whole text (`text`) and tool calls; the deltas before it add up to `text`. */
  'turn_ended',
  /** A model call failed (`error`); Temporal retries it when it can. */
  'turn_failed',
] as const;

/** Added by a reader from what the run answers (its queries, its result): never published by a worker. */
export const STREAM_LIFECYCLE_KINDS = [
  /** One of the lead's task_* / clarification / guardrail events (`event`). */
  'task_event',
  /** A tool call held for a person's decision (`approval`). */
  'waiting_approval',
  /** A question waiting on a person (`question`). */
  'question',
  /** The lead run closed: `status`, `stop_reason`, `error`, and its final text in `text`. */
  'run_ended',
] as const;

export type StreamEventKind =
  | (typeof STREAM_DELTA_KINDS)[number]
  | (typeof STREAM_TURN_KINDS)[number]
  | (typeof STREAM_LIFECYCLE_KINDS)[number];

export interface StreamToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them (JSON text), on `turn_ended` only. */
  args?: string;
}

export interface StreamToolResult {
  tool_call_id: string;
  name: string;
  content: string;
  is_error: boolean;
}

export interface StreamEvent {
  kind: StreamEventKind;
  /** The lead run's id: the stream's key. */
  run_id: string;
  /** The agent's delegation path: '' for the lead, `call_1`, `call_1/call_7` for a nested one. */
  path: string;
  /** The workflow the event is about. */
  workflow_id: string;
  /** The agent's name (`lead`, `general-purpose`, …), where the publisher knows it. */
  agent?: string;
  /** The turn (0-based) and the model call's attempt (1-based). */
  turn?: number;
  attempt?: number;
  /** When the publisher saw it (ISO 8601). */
  at: string;
  text?: string;
  tool_call?: StreamToolCall;
  tool_calls?: StreamToolCall[];
  tool_result?: StreamToolResult;
  usage?: TokenUsage;
  finish_reason?: string;
  error?: string;
  approval?: PendingApproval;
  question?: PendingQuestion;
  event?: TaskEvent;
  status?: string;
  stop_reason?: string;
}

/** One event as a reader gets it, with its place in the stream (a reader resumes after `id`). */
export interface StreamEntry {
  id: string;
  event: StreamEvent;
}

/** Text a stream event carries at most (a tool result, a whole turn's text), in characters. */
export const STREAM_TEXT_MAX = 16_000;

/** `text` cut to STREAM_TEXT_MAX characters, marked when cut. */
export function streamText(text: string): string {
  if (text.length <= STREAM_TEXT_MAX) return text;
  return `${text.slice(0, STREAM_TEXT_MAX)}… [${text.length - STREAM_TEXT_MAX} more characters]`;
}

const DELEGATION = '/task/';
const LEAD_BATCH = '/batch/';

/**
 * The lead run a workflow id belongs to: children are `<parent>/task/<id>` and a lead's batches
 * `<lead>/batch/<id>/…`, so the lead's id is what comes before the first of those.
 */
export function leadRunIdOf(workflowId: string): string {
  const cuts = [workflowId.indexOf(DELEGATION), workflowId.indexOf(LEAD_BATCH)].filter((at) => at > 0);
  return cuts.length === 0 ? workflowId : workflowId.slice(0, Math.min(...cuts));
}

/**
 * A workflow's delegation path under its lead: '' for the lead itself, the delegation ids joined by `/` for a
 * subagent (`call_1/call_7`, as a subagent's question refs read), the rest of the id for a batch item.
 */
export function delegationPathOf(workflowId: string): string {
  const lead = leadRunIdOf(workflowId);
  if (lead === workflowId) return '';
  const rest = workflowId.slice(lead.length);
  return rest.startsWith(DELEGATION)
    ? rest.slice(DELEGATION.length).split(DELEGATION).join('/')
    : rest.slice(1);
}
