/**
 * How the agent loop runs one MCP tool call: a regular activity on any worker (each has its own connections
 * to the servers), heartbeating, with the server's timeout. A call runs at most once unless the server marks
 * the tool read-only (`readOnlyHint`), which the model activity recorded with the response, so a replay
 * decides the same from history alone. `tool_search` (deferred MCP tools) is run here too: it reads the same
 * catalog.
 */
import { executeChild, ParentClosePolicy, proxyActivities } from '@temporalio/workflow';
import { localActivities } from './local-activities';
import type { LocalActivityOptions } from '@temporalio/common';
import type { ProjectActivities } from '../activities';
import {
  DEFAULT_MCP_TOOL_TIMEOUT_SECONDS,
  type McpCallInfo,
  type McpTaskWorkflowInput,
  type McpToolFilter,
} from '../contracts/mcp';
import type { McpTaskCallInfo } from '../contracts/mcp-tasks';
import type { ToolCall } from '../contracts/messages';
import type { ToolSearchResult } from '../contracts/tool-search';
import type { ToolCallResult } from '../contracts/tools';

/** Attempts of a read-only call (its server may be down for a moment); every other call has one. */
const READ_ONLY_ATTEMPTS = 3;

/** Above the tool's own timeout (the activity enforces that one): connecting to a server that was down. */
const CONNECT_MARGIN_SECONDS = 35;

export function runMcpToolCall(
  call: ToolCall,
  filter: McpToolFilter,
  info: McpCallInfo | undefined,
  options: { heartbeatTimeout: string; summary: string; promoted?: string[] },
): Promise<ToolCallResult> {
  const attempts = info?.read_only ? READ_ONLY_ATTEMPTS : 1;
  const timeoutSeconds = (info?.timeout_seconds ?? DEFAULT_MCP_TOOL_TIMEOUT_SECONDS) + CONNECT_MARGIN_SECONDS;
  const activityOptions = {
    startToCloseTimeout: `${timeoutSeconds} seconds`,
    heartbeatTimeout: options.heartbeatTimeout,
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: attempts },
  };
  const { executeMcpToolCall } = proxyActivities<ProjectActivities>(activityOptions);
  return executeMcpToolCall.executeWithOptions({ ...activityOptions, summary: options.summary }, [
    {
      call,
      filter,
      ...(attempts > 1 && { max_attempts: attempts }),
      ...(filter.deferred && { promoted: options.promoted ?? [] }),
    },
  ]);
}

/**
 * A call of a task toolset's submit tool (`mcp_tasks:`): its task is submitted and waited for in a child workflow
 * (workflows/mcp-task.ts) whose result is the call's. A run that ends or is cancelled cancels the child, which
 * cancels the task on its server before it closes.
 */
export function runMcpTask(
  call: ToolCall,
  filter: McpToolFilter,
  info: McpCallInfo & { task: McpTaskCallInfo },
  options: {
    workflowId: string;
    summary: string;
    promoted?: string[];
    questions: McpTaskWorkflowInput['questions'];
  },
): Promise<ToolCallResult> {
  const input: McpTaskWorkflowInput = {
    call,
    filter,
    ...(filter.deferred && { promoted: options.promoted ?? [] }),
    task: info.task,
    timeout_seconds: info.timeout_seconds,
    questions: options.questions,
  };
  return executeChild('mcpTaskWorkflow', {
    workflowId: options.workflowId,
    args: [input],
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    staticSummary: options.summary,
  });
}

// A search reads the worker's catalog and changes nothing: a local activity (one marker in history), retried.
const TOOL_SEARCH_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
};

/** One `tool_search` call; its result says what to promote (recorded in the loop's state). */
export function runToolSearch(
  call: ToolCall,
  filter: McpToolFilter,
  summary: string,
): Promise<ToolSearchResult> {
  const { searchMcpTools } = localActivities<ProjectActivities>(TOOL_SEARCH_OPTIONS);
  return searchMcpTools.executeWithOptions({ ...TOOL_SEARCH_OPTIONS, summary }, [{ call, filter }]);
}
