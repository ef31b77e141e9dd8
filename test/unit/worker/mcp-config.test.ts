import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../../worker/config';

function files(config: string, extensions?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-config-'));
  writeFileSync(join(dir, 'config.yaml'), config);
  if (extensions !== undefined) writeFileSync(join(dir, 'extensions_config.json'), extensions);
  return join(dir, 'config.yaml');
}

describe('extensions_config', () => {
  it("adds DeerFlow's mcpServers to mcp_servers, the path taken from the config file's folder", () => {
    const path = files(
      'extensions_config: ./extensions_config.json\nmcp_servers:\n  local: {command: ./server}\n',
      JSON.stringify({ mcpServers: { github: { type: 'http', url: 'http://localhost:9/mcp' } } }),
    );
    const { config, warnings } = loadConfig(path, {});
    expect(Object.keys(config.mcp_servers)).toEqual(['local', 'github']);
    expect(config.mcp_servers.github).toMatchObject({ type: 'http', url: 'http://localhost:9/mcp' });
    expect(warnings).toEqual([]);
  });

  it('refuses a missing file, bad JSON and a server named twice', () => {
    expect(() => loadConfig(files('extensions_config: ./nope.json\n'), {})).toThrow(
      /nope\.json does not exist/,
    );
    expect(() => loadConfig(files('extensions_config: ./extensions_config.json\n', '{'), {})).toThrow(
      /extensions_config\.json is not valid JSON/,
    );
    expect(() =>
      loadConfig(
        files(
          'extensions_config: ./extensions_config.json\nmcp_servers:\n  a: {command: x}\n',
          JSON.stringify({ mcpServers: { a: { command: 'y' } } }),
        ),
        {},
      ),
    ).toThrow(/mcp_servers\.a: is also in extensions_config .*extensions_config\.json \(keep one\)/);
  });

  it('warns about a tool filter that names no configured server', () => {
    const path = files(
      'mcp_servers:\n  github: {command: x}\nsubagents:\n  custom_agents:\n' +
        '    c: {description: d, system_prompt: s, tools: [ls, gihub__*]}\n',
    );
    expect(loadConfig(path, {}).warnings).toEqual([
      'subagents.custom_agents.c.tools.allow: gihub__* names no configured MCP server (mcp_servers: github)',
    ]);
  });
});
