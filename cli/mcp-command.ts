/**
 * `subagents mcp list`: connects to the config's MCP servers as a worker would (`mcp_servers:`, and
 * extensions_config's), prints each server's state and its tools as the model will see them, and
 * disconnects. Exit code 0 when every enabled server answered, 1 when one is down. A running worker lists its
 * servers' tools again on SIGHUP (`kill -HUP <pid>`).
 */
import { listMcpServers, type McpServerListing } from '../worker/mcp';
import { loadCommandConfig } from './command-setup';
import { parseFlags, UsageError } from './flags';

export async function mcpCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'list') throw new UsageError(`mcp: unknown subcommand ${JSON.stringify(sub ?? '')} (list)`);
  const { values, positionals } = parseFlags(rest, {}, 'mcp list');
  if (positionals.length > 0)
    throw new UsageError(`mcp list: unexpected argument ${JSON.stringify(positionals[0])}`);
  const config = loadCommandConfig(values);
  const listing = await listMcpServers(config.mcp_servers);
  if (values.json === true) process.stdout.write(`${JSON.stringify(listing, null, 2)}\n`);
  else process.stdout.write(`${listingLines(listing).join('\n')}\n`);
  return listing.some((server) => server.state === 'down') ? 1 : 0;
}

function listingLines(listing: McpServerListing[]): string[] {
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
