/**
 * What the model activity needs of the catalog: the specs of the MCP tools an agent is shown, and, for the
 * MCP tools a response calls, how the workflow should schedule each call (read-only, timeout), so that
 * decision lands in history with the response.
 */
import type { McpCallInfo, McpToolFilter } from '../../contracts/mcp';
import type { ToolCall, ToolSpec } from '../../contracts/messages';
import { TOOL_SEARCH_SPEC } from '../../contracts/tool-specs';
import { deferredToolsSection } from '../../contracts/tool-search';
import type { McpCatalog } from './catalog';

/** The specs of the MCP tools `filter` allows among those the worker's servers listed (`catalog`). */
export function mcpToolSpecs(catalog: McpCatalog | undefined, filter: McpToolFilter | undefined): ToolSpec[] {
  if (filter === undefined) return [];
  return (catalog?.tools(filter) ?? []).map(({ name, description, parameters }) => ({
    name,
    description,
    parameters,
  }));
}

/**
 * What one model call is shown of the MCP tools: every allowed tool's spec, or, with a deferred filter, the
 * promoted ones' and `tool_search`, the rest named in a section of the system message. No MCP tool left after
 * the filter: neither `tool_search` nor the section (as DeerFlow's empty setup).
 */
export function mcpToolsForModel(
  catalog: McpCatalog | undefined,
  filter: McpToolFilter | undefined,
  promoted: readonly string[] = [],
): { specs: ToolSpec[]; section?: string } {
  const specs = mcpToolSpecs(catalog, filter);
  if (!filter?.deferred || specs.length === 0) return { specs };
  return {
    specs: [...specs.filter((spec) => promoted.includes(spec.name)), TOOL_SEARCH_SPEC],
    section: deferredToolsSection(specs.map((spec) => spec.name)),
  };
}

/** For each call of a shown MCP tool: its read-only flag and its server's timeout. Undefined when none. */
export function mcpCallInfo(
  catalog: McpCatalog | undefined,
  filter: McpToolFilter | undefined,
  calls: readonly ToolCall[],
): Record<string, McpCallInfo> | undefined {
  if (filter === undefined || catalog === undefined) return undefined;
  const shown = new Map(catalog.tools(filter).map((tool) => [tool.name, tool]));
  const info: Record<string, McpCallInfo> = {};
  for (const call of calls) {
    const tool = shown.get(call.name);
    const server = tool && catalog.server(tool.server);
    if (!tool || !server) continue;
    info[call.name] = {
      ...(tool.read_only && { read_only: true as const }),
      timeout_seconds: server.settings.tool_timeout_seconds,
    };
  }
  return Object.keys(info).length > 0 ? info : undefined;
}
