/**
 * Deferred MCP tools (`tool_search.enabled`, as in DeerFlow): after the agent's allow/deny filter, its MCP tools
 * reach the model by name only, in an `<available-deferred-tools>` section of the system message, beside one
 * `tool_search` tool. A search returns the matched tools' full schemas and promotes them: from the next model
 * call on their schemas are sent and they may be called. Promotions belong to one task run (workflow state,
 * carried across continue-as-new; a subagent starts with none). The query language and the section are pure and
 * live here; the catalog search runs in an activity (activities/mcp/tool-search.ts). No Node APIs: workflows
 * import it.
 */
import { compileUserPattern, literalUserPattern, type UserPattern } from './patterns';
import type { ToolCallResult } from './tools';

export const TOOL_SEARCH_TOOL_NAME = 'tool_search';

/** Results of a keyword or regex search (DeerFlow's MAX_RESULTS); `select:` returns every tool it names. */
export const TOOL_SEARCH_MAX_RESULTS = 5;

/** Characters of a query read: a model's regex runs over every tool's text, so its size is bounded. */
export const TOOL_SEARCH_MAX_QUERY_CHARS = 500;

/** What a search sees of a tool: its full name and its description. */
export interface SearchableTool {
  name: string;
  description: string;
}

/**
 * A query, as DeerFlow reads it: `select:a,b` (those tools by exact name), `+keyword rest` (tools whose name
 * contains the keyword, ranked by how often `rest` matches), or a regex over name and description (names
 * first). Case-insensitive; the regex runs on RE2's linear-time engine (contracts/patterns.ts), and one that it
 * does not compile is matched as literal text.
 */
export type ToolSearchQuery =
  | { kind: 'select'; names: string[] }
  | { kind: 'required'; keyword: string; rank?: string }
  | { kind: 'regex'; pattern: string };

export function parseToolSearchQuery(raw: string): ToolSearchQuery | undefined {
  const query = raw.trim();
  if (query === '') return undefined;
  if (query.startsWith('select:')) {
    const names = query
      .slice('select:'.length)
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    return { kind: 'select', names };
  }
  if (query.startsWith('+')) {
    const [keyword, ...rest] = query.slice(1).trim().split(/\s+/);
    if (!keyword) return undefined;
    const rank = rest.join(' ');
    return { kind: 'required', keyword: keyword.toLowerCase(), ...(rank !== '' && { rank }) };
  }
  return { kind: 'regex', pattern: query };
}

/** A model's regex on the linear-time engine (contracts/patterns.ts), or its text literally when RE2 refuses it. */
function caseInsensitive(pattern: string): UserPattern {
  const compiled = compileUserPattern(pattern, { ignoreCase: true });
  return 'problem' in compiled ? literalUserPattern(pattern, { ignoreCase: true }) : compiled;
}

function searchText(tool: SearchableTool): string {
  return `${tool.name} ${tool.description}`;
}

/** The tools a query matches, best first (stable: ties keep the catalog's order). */
export function searchTools<T extends SearchableTool>(tools: readonly T[], raw: string): T[] {
  const query = parseToolSearchQuery(raw.slice(0, TOOL_SEARCH_MAX_QUERY_CHARS));
  if (!query) return [];
  if (query.kind === 'select') return tools.filter((tool) => query.names.includes(tool.name));
  if (query.kind === 'required') {
    const candidates = tools.filter((tool) => tool.name.toLowerCase().includes(query.keyword));
    if (query.rank === undefined) return candidates.slice(0, TOOL_SEARCH_MAX_RESULTS);
    const rank = caseInsensitive(query.rank);
    const score = (tool: T) => rank.count(searchText(tool));
    return candidates
      .map((tool) => ({ tool, score: score(tool) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, TOOL_SEARCH_MAX_RESULTS)
      .map(({ tool }) => tool);
  }
  const regex = caseInsensitive(query.pattern);
  return tools
    .filter((tool) => regex.test(searchText(tool)))
    .map((tool) => ({ tool, score: regex.test(tool.name) ? 2 : 1 }))
    .sort((a, b) => b.score - a.score)
    .slice(0, TOOL_SEARCH_MAX_RESULTS)
    .map(({ tool }) => tool);
}

/** The tool message when nothing matched (DeerFlow's text). */
export function noToolsFoundText(query: string): string {
  return `No tools found matching: ${query}`;
}

/** The system message's section: every deferred tool by name, sorted (empty when there is none). */
export function deferredToolsSection(names: readonly string[]): string {
  if (names.length === 0) return '';
  return `<available-deferred-tools>\n${[...names].sort().join('\n')}\n</available-deferred-tools>`;
}

/** The promotions after a search: those so far, then the new ones in the order found (no repeats). */
export function promote(promoted: readonly string[] | undefined, found: readonly string[]): string[] {
  const out = [...(promoted ?? [])];
  for (const name of found) if (!out.includes(name)) out.push(name);
  return out;
}

/** What the MCP tool activity answers for a deferred tool that was not promoted (visibility is not authority). */
export function notPromotedText(name: string): string {
  return (
    `Tool "${name}" is a deferred tool whose schema has not been loaded in this run: search for it with ` +
    `${TOOL_SEARCH_TOOL_NAME} first (e.g. query "select:${name}"), then call it.`
  );
}

/** A `tool_search` call's result: the tool message, and the tools it promoted (recorded in workflow state). */
export interface ToolSearchResult extends ToolCallResult {
  promoted: string[];
}

/** `tool_search.auto_promote_top_k` as DeerFlow has it: 3 unless set, clamped to 1..5. */
export const DEFAULT_AUTO_PROMOTE_TOP_K = 3;
export const AUTO_PROMOTE_TOP_K_MIN = 1;
export const AUTO_PROMOTE_TOP_K_MAX = 5;

export function clampAutoPromoteTopK(k: number): number {
  return Math.max(AUTO_PROMOTE_TOP_K_MIN, Math.min(AUTO_PROMOTE_TOP_K_MAX, Math.trunc(k)));
}

/** A deferred tool's routing metadata, as the auto-promotion reads it (DeerFlow's routing index entry). */
export interface RoutedTool {
  name: string;
  priority: number;
  keywords: readonly string[];
}

/**
 * The deferred tools promoted before a model call (DeerFlow's McpRoutingMiddleware): those whose keywords occur
 * in the latest user message (case-insensitive substring, as DeerFlow matches), highest priority first, then by
 * name, at most `topK` (those already promoted count: the call then promotes fewer new ones). Over-matching
 * only shows an extra schema: the agent's filter and an active skill's policy still decide what may run.
 */
export function autoPromotions(
  routed: readonly RoutedTool[],
  userText: string | undefined,
  topK: number,
): string[] {
  if (userText === undefined || userText.trim() === '') return [];
  const haystack = userText.toLowerCase();
  const matched = routed.filter((tool) =>
    tool.keywords.some((keyword) => keyword.trim() !== '' && haystack.includes(keyword.trim().toLowerCase())),
  );
  matched.sort((a, b) => b.priority - a.priority || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return matched.slice(0, clampAutoPromoteTopK(topK)).map((tool) => tool.name);
}
