/**
 * MCP servers in DeerFlow's shape: `mcp_servers:` in the config file, or the `mcpServers` object of DeerFlow's
 * `extensions_config.json` (named by `extensions_config:`, read by worker/config.ts), each entry
 * `{command, args, env}` (stdio) or `{url, headers}` (streamable HTTP, or DeerFlow's `sse`), `enabled` per
 * server. `$NAME` values in `env` and `headers` stay references here: the worker that connects reads them from
 * its own environment (activities/mcp/), so they never reach a workflow input. Pure: no Node APIs.
 */
import { z } from 'zod';
import {
  ALL_MCP_TOOLS,
  DEFAULT_MCP_OUTPUT_CAP_CHARS,
  DEFAULT_MCP_TOOL_TIMEOUT_SECONDS,
  isMcpToolPattern,
  MCP_SERVER_NAME_PATTERN,
  splitMcpToolName,
  type McpToolFilter,
} from '../mcp';
import { formatPath } from '../problems';
import {
  bool,
  ConfigError,
  configIssueProblems,
  httpUrl,
  listOf,
  mappingOf,
  oneOf,
  section,
  seconds,
  text,
  wholeNumber,
} from './fields';
import { isMapping } from './deerflow';
import { checkSkillStates, extensionsConfigError, type SkillStates } from './skills';
import { typeError, type RawIssue } from './value-types';
import { mcpTaskToolset, toolsetBindingProblems } from './mcp-tasks';

export const MCP_TRANSPORTS = ['stdio', 'http', 'sse'] as const;
export const MCP_ROUTING_MODES = ['off', 'prefer'] as const;
export type McpTransport = (typeof MCP_TRANSPORTS)[number];

const anyText = z.string({ error: 'is not text' });

/**
 * DeerFlow's MCP routing hints: `mode: prefer` with `keywords` marks a tool to prefer for matching requests;
 * with `tool_search` its deferred schema is promoted before a model call whose latest user message holds a
 * keyword (`priority` 0..100 orders the matches). Per tool, `tools.<tool>.routing` overrides the fields it sets.
 */
const mcpRouting = section('mcp_servers.<name>.routing', {
  mode: oneOf(MCP_ROUTING_MODES).optional(),
  priority: z
    .number({ error: 'is not a number' })
    .int({ error: 'is not a whole number' })
    .transform((priority) => Math.min(100, Math.max(0, priority)))
    .optional(),
  keywords: listOf(anyText, 'keywords').optional(),
});

// DeerFlow allows other keys in a tool's override; only `routing` is read.
const mcpToolOverride = z.looseObject({ routing: mcpRouting.optional() });

const mcpServer = section('mcp_servers.<name>', {
  enabled: bool.default(true),
  // Absent: stdio when `command` is given, http when `url` is.
  type: oneOf(MCP_TRANSPORTS).optional(),
  command: text.optional(),
  args: listOf(anyText, 'arguments').default([]),
  env: mappingOf(anyText, 'environment variables').default({}),
  url: httpUrl.optional(),
  headers: mappingOf(anyText, 'HTTP headers').default({}),
  description: anyText.optional(),
  tool_timeout_seconds: seconds.default(DEFAULT_MCP_TOOL_TIMEOUT_SECONDS),
  output_cap_chars: wholeNumber(1).default(DEFAULT_MCP_OUTPUT_CAP_CHARS),
  routing: mcpRouting.optional(),
  tools: mappingOf(mcpToolOverride, 'tool overrides').optional(),
  // DeerFlow's long-running task tools (contracts/config/mcp-tasks.ts): each a submit / status / cancel group.
  task_toolsets: listOf(mcpTaskToolset, 'task toolsets').default([]),
}).transform((server, ctx) => {
  const type: McpTransport | undefined =
    server.type ?? (server.command !== undefined ? 'stdio' : server.url !== undefined ? 'http' : undefined);
  const issue = (path: string, message: string) =>
    ctx.issues.push({ code: 'custom', path: [path], input: undefined, message });
  for (const problem of toolsetBindingProblems(server.task_toolsets)) {
    ctx.issues.push({
      code: 'custom',
      path: ['task_toolsets', ...problem.path],
      input: undefined,
      message: problem.message,
    });
  }
  if (type === undefined) {
    issue('command', 'is missing (a stdio server needs command; an http server needs url)');
    return z.NEVER;
  }
  if (type === 'stdio') {
    if (server.command === undefined) issue('command', 'is missing (type stdio runs this command)');
    if (server.url !== undefined) issue('url', 'is for http and sse servers (type stdio runs command)');
    if (Object.keys(server.headers).length > 0) issue('headers', 'are for http and sse servers');
  } else {
    if (server.url === undefined) issue('url', `is missing (type ${type} connects to this URL)`);
    if (server.command !== undefined) issue('command', `is for stdio servers (type ${type} connects to url)`);
    if (server.args.length > 0) issue('args', 'are for stdio servers');
    if (Object.keys(server.env).length > 0) issue('env', 'is for stdio servers (send secrets as headers)');
  }
  return { ...server, type };
});

export type McpServerConfig = z.output<typeof mcpServer>;
export type McpServersConfig = Record<string, McpServerConfig>;

/** `mcp_servers:`: server name → server. The names become tool-name prefixes, so they are checked. */
export const mcpServersSection = z.record(z.string().regex(MCP_SERVER_NAME_PATTERN), mcpServer, {
  error: (issue: RawIssue) =>
    issue.code === 'invalid_key'
      ? 'is not a usable server name (letters, digits, - and single _; it prefixes its tools: <server>__<tool>)'
      : typeError('a mapping of MCP servers')(issue),
});

/**
 * The `mcpServers` object of DeerFlow's extensions_config.json, checked as `mcp_servers:` is, and its `skills`
 * object (which skills are switched on, config/skills.ts).
 */
export function parseExtensionsConfig(
  raw: unknown,
  file: string,
): { servers: McpServersConfig; skills: SkillStates; warnings: string[] } {
  if (!isMapping(raw))
    throw new ConfigError([`extensions_config ${file}: is not a JSON object with mcpServers`]);
  const ignored = Object.keys(raw).filter((key) => key !== 'mcpServers' && key !== 'skills');
  const warnings =
    ignored.length === 0
      ? []
      : [`extensions_config ${file}: ignoring keys this project does not read: ${ignored.join(', ')}`];
  const parsed = mcpServersSection.safeParse(raw.mcpServers ?? {}, { reportInput: true });
  const skills = checkSkillStates(raw);
  const problems = [
    ...(parsed.success
      ? []
      : parsed.error.issues.flatMap((issue) =>
          configIssueProblems({ ...issue, path: ['mcpServers', ...issue.path] }),
        )),
    ...skills.problems,
  ];
  if (!parsed.success || problems.length > 0) throw extensionsConfigError(file, problems);
  return { servers: parsed.data, skills: skills.states, warnings };
}

export type McpRoutingConfig = NonNullable<McpServerConfig['routing']>;

/** A tool's routing as DeerFlow merges it: the server's, then the fields its `tools.<tool>.routing` sets. */
export function effectiveMcpRouting(server: McpServerConfig, tool: string): McpRoutingConfig {
  const override = server.tools?.[tool]?.routing ?? {};
  return {
    ...server.routing,
    ...Object.fromEntries(Object.entries(override).filter(([, v]) => v !== undefined)),
  };
}

/** Whether a server's routing (its own or a tool's) can prefer some tool: `mode: prefer` somewhere. */
export function hasMcpRouting(server: McpServerConfig): boolean {
  const overrides = Object.values(server.tools ?? {}).map((tool) => tool.routing?.mode);
  return server.routing?.mode === 'prefer' || overrides.includes('prefer');
}

/** `extensions_config:`: a path (relative to the config file) of DeerFlow's extensions_config.json. */
export const extensionsConfigKey = text;

/**
 * An agent's MCP filter from its `tools.allow` / `deny` (the entries that name MCP tools); without an allow
 * list, `allByDefault` decides (every MCP tool, or none). Undefined when the agent gets no MCP tool, or when the
 * config has no MCP server: its input then is what it was before MCP tools existed.
 */
export function resolveMcpFilter(
  servers: McpServersConfig,
  allow: readonly string[] | undefined,
  deny: readonly string[] | undefined,
  allByDefault: boolean,
): McpToolFilter | undefined {
  if (Object.keys(servers).length === 0) return undefined;
  const allowed =
    allow === undefined ? (allByDefault ? [ALL_MCP_TOOLS] : []) : allow.filter(isMcpToolPattern);
  if (allowed.length === 0) return undefined;
  return { allow: allowed, deny: (deny ?? []).filter(isMcpToolPattern) };
}

/** The filter of every agent that gets all MCP tools by default (the lead's). */
export function allMcpTools(servers: McpServersConfig): McpToolFilter | undefined {
  return resolveMcpFilter(servers, undefined, undefined, true);
}

/** Filter entries naming a server the config does not list: they match nothing (a typo?). */
export function unknownMcpServerWarnings(
  servers: McpServersConfig,
  filters: { where: (string | number)[]; entries: readonly string[] }[],
): string[] {
  const out: string[] = [];
  for (const { where, entries } of filters) {
    for (const entry of entries) {
      const server = entry === ALL_MCP_TOOLS ? undefined : splitMcpToolName(entry)?.server;
      if (server !== undefined && !Object.hasOwn(servers, server)) {
        const known = Object.keys(servers).join(', ') || 'none';
        out.push(`${formatPath(where)}: ${entry} names no configured MCP server (mcp_servers: ${known})`);
      }
    }
  }
  return out;
}
