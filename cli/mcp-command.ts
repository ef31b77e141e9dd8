/**
 * `subagents mcp list`: connects to the config's MCP servers as a worker would (`mcp_servers:`, and
 * extensions_config's), prints each server's state and its tools as the model will see them, and
 * disconnects. Exit code 0 when every enabled server answered, 1 when one is down. A running worker lists its
 * servers' tools again on SIGHUP (`kill -HUP <pid>`).
 */
import { McpCatalog } from '../activities/mcp';
import { loadCommandConfig } from './command-setup';
import { parseFlags, UsageError } from './flags';

interface ServerListing {
  name: string;
  type: string;
  state: string;
  reason?: string;
  tools: { name: string; description: string; read_only: boolean }[];
  skipped?: string[];
}

export async function mcpCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'list') throw new UsageError(`mcp: unknown subcommand ${JSON.stringify(sub ?? '')} (list)`);
  const { values, positionals } = parseFlags(rest, {}, 'mcp list');
  if (positionals.length > 0)
    throw new UsageError(`mcp list: unexpected argument ${JSON.stringify(positionals[0])}`);
  const config = loadCommandConfig(values);
  const catalog = await McpCatalog.start(config.mcp_servers, { say: () => undefined });
  try {
    const listing: ServerListing[] = catalog.servers().map((server) => ({
      name: server.name,
      type: server.settings.type,
      state: server.state,
      ...(server.reason !== undefined && server.state !== 'connected' && { reason: server.reason }),
      tools: server.tools.map(({ name, description, read_only }) => ({ name, description, read_only })),
      ...(server.skipped.length > 0 && { skipped: server.skipped }),
    }));
    if (values.json === true) process.stdout.write(`${JSON.stringify(listing, null, 2)}\n`);
    else process.stdout.write(`${listingLines(listing).join('\n')}\n`);
    return listing.some((server) => server.state === 'down') ? 1 : 0;
  } finally {
    await catalog.close();
  }
}

function listingLines(listing: ServerListing[]): string[] {
  if (listing.length === 0) return ['no MCP servers configured (mcp_servers:, or extensions_config:)'];
  return listing.flatMap((server) => {
    const head = `${server.name} (${server.type}): ${server.state}${server.reason ? ` (${server.reason})` : ''}`;
    const tools = server.tools.map(
      (tool) => `  ${tool.name}${tool.read_only ? ' [read-only]' : ''}: ${tool.description.split('\n')[0]}`,
    );
    const skipped = server.skipped
      ? [`  left out (names not usable as tool names): ${server.skipped.join(', ')}`]
      : [];
    return [head, ...tools, ...skipped];
  });
}
