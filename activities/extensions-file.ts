/**
 * DeerFlow's extensions_config.json (`extensions_config:`), read as JSON: its `mcpServers` for the MCP servers
 * (worker/mcp-config.ts, beside the config loader every command runs) and its `skills` states
 * (skills/catalog.ts): here, the floor both reach. A file that cannot be read or parsed is a ConfigError naming it.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../contracts/config';

export function readExtensionsFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError([
      `extensions_config: ${file} ${code === 'ENOENT' ? 'does not exist' : `cannot be read (${(err as Error).message})`}`,
    ]);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ConfigError([`extensions_config: ${file} is not valid JSON (${(err as Error).message})`]);
  }
}
