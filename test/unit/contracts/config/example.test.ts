import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { CONFIG_KEYS, defaultConfig, parseConfig } from '../../../../contracts/config';
import { resolveAgent } from '../../../../contracts/config/agents';

/** The repository root, found from wherever the compiled test runs. */
function repoFile(name: string): string {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  throw new Error(`${name} not found above ${__dirname}`);
}

/** The example with every commented-out key switched on (prose and banner comments stay comments). */
function uncommented(text: string): string {
  return text.replace(/^(\s*)# (\s*(?:- )?[a-z_][a-z0-9_-]*:(?:\s|$))/gm, '$1$2');
}

describe('config.example.yaml', () => {
  const text = readFileSync(repoFile('config.example.yaml'), 'utf8');

  it('parses without problems or warnings and shows exactly the defaults', () => {
    const { config, warnings } = parseConfig(parse(text));
    expect(warnings).toEqual([]);
    expect(config).toEqual(defaultConfig());
  });

  it('shows every key the config accepts, each with a comment', () => {
    const lines = text.split('\n');
    const missing = Object.entries(CONFIG_KEYS).flatMap(([where, keys]) =>
      keys
        .filter((key) => !lines.some((line) => new RegExp(`^[\\s#-]*${key}:.*\\s# `).test(line)))
        .map((key) => `${where}.${key}`),
    );
    expect(missing).toEqual([]);
  });

  it('has commented-out examples that are a valid config once switched on', () => {
    const { config, warnings } = parseConfig(parse(uncommented(text)));
    expect(warnings).toEqual([]);
    expect(config.models.map((model) => [model.name, model.provider])).toEqual([
      ['scripted', 'scripted'],
      ['gpt-4o-mini', 'openai'],
      ['claude', 'anthropic'],
      ['gemini', 'google'],
      ['bedrock-claude', 'bedrock'],
      ['azure-gpt', 'azure_openai'],
      ['qwen-local', 'ollama'],
    ]);
    expect(config.subagent_runtime.max_starts_per_second).toBe(5);
    expect(config.loop_detection.tool_freq_overrides).toEqual({ bash: { warn: 150, hard_limit: 300 } });
    expect(config.temporal).toMatchObject({ address: 'localhost:7233', api_key_env: 'TEMPORAL_API_KEY' });
    expect(resolveAgent(config, 'general-purpose')).toMatchObject({
      max_turns: 250,
      tools: ['bash', 'ls', 'read_file'],
    });
    expect(resolveAgent(config, 'analysis')).toMatchObject({ max_turns: 50, timeout_seconds: 900 });
    expect(config.tool_output).toMatchObject({
      externalize_min_chars: 12000,
      tool_overrides: { web_search: 8000 },
    });
    expect(config.read_before_write).toEqual({ enabled: true });
  });
});
