/**
 * DeerFlow's `tools:` and `tool_groups:` as its users write them: the default list loads as is, every agent but
 * `bash` gets every configured tool, `tool_groups` and per-agent `tools:` filter, and a wrong entry is refused
 * naming the key and what is accepted.
 */
import { parseConfig } from '../../../../contracts/config';
import { resolveAgent } from '../../../../contracts/config/agents';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';
import { configProblems } from '../../../support/config-problems';
import { DEERFLOW_DEFAULT_TOOLS } from '../../../support/deerflow-tools';

const EVERY_TOOL = [
  'bash',
  'ls',
  'read_file',
  'write_file',
  'str_replace',
  'glob',
  'grep',
  'web_search',
  'web_fetch',
  'image_search',
];

describe("DeerFlow's default tools list", () => {
  const { config, warnings } = parseConfig(DEERFLOW_DEFAULT_TOOLS);

  it('loads without a problem or a warning, each entry bound to its implementation', () => {
    expect(warnings).toEqual([]);
    expect(config.tools?.map((entry) => [entry.name, entry.provider])).toEqual([
      ['web_search', 'ddg_search'],
      ['web_fetch', 'jina_ai'],
      ['image_search', 'image_search'],
      ['ls', 'sandbox'],
      ['read_file', 'sandbox'],
      ['glob', 'sandbox'],
      ['grep', 'sandbox'],
      ['write_file', 'sandbox'],
      ['str_replace', 'sandbox'],
      ['bash', 'sandbox'],
    ]);
    expect(config.tools?.[1]).toMatchObject({ group: 'web', timeout: 10 });
  });

  it('gives general-purpose, custom agents and the lead every configured tool, and bash its own five', () => {
    const withCustom = parseConfig({
      ...DEERFLOW_DEFAULT_TOOLS,
      subagents: { custom_agents: { researcher: { description: 'Research', system_prompt: 'Research.' } } },
    }).config;
    expect(resolveAgent(withCustom, 'general-purpose').tools).toEqual(EVERY_TOOL);
    expect(resolveAgent(withCustom, 'researcher').tools).toEqual(EVERY_TOOL);
    expect(resolveAgent(withCustom, 'bash').tools).toEqual([
      'bash',
      'ls',
      'read_file',
      'write_file',
      'str_replace',
    ]);
    expect(buildLeadRunInput(withCustom, { prompt: 'p', workspace: '/w' }).tools).toEqual(EVERY_TOOL);
  });

  it('leaves out a tool the list leaves out', () => {
    const tools = (DEERFLOW_DEFAULT_TOOLS.tools as { name: string }[]).filter((t) => t.name !== 'bash');
    const { config: noBash } = parseConfig({ ...DEERFLOW_DEFAULT_TOOLS, tools });
    expect(resolveAgent(noBash, 'general-purpose').tools).not.toContain('bash');
  });
});

describe('filters', () => {
  it('keeps the sandbox’s five tools when the config has no tools: section', () => {
    const { config } = parseConfig({});
    expect(resolveAgent(config, 'general-purpose').tools).toEqual(EVERY_TOOL.slice(0, 5));
  });

  it('narrows an agent to its tool_groups, and a per-agent tools: list beside them', () => {
    const { config } = parseConfig({
      ...DEERFLOW_DEFAULT_TOOLS,
      subagents: {
        agents: { 'general-purpose': { tool_groups: ['web', 'file:read'] } },
        custom_agents: {
          reader: { description: 'Reads', system_prompt: 'Read.', tools: ['read_file', 'web_fetch', 'bash'] },
        },
      },
    });
    expect(resolveAgent(config, 'general-purpose').tools).toEqual([
      'ls',
      'read_file',
      'glob',
      'grep',
      'web_search',
      'web_fetch',
      'image_search',
    ]);
    expect(resolveAgent(config, 'reader').tools).toEqual(['bash', 'read_file', 'web_fetch']);
  });
});

describe('a wrong entry', () => {
  const refused = (tools: unknown[], extra: Record<string, unknown> = {}) =>
    configProblems({ tools, ...extra });

  it('names the implementations it accepts', () => {
    expect(
      refused([{ name: 'web_search', use: 'deerflow.community.infoquest.tools:web_search_tool' }]),
    ).toEqual([
      'tools[0].use: "deerflow.community.infoquest.tools:web_search_tool" is not an implementation of web_search ' +
        "this project has (deerflow.community.<ddg_search|tavily|brave|serper|searxng|exa|firecrawl>.tools:web_search_tool, or the provider's name)",
    ]);
  });

  it('refuses a tool listed twice', () => {
    expect(
      refused([
        { name: 'web_fetch', use: 'jina_ai' },
        { name: 'web_fetch', use: 'exa' },
      ]),
    ).toEqual(['tools[1].name: "web_fetch" is listed twice (tools[0] has it; one implementation a tool)']);
  });

  it('refuses a literal key, a typo of a key and an unknown tool', () => {
    expect(
      refused([
        { name: 'web_search', use: 'tavily', api_key: 'tvly-literal' },
        { name: 'web_fetch', use: 'jina_ai', max_result: 3 },
        { name: 'browser_click', use: 'x' },
      ]),
    ).toEqual([
      expect.stringMatching(/^tools\[0\]\.api_key: is a literal key, which is refused/),
      expect.stringMatching(/^tools\[1\]\.max_result: unknown key/),
      expect.stringMatching(/^tools\[2\]\.name: "browser_click" is not a tool this project has/),
    ]);
  });

  it('drops a key DeerFlow may have added since, with a warning, and its unused keys without one', () => {
    const { config, warnings } = parseConfig({
      tools: [{ name: 'web_fetch', use: 'jina_ai', proxy: '$HTTPS_PROXY', trust_env: true, render_js: true }],
    });
    expect(warnings).toEqual(['ignoring DeerFlow keys this project does not read (yet): tools[0].render_js']);
    expect(config.tools).toEqual([{ name: 'web_fetch', provider: 'jina_ai' }]);
  });

  it('refuses an agent’s tool group that no entry has', () => {
    expect(
      refused([{ name: 'web_search', use: 'ddg_search', group: 'web' }], {
        subagents: { agents: { 'general-purpose': { tool_groups: ['wbe'] } } },
      }),
    ).toEqual(['subagents.agents.general-purpose.tool_groups[0]: "wbe" is not a tool group (web)']);
  });
});
