import { parse } from 'yaml';
import { ConfigError, parseConfig } from '../../../../contracts/config';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';
import { leadRunInputProblems } from '../../../../contracts/inputs';
import { childScope } from '../../../../contracts/run-scope';
import { gatedPath, overBudget, readMarkKey } from '../../../../contracts/tool-output';

const MODEL = { name: 'm', provider: 'scripted' };

function leadInput(raw: Record<string, unknown>) {
  const { config, warnings } = parseConfig({ models: [MODEL], ...raw });
  return { input: buildLeadRunInput(config, { prompt: 'p', workspace: '/srv/work/1' }), warnings };
}

// DeerFlow's config.example.yaml, the two sections as it writes them.
const DEERFLOW_SECTIONS = `
tool_output:
  enabled: true
  externalize_min_chars: 12000
  preview_head_chars: 2000
  preview_tail_chars: 1000
  fallback_max_chars: 30000
  fallback_head_chars: 8000
  fallback_tail_chars: 3000
  storage_subdir: ".tool-results"
  exempt_tools:
    - read_file
    - read_file_tool
read_before_write:
  enabled: true
`;

describe('tool_output and read_before_write: DeerFlow sections, read into the run scope', () => {
  it('reads DeerFlow’s sections as written, with no warning, into the scope every child inherits', () => {
    const { input, warnings } = leadInput(parse(DEERFLOW_SECTIONS) as Record<string, unknown>);
    expect(warnings).toEqual([]);
    expect(input.scope.tool_output).toEqual({
      externalize_min_chars: 12000,
      preview_head_chars: 2000,
      preview_tail_chars: 1000,
      fallback_max_chars: 30000,
      fallback_head_chars: 8000,
      fallback_tail_chars: 3000,
      storage_subdir: '.tool-results',
      exempt_tools: ['read_file', 'read_file_tool'],
    });
    expect(input.scope.read_before_write).toBe(true);
    expect(leadRunInputProblems(input)).toEqual([]);
    const child = childScope(input.scope, 'run', { workspace_key: 'k' });
    expect(child).toMatchObject({ tool_output: input.scope.tool_output, read_before_write: true });
  });

  it('fills the keys a section leaves out with DeerFlow’s defaults, and keeps tool_overrides', () => {
    const { input } = leadInput({
      tool_output: { externalize_min_chars: 1000, tool_overrides: { web_search: 8000, bash: 0 } },
      read_before_write: {},
    });
    expect(input.scope.tool_output).toMatchObject({
      externalize_min_chars: 1000,
      preview_head_chars: 2000,
      storage_subdir: '.tool-results',
      exempt_tools: ['read_file', 'read_file_tool'],
      tool_overrides: { web_search: 8000, bash: 0 },
    });
    expect(input.scope.read_before_write).toBe(true);
  });

  it('leaves both off when the sections are absent or disabled', () => {
    for (const raw of [{}, { tool_output: { enabled: false }, read_before_write: { enabled: false } }]) {
      const { input } = leadInput(raw);
      expect(input.scope.tool_output).toBeUndefined();
      expect(input.scope.read_before_write).toBeUndefined();
    }
  });

  it('refuses a storage_subdir that is not one folder name, and a negative threshold', () => {
    expect(() => leadInput({ tool_output: { storage_subdir: 'cache/results' } })).toThrow(ConfigError);
    expect(() => leadInput({ tool_output: { storage_subdir: '..' } })).toThrow(
      /tool_output\.storage_subdir: .*is not a single folder name/,
    );
    expect(() => leadInput({ tool_output: { externalize_min_chars: -1 } })).toThrow(
      /tool_output\.externalize_min_chars: -1 is out of range \(0 or more\)/,
    );
  });
});

describe('the pure rules', () => {
  it('marks a read under one key whatever the spelling of its path', () => {
    const key = readMarkKey('/srv/work/1', 'notes/a.md');
    expect(readMarkKey('/srv/work/1', './notes/../notes/a.md')).toBe(key);
    expect(readMarkKey('/srv/work/1', '/srv/work/1/notes/a.md')).toBe(key);
    expect(readMarkKey('/srv/work/1', 'notes/b.md')).not.toBe(key);
  });

  it('reads the path a gated call names, and nothing from arguments that are not JSON', () => {
    expect(gatedPath('{"path":"a.md","content":"x"}')).toBe('a.md');
    expect(gatedPath('{"content":"x"}')).toBeUndefined();
    expect(gatedPath('not json')).toBeUndefined();
  });

  it('budgets a result over its tool’s threshold or the fallback, never an exempt tool’s', () => {
    const { input } = leadInput({ tool_output: { externalize_min_chars: 100, tool_overrides: { ls: 0 } } });
    const settings = input.scope.tool_output;
    expect(overBudget(settings, 'bash', 101)).toBe(true);
    expect(overBudget(settings, 'bash', 100)).toBe(false);
    expect(overBudget(settings, 'read_file', 1_000_000)).toBe(false);
    expect(overBudget(settings, 'ls', 1000)).toBe(false);
    expect(overBudget(settings, 'ls', 30_001)).toBe(true);
    expect(overBudget(undefined, 'bash', 1_000_000)).toBe(false);
  });
});
