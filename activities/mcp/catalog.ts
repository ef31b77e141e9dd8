/**
 * The MCP tools of one worker process: it connects to the enabled servers when the worker starts, keeps the
 * tools each listed, and lists them again on `refresh()` (SIGHUP) and, for a server that is down, every
 * `retryMs` in the background. A server that is down never stops the worker: its tools are missing until it
 * comes back, and a call to it becomes an error tool message.
 *
 * The worker hands its catalog to the activities it registers (createProjectActivities).
 */
import type { McpServersConfig } from '../../contracts/config/mcp';
import { mcpTaskPolling, type McpTasksConfig } from '../../contracts/config/mcp-tasks';
import { mcpFilterAllows, splitMcpToolName, type McpToolFilter } from '../../contracts/mcp';
import type { McpTaskCallInfo } from '../../contracts/mcp-tasks';
import { McpServerConnection, type McpToolEntry } from './server-connection';

/** How often a server that is down is tried again in the background. */
export const DEFAULT_MCP_RETRY_MS = 30_000;

export interface McpCatalogOptions {
  /** Where `$NAME` values of env and headers are read (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  /** Where the state lines go (one per server at start, and when one goes down or comes back). */
  say?: (line: string) => void;
  retryMs?: number;
  /** `mcp_tasks:`: with `enabled`, a toolset's submit tool waits for its task (and the other tools are hidden). */
  tasks?: McpTasksConfig;
}

/** One line for a server: its name, state and tools (or why it is down). */
export function describeMcpServer(server: McpServerConnection): string {
  const transport = server.settings.type;
  if (server.state === 'disabled') return `MCP server ${server.name}: disabled (enabled: false)`;
  if (server.state === 'down') {
    return `MCP server ${server.name} (${transport}): down (${server.reason ?? 'not connected'}); tried again later and on SIGHUP`;
  }
  const skipped =
    server.skipped.length === 0
      ? ''
      : `; left out (names not usable as tool names): ${server.skipped.join(', ')}`;
  // A task toolset's status, cancel and input tools are the waiting's own: the line names the toolset instead.
  const toolsets = server.settings.task_toolsets;
  const internal = toolsets.flatMap((set) => [set.status_tool, set.cancel_tool, set.input_tool]);
  const offered = server.tools.filter((tool) => !internal.includes(tool.tool));
  const names = offered.map((tool) => tool.name).join(', ') || 'none';
  const tasks =
    toolsets.length === 0
      ? ''
      : `; task toolsets: ${toolsets.map((set) => `${set.name} (${set.submit_tool})`).join(', ')}`;
  return `MCP server ${server.name} (${transport}): ${offered.length} tools: ${names}${tasks}${skipped}`;
}

export class McpCatalog {
  private readonly connections: McpServerConnection[];
  private readonly say: (line: string) => void;
  private readonly tasks?: McpTasksConfig;
  private retryTimer?: NodeJS.Timeout;

  private constructor(servers: McpServersConfig, options: McpCatalogOptions) {
    const env = options.env ?? process.env;
    this.say = options.say ?? ((line) => process.stderr.write(`${line}\n`));
    if (options.tasks?.enabled) this.tasks = options.tasks;
    const onDown = (server: McpServerConnection) => this.say(describeMcpServer(server));
    this.connections = Object.entries(servers).map(
      ([name, settings]) => new McpServerConnection(name, settings, env, onDown),
    );
    const retryMs = options.retryMs ?? DEFAULT_MCP_RETRY_MS;
    if (this.connections.some((server) => server.state !== 'disabled')) {
      this.retryTimer = setInterval(() => void this.retryDown(), retryMs);
      this.retryTimer.unref();
    }
  }

  /** Connects to every enabled server at once and lists their tools; says one line per server. */
  static async start(servers: McpServersConfig, options: McpCatalogOptions = {}): Promise<McpCatalog> {
    const catalog = new McpCatalog(servers, options);
    await Promise.all(catalog.connections.map((server) => server.connect()));
    for (const server of catalog.connections) catalog.say(describeMcpServer(server));
    return catalog;
  }

  servers(): readonly McpServerConnection[] {
    return this.connections;
  }

  server(name: string): McpServerConnection | undefined {
    return this.connections.find((server) => server.name === name);
  }

  /**
   * The tools of the connected servers that `filter` allows, in the config's server order. A task toolset's
   * status, cancel and input tools are the waiting's own: no agent sees or calls them (as in DeerFlow).
   */
  tools(filter: McpToolFilter): McpToolEntry[] {
    return this.connections
      .filter((server) => server.state === 'connected')
      .flatMap((server) => server.tools)
      .filter((tool) => mcpFilterAllows(filter, tool.name) && !this.isTaskInternal(tool.server, tool.tool));
  }

  /** Whether `tool` of `server` is a toolset's status, cancel or input tool (the model may not call it). */
  isTaskInternal(server: string, tool: string): boolean {
    const toolsets = this.server(server)?.settings.task_toolsets ?? [];
    return toolsets.some((set) => [set.status_tool, set.cancel_tool, set.input_tool].includes(tool));
  }

  /** For a toolset's submit tool (`<server>__<submit_tool>`) while `mcp_tasks` is on: how its task is waited for. */
  taskFor(name: string): McpTaskCallInfo | undefined {
    const split = splitMcpToolName(name);
    const server = split && this.server(split.server);
    const toolset = server?.settings.task_toolsets.find((set) => set.submit_tool === split?.tool);
    if (!this.tasks || !server || !toolset) return undefined;
    return { server: server.name, toolset, polling: mcpTaskPolling(this.tasks) };
  }

  /** The tool by its full name, if a connected server lists it. */
  tool(name: string): McpToolEntry | undefined {
    const split = splitMcpToolName(name);
    const server = split && this.server(split.server);
    if (!split || server?.state !== 'connected') return undefined;
    return server.tools.find((tool) => tool.tool === split.tool);
  }

  /** Lists every server's tools again, connecting those that are down (SIGHUP); says one line per server. */
  async refresh(): Promise<void> {
    await Promise.all(this.connections.map((server) => server.refresh()));
    for (const server of this.connections) this.say(describeMcpServer(server));
  }

  async close(): Promise<void> {
    clearInterval(this.retryTimer);
    await Promise.all(this.connections.map((server) => server.close()));
  }

  private async retryDown(): Promise<void> {
    const down = this.connections.filter((server) => server.state === 'down');
    await Promise.all(down.map((server) => server.connect()));
    for (const server of down) if (server.state === 'connected') this.say(describeMcpServer(server));
  }
}
