import { parseConfig } from '../../../../contracts/config';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';
import { leadRunInputProblems } from '../../../../contracts/inputs';
import { configProblems } from '../../../support/config-problems';

/** The acceptance shape, kept working as it is. */
const ACCEPTANCE = {
  subagent_providers: {
    local_acp: { type: 'acp', command: 'node', args: ['agent.mjs'], env: {} },
    team_a2a: { type: 'a2a', url: 'http://127.0.0.1:9999', headers: { Authorization: 'Bearer $TEAM_TOKEN' } },
  },
  subagent_tools: [{ tool_name: 'subagent_acp', provider: 'local_acp' }],
};

const MODELS = {
  models: [
    { name: 'main', provider: 'scripted', model: 'test' },
    { name: 'small', provider: 'scripted', model: 'test-small' },
  ],
};

function withTools(tools: unknown[], providers: Record<string, unknown> = ACCEPTANCE.subagent_providers) {
  return { ...MODELS, subagent_providers: providers, subagent_tools: tools };
}

describe('subagent_providers and subagent_tools', () => {
  it('read the acceptance shape; $NAME values in headers and env stay references for the worker', () => {
    const { config, warnings } = parseConfig(
      {
        ...ACCEPTANCE,
        subagent_providers: {
          ...ACCEPTANCE.subagent_providers,
          keyed: { type: 'acp', command: 'agent', env: { AGENT_KEY: '$AGENT_KEY' } },
        },
      },
      { env: { TEAM_TOKEN: 'secret-token', AGENT_KEY: 'secret-key' } },
    );
    expect(warnings).toEqual([]);
    expect(config.subagent_providers).toEqual({
      local_acp: { type: 'acp', command: 'node', args: ['agent.mjs'], env: {} },
      team_a2a: {
        type: 'a2a',
        url: 'http://127.0.0.1:9999',
        headers: { Authorization: 'Bearer $TEAM_TOKEN' },
      },
      keyed: { type: 'acp', command: 'agent', args: [], env: { AGENT_KEY: '$AGENT_KEY' } },
    });
    expect(config.subagent_tools).toEqual([{ tool_name: 'subagent_acp', provider: 'local_acp' }]);
    expect(JSON.stringify(config)).not.toContain('secret');
  });

  it('are empty by default', () => {
    const { config } = parseConfig({});
    expect(config.subagent_providers).toEqual({});
    expect(config.subagent_tools).toEqual([]);
  });

  it.each<[string, unknown[], string[]]>([
    [
      'a duplicate tool_name',
      [
        { tool_name: 'subagent_acp', provider: 'local_acp' },
        { tool_name: 'subagent_acp', provider: 'spawn' },
      ],
      [
        'subagent_tools[1].tool_name: "subagent_acp" is listed twice (subagent_tools[0] has it; each load needs a tool name of its own)',
      ],
    ],
    [
      'task as a tool_name',
      [{ tool_name: 'task', provider: 'spawn' }],
      [
        'subagent_tools[0].tool_name: "task" is the default load (task stays as it is; give this load a name of its own, e.g. subagent_acp)',
      ],
    ],
    [
      'another built-in tool’s name',
      [{ tool_name: 'read_file', provider: 'fork' }],
      [
        'subagent_tools[0].tool_name: "read_file" is the name of a built-in tool (give this load a name of its own, e.g. subagent_acp)',
      ],
    ],
    [
      'a name that is not a tool name',
      [{ tool_name: 'sub agent', provider: 'fork' }],
      [
        'subagent_tools[0].tool_name: "sub agent" is not a tool name (1–64 letters, digits, _ and -, no __, which MCP tools use)',
      ],
    ],
    [
      'an unknown provider',
      [{ tool_name: 'subagent_x', provider: 'nowhere' }],
      ['subagent_tools[0].provider: "nowhere" is not a provider (spawn, fork, local_acp, team_a2a)'],
    ],
    [
      'a tool filter its provider cannot apply',
      [
        { tool_name: 'subagent_fork', provider: 'fork' },
        { tool_name: 'subagent_acp', provider: 'local_acp', tool_filter: { allow: ['ls'] } },
      ],
      [
        'subagent_tools[1].tool_filter: provider local_acp (acp) cannot filter tools (its capabilities: persona)',
      ],
    ],
    [
      'a depth limit its provider cannot keep',
      [{ tool_name: 'subagent_a2a', provider: 'team_a2a', max_depth: 2 }],
      [
        'subagent_tools[0].max_depth: provider team_a2a (a2a) cannot limit the delegation depth (its capabilities: persona)',
      ],
    ],
    [
      'a negative max_depth',
      [{ tool_name: 'subagent_spawn', provider: 'spawn', max_depth: -1 }],
      ['subagent_tools[0].max_depth: -1 is out of range (0 or more)'],
    ],
    [
      'a fractional max_depth',
      [{ tool_name: 'subagent_spawn', provider: 'spawn', max_depth: 1.5 }],
      ['subagent_tools[0].max_depth: 1.5 is not a whole number (0 or more)'],
    ],
    [
      'a max_depth that is not a number',
      [{ tool_name: 'subagent_spawn', provider: 'spawn', max_depth: 'deep' }],
      ['subagent_tools[0].max_depth: "deep" is not a whole number (0 or more)'],
    ],
    [
      'a model the config does not list, for a local load',
      [{ tool_name: 'subagent_spawn', provider: 'spawn', agent_options: { model: 'huge' } }],
      ['subagent_tools[0].agent_options.model: "huge" is not a configured model (main, small, inherit)'],
    ],
    [
      'task in a local load’s allow list',
      [{ tool_name: 'subagent_spawn', provider: 'spawn', tool_filter: { allow: ['task', 'ls'] } }],
      [
        'subagent_tools[0].tool_filter.allow: lists task, but a child a load starts does not delegate in turn',
      ],
    ],
    [
      'an unknown key',
      [{ tool_name: 'subagent_spawn', provider: 'spawn', toolName: 'x' }],
      [
        'subagent_tools[0].toolName: unknown key (accepted: tool_name, provider, description, agent_options, persona, tool_filter, max_depth)',
      ],
    ],
  ])('refuse %s, naming it', (_case, tools, problems) => {
    expect(configProblems(withTools(tools))).toEqual(problems);
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    [
      'a cwd (the workspace always is)',
      { local: { type: 'acp', command: 'node', cwd: '/tmp' } },
      [
        "subagent_providers.local.cwd: is not a setting: an ACP agent always runs in the run's workspace (its cwd), where the run's files are",
      ],
    ],
    [
      'an a2a provider without url',
      { team: { type: 'a2a', headers: {} } },
      ["subagent_providers.team.url: is missing (an a2a provider's agent card or endpoint)"],
    ],
    [
      'an acp provider with a2a settings',
      { local: { type: 'acp', command: 'node', url: 'http://x.example' } },
      ['subagent_providers.local.url: is for a2a providers (an acp provider is started by command)'],
    ],
    [
      'a provider type of the built-ins',
      { mine: { type: 'fork' } },
      [
        'subagent_providers.mine.type: "fork" is not a provider type here (a2a, acp; spawn and fork are built in)',
      ],
    ],
    [
      'a built-in provider’s name',
      { spawn: { type: 'acp', command: 'node' } },
      ['subagent_providers.spawn: is a built-in provider (spawn and fork always exist)'],
    ],
  ])('refuse %s', (_case, providers, problems) => {
    expect(configProblems({ ...MODELS, subagent_providers: providers })).toEqual(problems);
  });

  it('warn when subagents are off', () => {
    const { warnings } = parseConfig({ ...ACCEPTANCE, subagents: { enabled: false } });
    expect(warnings).toEqual([
      'subagent_tools: unused while subagents.enabled is false (the lead delegates nothing)',
    ]);
  });
});

describe('a lead run’s input with tool loads', () => {
  const config = parseConfig(
    withTools([
      {
        tool_name: 'subagent_acp',
        provider: 'local_acp',
        persona: 'You review code.',
        agent_options: { model: 'm-1' },
      },
      {
        tool_name: 'subagent_fork',
        provider: 'fork',
        description: 'For follow-ups on what was found.',
        agent_options: { model: 'small' },
        persona: 'You follow up.',
        tool_filter: { allow: ['ls', 'read_file'] },
        max_depth: 1,
      },
    ]),
  ).config;
  const input = buildLeadRunInput(config, { prompt: 'Go.', workspace: '/srv/ws' });

  it('carries each load: its provider’s settings, and the agent its child runs as', () => {
    const [acp, fork] = input.subagent_tools ?? [];
    expect(acp).toMatchObject({
      tool_name: 'subagent_acp',
      provider: { type: 'acp', name: 'local_acp', command: 'node', args: ['agent.mjs'], env: {} },
      persona: 'You review code.',
      // A remote agent's model is its own: passed on as written.
      model: 'm-1',
      agent: { name: 'subagent_acp', tools: [], system_prompt: 'You review code.' },
    });
    expect(acp.agent).not.toHaveProperty('mcp');
    expect(fork).toMatchObject({
      tool_name: 'subagent_fork',
      provider: { type: 'fork', name: 'fork' },
      description: 'For follow-ups on what was found.',
      max_depth: 1,
      agent: {
        name: 'subagent_fork',
        description: 'For follow-ups on what was found.',
        system_prompt: 'You follow up.',
        tools: ['ls', 'read_file'],
        model: { name: 'small', model: 'test-small' },
      },
    });
    // The task load stays as it was.
    expect(input.limits.provider).toBe('spawn');
    expect(input.agents.map((agent) => agent.name)).toEqual(['general-purpose', 'bash']);
  });

  it('passes the input check, which refuses two loads with one name', () => {
    expect(leadRunInputProblems(input)).toEqual([]);
    const [first] = input.subagent_tools ?? [];
    expect(leadRunInputProblems({ ...input, subagent_tools: [first, first] })).toEqual([
      'subagent_tools[1].tool_name: "subagent_acp" is listed twice (each load needs a tool name of its own)',
    ]);
    expect(leadRunInputProblems({ ...input, subagent_tools: [{ ...first, tool_name: 'task' }] })).toEqual([
      'subagent_tools[0].tool_name: "task" is the default load (task stays as it is; give this load a name of its own, e.g. subagent_acp)',
    ]);
  });

  it('is absent without loads, so a run from before the registry is as it was', () => {
    expect(
      buildLeadRunInput(parseConfig(MODELS).config, { prompt: 'Go.', workspace: '/srv/ws' }),
    ).not.toHaveProperty('subagent_tools');
  });
});
