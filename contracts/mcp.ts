/**
 * Tools from MCP servers, as workflows and activities both see them: their names (`<server>__<tool>`), the
 * filter an agent carries (its `tools.allow` / `deny` entries that name MCP tools), and what a model call says
 * about the MCP tools its response calls. Only names travel: a server's command, env, URL and headers stay in
 * the worker that connects to it (activities/mcp/), never in workflow history. No Node APIs: workflows import it.
 */
import type { ToolCall } from './messages';
import type { McpTaskCallInfo } from './mcp-tasks';
import { isBuiltinToolName } from './tools';
import type { McpToolFilter } from './input-schemas';

/** Between a server's name and its tool's: `github__create_issue`. */
export const MCP_TOOL_SEPARATOR = '__';

/** What OpenAI-style providers accept as a tool name; an MCP tool whose full name is not one is left out. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;

/** A server name: letters, digits, `-` and single `_` (a `__` would make `<server>__<tool>` ambiguous). */
export const MCP_SERVER_NAME_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]|_(?!_))*$/;

/** In a filter, every tool of one server: `github__*`. */
export const MCP_SERVER_WILDCARD = '*';

/** Every MCP tool (the lead's, `general-purpose`'s and a custom agent's without an allow list). */
export const ALL_MCP_TOOLS = '*';

/** Seconds one MCP tool call may take unless its server says otherwise (`tool_timeout_seconds`). */
export const DEFAULT_MCP_TOOL_TIMEOUT_SECONDS = 60;

/** Characters of one MCP tool's output kept unless its server says otherwise (`output_cap_chars`). */
export const DEFAULT_MCP_OUTPUT_CAP_CHARS = 20_000;

export function mcpToolName(server: string, tool: string): string {
  return `${server}${MCP_TOOL_SEPARATOR}${tool}`;
}

/** `github__create_issue` → github, create_issue; undefined for a built-in or a name without a server. */
export function splitMcpToolName(name: string): { server: string; tool: string } | undefined {
  if (isBuiltinToolName(name)) return undefined;
  const at = name.indexOf(MCP_TOOL_SEPARATOR);
  if (at <= 0) return undefined;
  const server = name.slice(0, at);
  const tool = name.slice(at + MCP_TOOL_SEPARATOR.length);
  if (tool === '' || !MCP_SERVER_NAME_PATTERN.test(server)) return undefined;
  return { server, tool };
}

export function isMcpToolName(name: string): boolean {
  return splitMcpToolName(name) !== undefined;
}

export type { McpToolFilter } from './input-schemas';

/** An entry of `tools.allow` / `deny` that names MCP tools (`<server>__<tool>` or `<server>__*`). */
export function isMcpToolPattern(entry: string): boolean {
  return entry === ALL_MCP_TOOLS || isMcpToolName(entry);
}

function patternMatches(pattern: string, name: string): boolean {
  if (pattern === ALL_MCP_TOOLS) return true;
  const split = splitMcpToolName(pattern);
  if (split?.tool === MCP_SERVER_WILDCARD) return splitMcpToolName(name)?.server === split.server;
  return pattern === name;
}

export function mcpFilterAllows(filter: McpToolFilter, name: string): boolean {
  if (!isMcpToolName(name)) return false;
  return (
    filter.allow.some((pattern) => patternMatches(pattern, name)) &&
    !filter.deny.some((pattern) => patternMatches(pattern, name))
  );
}

/**
 * What the model activity says about an MCP tool the response calls, so the workflow schedules its call from
 * history alone: whether the server marks it read-only (`readOnlyHint`: it may be retried) and its timeout.
 */
export interface McpCallInfo {
  read_only?: true;
  timeout_seconds: number;
  /** A toolset's submit tool (`task_toolsets`, with `mcp_tasks.enabled`): the call waits in a child workflow. */
  task?: McpTaskCallInfo;
}

/** One MCP tool call, as the workflow hands it to the MCP tool activity. */
export interface McpToolCallInput {
  call: ToolCall;
  /** The agent's filter: the activity refuses a tool it does not allow, or one the worker's catalog lacks. */
  filter: McpToolFilter;
  /** Attempts the workflow allows (read-only tools may retry a server that was down): the last one answers. */
  max_attempts?: number;
  /** With a deferred filter: the tools `tool_search` promoted in this run; any other is refused. */
  promoted?: string[];
}

/** The child workflow's input: the model's call, the agent's filter, and how to wait. */
export interface McpTaskWorkflowInput extends McpToolCallInput {
  task: McpTaskCallInfo;
  /** The server's `tool_timeout_seconds`: how long one submit, status, input or cancel call may take. */
  timeout_seconds: number;
  /** Who may be asked an `input_required` question: the run's clarification settings and its ids. */
  questions: {
    run_id: string;
    lead_workflow_id: string;
    agent_name: string;
    clarification?: { timeout_seconds: number };
  };
}
