/**
 * How the agent loop runs one MCP tool call: a regular activity on any worker (each has its own connections
 * to the servers), heartbeating, with the server's timeout. A call runs at most once unless the server marks
 * the tool read-only (`readOnlyHint`), which the model activity recorded with the response, so a replay
 * decides the same from history alone.
 */
import { proxyActivities } from '@temporalio/workflow';
import type * as activities from '../activities';
import { DEFAULT_MCP_TOOL_TIMEOUT_SECONDS, type McpCallInfo, type McpToolFilter } from '../contracts/mcp';
import type { ToolCall } from '../contracts/messages';
import type { ToolCallResult } from '../contracts/tools';

/** Attempts of a read-only call (its server may be down for a moment); every other call has one. */
const READ_ONLY_ATTEMPTS = 3;

/** Above the tool's own timeout (the activity enforces that one): connecting to a server that was down. */
const CONNECT_MARGIN_SECONDS = 35;

export function runMcpToolCall(
  call: ToolCall,
  filter: McpToolFilter,
  info: McpCallInfo | undefined,
  options: { heartbeatTimeout: string; summary: string },
): Promise<ToolCallResult> {
  const attempts = info?.read_only ? READ_ONLY_ATTEMPTS : 1;
  const timeoutSeconds = (info?.timeout_seconds ?? DEFAULT_MCP_TOOL_TIMEOUT_SECONDS) + CONNECT_MARGIN_SECONDS;
  const activityOptions = {
    startToCloseTimeout: `${timeoutSeconds} seconds`,
    heartbeatTimeout: options.heartbeatTimeout,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: attempts },
  };
  const { executeMcpToolCall } = proxyActivities<typeof activities>(activityOptions);
  return executeMcpToolCall.executeWithOptions({ ...activityOptions, summary: options.summary }, [
    { call, filter, ...(attempts > 1 && { max_attempts: attempts }) },
  ]);
}
