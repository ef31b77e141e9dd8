/**
 * DeerFlow's extensions_config.json beside the config file: its `mcpServers` join `mcp_servers:` (a server
 * named in both is a problem), checked by the same rules. Then the agents' tool filters are checked against
 * the servers now known: an entry naming no server is a warning (it would match nothing).
 */
import { ConfigError, type Config } from '../contracts/config';
import { parseExtensionsConfig, unknownMcpServerWarnings } from '../contracts/config/mcp';
import { taskToolsetsWithoutRuntime } from '../contracts/config/mcp-tasks';
import { readExtensionsFile } from '../activities/extensions-file';

/** A config as loadConfig returns it (worker/config.ts). */
interface Loaded {
  config: Config;
  warnings: string[];
}

export function withExtensionsConfig<L extends Loaded>(loaded: L): L {
  const { config } = loaded;
  const warnings = [...loaded.warnings];
  let servers = config.mcp_servers;
  const file = config.extensions_config;
  if (file !== undefined) {
    const extension = parseExtensionsConfig(readExtensionsFile(file), file);
    const twice = Object.keys(extension.servers).filter((name) => Object.hasOwn(servers, name));
    if (twice.length > 0) {
      throw new ConfigError(
        twice.map((name) => `mcp_servers.${name}: is also in extensions_config ${file} (keep one)`),
      );
    }
    servers = { ...servers, ...extension.servers };
    warnings.push(...extension.warnings);
  }
  const withoutRuntime = taskToolsetsWithoutRuntime(servers, config.mcp_tasks);
  if (withoutRuntime.length > 0) throw new ConfigError(withoutRuntime);
  const { agents, custom_agents: customAgents } = config.subagents;
  const filters = [
    ...Object.entries(agents).map(([name, agent]) => ({
      where: ['subagents', 'agents', name, 'tools'],
      tools: agent.tools,
    })),
    ...Object.entries(customAgents).map(([name, agent]) => ({
      where: ['subagents', 'custom_agents', name, 'tools'],
      tools: agent.tools,
    })),
  ].flatMap(({ where, tools }) => [
    { where: [...where, 'allow'], entries: tools?.allow ?? [] },
    { where: [...where, 'deny'], entries: tools?.deny ?? [] },
  ]);
  warnings.push(...unknownMcpServerWarnings(servers, filters));
  return { ...loaded, config: { ...config, mcp_servers: servers }, warnings };
}
