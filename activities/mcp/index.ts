export { executeMcpToolCall } from './execute-mcp-tool-call';
export { McpCatalog, describeMcpServer, installMcpCatalog, installedMcpCatalog } from './catalog';
export { mcpCallInfo, mcpToolSpecs } from './model-tools';
