/** Every activity a worker registers; workflows import only the types of these. */
export { callModel } from './model';
export { summarizeTranscript } from './summarize';
export { executeToolCall } from './tools';
export { executeMcpToolCall } from './mcp/execute-mcp-tool-call';
export { searchMcpTools } from './mcp/tool-search';
export { runGraphSubagent } from './graph/run-graph';
export { readCancelledResult } from './cancelled-results';
