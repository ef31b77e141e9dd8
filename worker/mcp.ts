/**
 * A worker process's MCP servers: connected when the worker starts (one line per server), listed again on
 * SIGHUP, closed (stdio servers stopped) when the worker stops. A server that is down is said and retried;
 * it never stops the worker.
 */
import { McpCatalog } from '../activities/mcp';
import type { McpServersConfig } from '../contracts/config/mcp';

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
): Promise<WorkerMcp | undefined> {
  if (servers === undefined || Object.keys(servers).length === 0) return undefined;
  const catalog = await McpCatalog.start(servers, { say, env });
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
