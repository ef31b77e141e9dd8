import type { McpToolCallInput } from '../../contracts/mcp';
import type { McpTaskRef } from '../../contracts/mcp-tasks';
import type { McpCatalog } from './catalog';
import { executeMcpToolCall } from './execute-mcp-tool-call';
import { answerMcpTask, cancelMcpTask, pollMcpTask, submitMcpTask } from './tasks';
import { searchMcpTools, type ToolSearchInput } from './tool-search';

export { McpCatalog, describeMcpServer } from './catalog';
export { mcpCallInfo, mcpToolSpecs } from './model-tools';

/** The MCP activities of a worker, on its catalog (none when its config lists no server). */
export function createMcpActivities(deps: { mcpCatalog?: McpCatalog }) {
  return {
    executeMcpToolCall: (input: McpToolCallInput) => executeMcpToolCall(deps.mcpCatalog, input),
    searchMcpTools: (input: ToolSearchInput) => searchMcpTools(deps.mcpCatalog, input),
    // A long-running task's (workflows/mcp-task.ts).
    submitMcpTask: (input: McpToolCallInput) => submitMcpTask(deps.mcpCatalog, input),
    pollMcpTask: (ref: McpTaskRef) => pollMcpTask(deps.mcpCatalog, ref),
    cancelMcpTask: (ref: McpTaskRef) => cancelMcpTask(deps.mcpCatalog, ref),
    answerMcpTask: (ref: McpTaskRef) => answerMcpTask(deps.mcpCatalog, ref),
  };
}
