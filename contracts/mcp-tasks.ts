/**
 * Long-running MCP tasks (DeerFlow's `mcp_tasks:` and a server's `task_toolsets`), as workflows and activities
 * both see them: a toolset's submit / status / cancel tools, the polling settings the worker's config gives, what
 * one status call says (DeerFlow's ordinary contract, read from `structuredContent`), when the next poll is due,
 * and the text the model gets back. The waiting itself is a child workflow (workflows/mcp-task.ts). No Node APIs:
 * workflows import it.
 */
import { truncateHeadTail } from './text';

/** One `task_toolsets` entry of a server: DeerFlow's keys, and `input_tool` (this project's, optional). */
export interface McpTaskToolset {
  name: string;
  /** The tool the model sees (its server's raw name); the other two are hidden from every agent. */
  submit_tool: string;
  status_tool: string;
  cancel_tool: string;
  /** A tool taking `{task_id, input}` that brings a person's answer to an `input_required` task. */
  input_tool?: string;
}

/** DeerFlow's `mcp_tasks:` keys the waiting reads (its lease and concurrency keys have no use here). */
export interface McpTaskPolling {
  poll_interval_seconds: number;
  max_poll_backoff_seconds: number;
  input_required_poll_interval_seconds: number;
  tracking_degraded_after_errors: number;
  max_result_bytes: number;
  result_preview_max_chars: number;
}

/** What the model activity records for a call of a submit tool: the toolset, its server, how to wait. */
export interface McpTaskCallInfo {
  server: string;
  toolset: McpTaskToolset;
  polling: McpTaskPolling;
}

/** DeerFlow's remote statuses (`running` is its local `working`). */
export const MCP_TASK_STATUSES = ['running', 'input_required', 'completed', 'failed', 'cancelled'] as const;
export type McpTaskStatus = (typeof MCP_TASK_STATUSES)[number];

/** One status (or cancel) answer, checked. */
export interface McpTaskSnapshot {
  status: McpTaskStatus;
  result?: unknown;
  result_artifact?: { uri: string; mime_type: string };
  error?: string;
  input_required?: Record<string, unknown>;
  poll_after_seconds?: number;
}

/** A status or cancel call: its answer, or why there is none this time (a transient fault: polled again). */
export type McpTaskPoll = { kind: 'snapshot'; snapshot: McpTaskSnapshot } | { kind: 'error'; error: string };

/** The submit call: the task id the server gave, or the tool message the model gets instead. */
export type McpTaskSubmitted = { kind: 'submitted'; task_id: string } | { kind: 'refused'; content: string };

/** What the status, cancel and input activities take. */
export interface McpTaskRef {
  server: string;
  tool: string;
  task_id: string;
  /** The input tool's answer. */
  input?: string;
}

/** DeerFlow caps a server's poll hint at a day. */
export const MCP_TASK_POLL_AFTER_MAX_SECONDS = 24 * 60 * 60;

/** The child workflow's id: under the agent's own, where `subagents answer` finds its question (`mcp@<turn>.<i>`). */
export function mcpTaskWorkflowId(agentWorkflowId: string, turn: number, index: number): string {
  // `@` is never in a delegation id (workflows/delegation/delegation-ids.ts): the two cannot meet.
  return `${agentWorkflowId}/task/mcp@${turn}.${index}`;
}

/**
 * Seconds until the next status call, as DeerFlow's service schedules it: after `errors` transient faults in a
 * row, `poll_interval_seconds` doubled per earlier fault up to `max_poll_backoff_seconds`; otherwise the server's
 * `poll_after_seconds` or the interval, never sooner than `input_required_poll_interval_seconds` while the task
 * waits for input, and at most a day.
 */
export function nextPollSeconds(
  polling: McpTaskPolling,
  errors: number,
  last: McpTaskSnapshot | undefined,
): number {
  if (errors > 0) {
    return Math.min(
      polling.poll_interval_seconds * 2 ** Math.min(errors - 1, 16),
      polling.max_poll_backoff_seconds,
    );
  }
  let interval = last?.poll_after_seconds ?? polling.poll_interval_seconds;
  if (last?.status === 'input_required') {
    interval = Math.max(interval, polling.input_required_poll_interval_seconds);
  }
  return Math.min(interval, MCP_TASK_POLL_AFTER_MAX_SECONDS);
}

export function isFinished(status: McpTaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/**
 * A finished task's result as the model reads it: its `result` (text as is, anything else as JSON), cut to
 * `result_preview_max_chars` when it passes `max_result_bytes` (DeerFlow keeps a preview then), and its artifact.
 */
export function taskResultText(snapshot: McpTaskSnapshot, polling: McpTaskPolling): string {
  const { result, result_artifact: artifact } = snapshot;
  let text =
    result === undefined || result === null
      ? ''
      : typeof result === 'string'
        ? result
        : (JSON.stringify(result) ?? '');
  if (utf8Bytes(text) > polling.max_result_bytes) {
    const total = text.length;
    text = `${truncateHeadTail(text, polling.result_preview_max_chars)}\n[result truncated: ${total} characters, over max_result_bytes ${polling.max_result_bytes}]`;
  }
  const artifactLine = artifact && `Result artifact: ${artifact.uri} (${artifact.mime_type})`;
  return [text, artifactLine].filter((part) => part !== undefined && part !== '').join('\n') || '(no output)';
}

/** The tool message text of a task that ended, and whether it is an error. */
export function taskEndText(
  toolName: string,
  snapshot: McpTaskSnapshot,
  polling: McpTaskPolling,
): { content: string; isError: boolean } {
  switch (snapshot.status) {
    case 'completed':
      return { content: taskResultText(snapshot, polling), isError: false };
    case 'failed':
      return {
        content: `MCP task "${toolName}" failed: ${snapshot.error?.trim() || 'the server gave no reason'}`,
        isError: true,
      };
    default:
      return {
        content: `MCP task "${toolName}" was cancelled${snapshot.error?.trim() ? `: ${snapshot.error.trim()}` : ''}.`,
        isError: true,
      };
  }
}

/** The question an `input_required` payload asks: its `message`, `question` or `prompt`, else the payload. */
export function inputRequiredQuestion(payload: Record<string, unknown> | undefined): string {
  for (const key of ['message', 'question', 'prompt']) {
    const value = payload?.[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim();
  }
  return payload === undefined ? 'The task needs input to go on.' : JSON.stringify(payload);
}
