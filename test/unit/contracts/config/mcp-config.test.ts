import { parseConfig } from '../../../../contracts/config';
import { resolveAgent } from '../../../../contracts/config/agents';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';
import { effectiveMcpRouting, parseExtensionsConfig } from '../../../../contracts/config/mcp';
import { leadRunInputProblems } from '../../../../contracts/inputs';
import { configProblems } from '../../../support/config-problems';

const servers = {
  github: { command: 'npx', args: ['-y', 'server-github'], env: { GITHUB_TOKEN: '$GITHUB_TOKEN' } },
  docs: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } },
};

describe('mcp_servers', () => {
  it('reads DeerFlow-shaped servers with their defaults; $NAME values stay references for the worker', () => {
    const { config } = parseConfig({ mcp_servers: servers }, { env: { GITHUB_TOKEN: 'ghp-secret' } });
    expect(config.mcp_servers).toEqual({
      github: {
        enabled: true,
        type: 'stdio',
        command: 'npx',
        args: ['-y', 'server-github'],
        env: { GITHUB_TOKEN: '$GITHUB_TOKEN' },
        headers: {},
        tool_timeout_seconds: 60,
        output_cap_chars: 20_000,
        task_toolsets: [],
      },
      docs: {
        enabled: true,
        type: 'http',
        url: 'https://mcp.example.com/mcp',
        args: [],
        env: {},
        headers: { Authorization: 'Bearer ${DOCS_TOKEN}' },
        tool_timeout_seconds: 60,
        output_cap_chars: 20_000,
        task_toolsets: [],
      },
    });
    expect(parseConfig({}).config.mcp_servers).toEqual({});
  });

  it('refuses entries that cannot work, each with its path', () => {
    expect(
      configProblems({
        mcp_servers: {
          a: {},
          b: { type: 'stdio', url: 'http://x/mcp' },
          c: { type: 'sse', command: 'x' },
          d: { command: 'x', tool_timeout_seconds: 0, oauth: {} },
          bad__name: { command: 'x' },
          e: { type: 'websocket', url: 'http://x/mcp' },
        },
      }),
    ).toEqual([
      'mcp_servers.a.command: is missing (a stdio server needs command; an http server needs url)',
      'mcp_servers.b.command: is missing (type stdio runs this command)',
      'mcp_servers.b.url: is for http and sse servers (type stdio runs command)',
      'mcp_servers.c.url: is missing (type sse connects to this URL)',
      'mcp_servers.c.command: is for stdio servers (type sse connects to url)',
      'mcp_servers.d.tool_timeout_seconds: 0 is out of range (more than 0)',
      expect.stringMatching(/^mcp_servers\.d\.oauth: unknown key \(accepted: enabled, type, command, /),
      'mcp_servers.bad__name: "bad__name" is not a usable server name (letters, digits, - and single _; it prefixes its tools: <server>__<tool>)',
      'mcp_servers.e.type: "websocket" is not an accepted value (stdio, http, sse)',
    ]);
  });

  it("reads DeerFlow's extensions_config.json mcpServers the same way, naming the file in problems", () => {
    const { servers: parsed, warnings } = parseExtensionsConfig(
      { mcpServers: { github: { ...servers.github, enabled: false } }, skills: {}, theme: 'dark' },
      '/cfg/extensions_config.json',
    );
    expect(parsed.github).toMatchObject({ enabled: false, type: 'stdio', command: 'npx' });
    expect(warnings).toEqual([
      'extensions_config /cfg/extensions_config.json: ignoring keys this project does not read: theme',
    ]);
    expect(() => parseExtensionsConfig({ mcpServers: { x: { args: 3 } } }, 'ext.json')).toThrow(
      'extensions_config ext.json has 1 problem:\n  mcpServers.x.args: 3 is not a list of arguments',
    );
  });
});

describe('MCP tool filters', () => {
  const config = (subagents: Record<string, unknown> = {}) =>
    parseConfig({ mcp_servers: servers, subagents }).config;

  it('gives every MCP tool to the lead, general-purpose and custom agents without an allow list; none to bash', () => {
    const withCustom = config({ custom_agents: { coder: { description: 'd', system_prompt: 's' } } });
    const all = { allow: ['*'], deny: [] };
    expect(buildLeadRunInput(withCustom, { prompt: 'p', workspace: '/w' }).mcp).toEqual(all);
    expect(resolveAgent(withCustom, 'general-purpose').mcp).toEqual(all);
    expect(resolveAgent(withCustom, 'coder').mcp).toEqual(all);
    expect(resolveAgent(withCustom, 'bash').mcp).toBeUndefined();
  });

  it('takes the MCP entries of allow and deny: tools, whole servers, built-ins kept apart', () => {
    const filtered = config({
      agents: { bash: { tools: { allow: ['bash', 'docs__*'] } } },
      custom_agents: {
        coder: {
          description: 'd',
          system_prompt: 's',
          tools: { allow: ['read_file', 'github__*', 'docs__search'], deny: ['github__delete_repo'] },
        },
        plain: { description: 'd', system_prompt: 's', tools: ['ls'] },
      },
    });
    expect(resolveAgent(filtered, 'bash')).toMatchObject({
      tools: ['bash'],
      mcp: { allow: ['docs__*'], deny: [] },
    });
    expect(resolveAgent(filtered, 'coder')).toMatchObject({
      tools: ['read_file'],
      mcp: { allow: ['github__*', 'docs__search'], deny: ['github__delete_repo'] },
    });
    expect(resolveAgent(filtered, 'plain').mcp).toBeUndefined();
  });

  it('adds nothing to agents and the lead when no MCP server is configured', () => {
    const { config: plain } = parseConfig({});
    expect(resolveAgent(plain, 'general-purpose')).not.toHaveProperty('mcp');
    expect(buildLeadRunInput(plain, { prompt: 'p', workspace: '/w' })).not.toHaveProperty('mcp');
  });

  it('refuses tool names that are neither built-in nor MCP-shaped', () => {
    expect(
      configProblems({
        subagents: {
          custom_agents: { c: { description: 'd', system_prompt: 's', tools: ['github__', '__x', 'web'] } },
        },
      }),
    ).toEqual([
      'subagents.custom_agents.c.tools.allow[0]: "github__" is not an MCP tool name (<server>__<tool> or <server>__*; a server name has letters, digits, - and single _)',
      'subagents.custom_agents.c.tools.allow[1]: "__x" is not an MCP tool name (<server>__<tool> or <server>__*; a server name has letters, digits, - and single _)',
      'subagents.custom_agents.c.tools.allow[2]: "web" is not a known tool (bash, ls, read_file, write_file, str_replace, glob, grep, web_search, web_fetch, image_search, task, ask_clarification)',
    ]);
  });
});

describe('MCP filters in workflow inputs', () => {
  it('are checked with the rest of a lead run input', () => {
    const { config } = parseConfig({ mcp_servers: servers });
    const input = buildLeadRunInput(config, { prompt: 'p', workspace: '/srv/work/run' });
    expect(leadRunInputProblems(input)).toEqual([]);
    expect(leadRunInputProblems({ ...input, mcp: { allow: ['github__*', 'rm -rf'], deny: 'x' } })).toEqual([
      'mcp.allow[1]: "rm -rf" is not a known tool (bash, ls, read_file, write_file, str_replace, glob, grep, web_search, web_fetch, image_search, task, ask_clarification)',
      'mcp.deny: "x" is not a list of tool names',
    ]);
  });
});

describe('tool_search', () => {
  it('is off by default: filters stay as they were', () => {
    const { config } = parseConfig({ mcp_servers: servers });
    expect(config.tool_search).toEqual({ enabled: false, auto_promote_top_k: 3 });
    expect(buildLeadRunInput(config, { prompt: 'p', workspace: '/w' }).mcp).toEqual({
      allow: ['*'],
      deny: [],
    });
  });

  it("reads DeerFlow's top-level section without a warning and defers every agent's MCP tools after its filter", () => {
    const { config, warnings } = parseConfig({
      mcp_servers: servers,
      tool_search: { enabled: true },
      subagents: {
        custom_agents: {
          coder: {
            description: 'd',
            system_prompt: 's',
            tools: { allow: ['github__*'], deny: ['github__x'] },
          },
        },
      },
    });
    expect(warnings).toEqual([]);
    const input = buildLeadRunInput(config, { prompt: 'p', workspace: '/srv/work/run' });
    expect(input.mcp).toEqual({ allow: ['*'], deny: [], deferred: true });
    expect(resolveAgent(config, 'general-purpose').mcp).toEqual({ allow: ['*'], deny: [], deferred: true });
    expect(resolveAgent(config, 'coder').mcp).toEqual({
      allow: ['github__*'],
      deny: ['github__x'],
      deferred: true,
    });
    // An agent without MCP tools gets no filter at all: nothing to defer.
    expect(resolveAgent(config, 'bash').mcp).toBeUndefined();
    expect(leadRunInputProblems(input)).toEqual([]);
    expect(leadRunInputProblems({ ...input, mcp: { ...input.mcp, deferred: 'yes' } })).toEqual([
      expect.stringMatching(/^mcp\.deferred: /),
    ]);
  });

  it('checks the keys inside the section strictly', () => {
    expect(configProblems({ tool_search: { enabled: 'sometimes', enable: true } })).toEqual([
      expect.stringMatching(/^tool_search\.enabled: /),
      'tool_search.enable: unknown key (accepted: enabled, auto_promote_top_k)',
    ]);
  });
});

describe('MCP routing metadata and auto-promotion (issue 46)', () => {
  const routedServers = {
    ...servers,
    pg: {
      command: 'pg-mcp',
      routing: { mode: 'prefer', priority: 50, keywords: ['orders', 'SQL'] },
      tools: {
        query: { routing: { priority: 140 } },
        drop: { routing: { mode: 'off' }, note: 'DeerFlow allows' },
      },
    },
  };

  it("reads DeerFlow's routing per server and per tool, a tool's fields over its server's", () => {
    const { config, warnings } = parseConfig({ mcp_servers: routedServers, tool_search: { enabled: true } });
    expect(warnings).toEqual([]);
    const pg = config.mcp_servers.pg;
    expect(effectiveMcpRouting(pg, 'query')).toEqual({
      mode: 'prefer',
      priority: 100,
      keywords: ['orders', 'SQL'],
    });
    expect(effectiveMcpRouting(pg, 'drop').mode).toBe('off');
    expect(effectiveMcpRouting(pg, 'other')).toEqual({
      mode: 'prefer',
      priority: 50,
      keywords: ['orders', 'SQL'],
    });
    expect(effectiveMcpRouting(config.mcp_servers.github, 'x')).toEqual({});
  });

  it('carries auto_promote_top_k in the deferred filters once some server routes, clamped to 1..5', () => {
    const routed = parseConfig({
      mcp_servers: routedServers,
      tool_search: { enabled: true, auto_promote_top_k: 8 },
    }).config;
    const input = buildLeadRunInput(routed, { prompt: 'p', workspace: '/w' });
    expect(input.mcp).toEqual({ allow: ['*'], deny: [], deferred: true, auto_promote_top_k: 5 });
    expect(leadRunInputProblems(input)).toEqual([]);
    expect(resolveAgent(routed, 'general-purpose').mcp?.auto_promote_top_k).toBe(5);
    // No routing anywhere: the filters keep the shape they had.
    const plain = parseConfig({ mcp_servers: servers, tool_search: { enabled: true } }).config;
    expect(buildLeadRunInput(plain, { prompt: 'p', workspace: '/w' }).mcp).toEqual({
      allow: ['*'],
      deny: [],
      deferred: true,
    });
  });

  it('refuses a routing mode it does not know and an unknown routing key', () => {
    expect(
      configProblems({ mcp_servers: { pg: { command: 'x', routing: { mode: 'always', keyword: ['a'] } } } }),
    ).toEqual([
      expect.stringMatching(/^mcp_servers\.pg\.routing\.mode: /),
      expect.stringMatching(/^mcp_servers\.pg\.routing\.keyword: unknown key/),
    ]);
  });
});
