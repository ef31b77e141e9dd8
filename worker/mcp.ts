/**
 * A worker process's MCP servers: connected when the worker starts (one line per server), listed again on
 * SIGHUP, closed (stdio servers stopped) when the worker stops. A server that is down is said and retried;
 * it never stops the worker.
 */
import { McpCatalog } from '../activities/mcp';
import type { McpServersConfig } from '../contracts/config/mcp';
import type { McpTasksConfig } from '../contracts/config/mcp-tasks';

export interface WorkerMcp {
  catalog: McpCatalog;
  /** Removes the SIGHUP handler and closes every connection. */
  close(): Promise<void>;
}

/**
 * Connects to the enabled servers, for the worker to hand its catalog to its activities
 * (`createProjectWorker({ mcpCatalog })`); undefined when the config lists no server.
 */
export async function startWorkerMcp(
  servers: McpServersConfig | undefined,
  say: (line: string) => void,
  env: NodeJS.ProcessEnv = process.env,
  tasks?: McpTasksConfig,
): Promise<WorkerMcp | undefined> {
  if (servers === undefined || Object.keys(servers).length === 0) return undefined;
  const catalog = await McpCatalog.start(servers, { say, env, ...(tasks && { tasks }) });
  const onHangUp = () => {
    say("SIGHUP: listing the MCP servers' tools again");
    void catalog.refresh();
  };
  process.on('SIGHUP', onHangUp);
  return {
    catalog,
    close: async () => {
      process.off('SIGHUP', onHangUp);
      await catalog.close();
    },
  };
}

/** One MCP server as a worker connecting now finds it: its state, and its tools as the model will see them. */
export interface McpServerListing {
  name: string;
  type: string;
  state: string;
  reason?: string;
  tools: { name: string; description: string; read_only: boolean }[];
  skipped?: string[];
}

/** Connects to the enabled servers as a worker would, lists each one, and disconnects (`subagents mcp list`). */
export async function listMcpServers(servers: McpServersConfig): Promise<McpServerListing[]> {
  const catalog = await McpCatalog.start(servers, { say: () => undefined });
  try {
    return catalog.servers().map((server) => ({
      name: server.name,
      type: server.settings.type,
      state: server.state,
      ...(server.reason !== undefined && server.state !== 'connected' && { reason: server.reason }),
      tools: server.tools.map(({ name, description, read_only }) => ({ name, description, read_only })),
      ...(server.skipped.length > 0 && { skipped: server.skipped }),
    }));
  } finally {
    await catalog.close();
  }
}
