/**
 * What the model activity needs of the catalog: the specs of the MCP tools an agent is shown, and, for the
 * MCP tools a response calls, how the workflow should schedule each call (read-only, timeout), so that
 * decision lands in history with the response.
 */
import { effectiveMcpRouting } from '../../contracts/config/mcp';
import type { McpCallInfo, McpToolFilter } from '../../contracts/mcp';
import type { ChatMessage, ToolCall, ToolSpec } from '../../contracts/messages';
import { TOOL_SEARCH_SPEC } from '../../contracts/tool-specs';
import { autoPromotions, deferredToolsSection, promote, type RoutedTool } from '../../contracts/tool-search';
import type { McpCatalog } from './catalog';
import type { McpToolEntry } from './server-connection';

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
  messages: readonly ChatMessage[] = [],
): { specs: ToolSpec[]; section?: string; autoPromoted?: string[] } {
  const specs = mcpToolSpecs(catalog, filter);
  if (!filter?.deferred || specs.length === 0) return { specs };
  const auto = autoPromotedTools(catalog, filter, promoted, messages);
  const shown = promote(promoted, auto);
  return {
    specs: [...specs.filter((spec) => shown.includes(spec.name)), TOOL_SEARCH_SPEC],
    section: deferredToolsSection(specs.map((spec) => spec.name)),
    ...(auto.length > 0 && { autoPromoted: auto }),
  };
}

/** A deferred tool's routing from its server's config, when it prefers the tool with some keyword. */
function routedTool(catalog: McpCatalog, entry: McpToolEntry): RoutedTool | undefined {
  const settings = catalog.server(entry.server)?.settings;
  if (settings === undefined) return undefined;
  const routing = effectiveMcpRouting(settings, entry.tool);
  const keywords = (routing.keywords ?? []).map((keyword) => keyword.trim()).filter(Boolean);
  if (routing.mode !== 'prefer' || keywords.length === 0) return undefined;
  return { name: entry.name, priority: routing.priority ?? 0, keywords };
}

/** The text of the latest user message (the task, or a later one), which DeerFlow's routing matches. */
function latestUserText(messages: readonly ChatMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message.role === 'user') return message.content;
  }
  return undefined;
}

/**
 * The deferred tools `tool_search.auto_promote_top_k` promotes before this call, not promoted yet: their specs
 * are sent now and the workflow records them (ModelCallResult.auto_promoted) as it records a search's.
 */
function autoPromotedTools(
  catalog: McpCatalog | undefined,
  filter: McpToolFilter,
  promoted: readonly string[],
  messages: readonly ChatMessage[],
): string[] {
  if (catalog === undefined || filter.auto_promote_top_k === undefined) return [];
  const routed = catalog.tools(filter).flatMap((entry) => routedTool(catalog, entry) ?? []);
  if (routed.length === 0) return [];
  const matched = autoPromotions(routed, latestUserText(messages), filter.auto_promote_top_k);
  return matched.filter((name) => !promoted.includes(name));
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
    const task = catalog.taskFor(call.name);
    info[call.name] = {
      ...(tool.read_only && !task && { read_only: true as const }),
      timeout_seconds: server.settings.tool_timeout_seconds,
      ...(task && { task }),
    };
  }
  return Object.keys(info).length > 0 ? info : undefined;
}
