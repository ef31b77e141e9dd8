/**
 * The `tool_search` activity: a query over the deferred MCP tools an agent's filter allows, on this worker's
 * catalog. It answers the matched tools' full schemas as the tool message and their names as `promoted`, which
 * the workflow records in its state (contracts/tool-search.ts): what is promoted is decided from history.
 */
import type { McpToolFilter } from '../../contracts/mcp';
import type { ToolCall } from '../../contracts/messages';
import { toolSearchArgsSchema } from '../../contracts/tool-specs';
import { noToolsFoundText, searchTools, type ToolSearchResult } from '../../contracts/tool-search';
import type { McpCatalog } from './catalog';

export interface ToolSearchInput {
  call: ToolCall;
  /** The agent's filter: a search never discloses a tool the agent may not use. */
  filter: McpToolFilter;
}

/** `catalog`: the worker's MCP servers (none when its config lists none). */
export async function searchMcpTools(
  catalog: McpCatalog | undefined,
  input: ToolSearchInput,
): Promise<ToolSearchResult> {
  const { call, filter } = input;
  const reply = (content: string, promoted: string[], isError = false): ToolSearchResult => ({
    tool_call_id: call.id,
    name: call.name,
    content,
    is_error: isError,
    promoted,
  });
  let query: string;
  try {
    query = toolSearchArgsSchema.parse(JSON.parse(call.args)).query;
  } catch {
    return reply(
      `Invalid arguments for ${call.name}: it takes {"query": "<text>"}, e.g. {"query": "select:server__tool"}.`,
      [],
      true,
    );
  }
  const matched = searchTools(catalog?.tools(filter) ?? [], query);
  if (matched.length === 0) return reply(noToolsFoundText(query), []);
  const schemas = matched.map(({ name, description, parameters }) => ({ name, description, parameters }));
  return reply(
    JSON.stringify(schemas, null, 2),
    matched.map((tool) => tool.name),
  );
}
