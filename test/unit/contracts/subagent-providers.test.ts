import {
  capabilityList,
  capabilityRefusal,
  isRemoteProvider,
  loadToolNameProblem,
  PROVIDER_CAPABILITIES,
  PROVIDER_CAPABILITY_NAMES,
  providerLabel,
  remoteProvidersOf,
  SUBAGENT_PROVIDER_TYPES,
} from '../../../contracts/subagent-providers';

describe('the provider capability table', () => {
  it('is the one the issue states, for every provider type', () => {
    expect([...SUBAGENT_PROVIDER_TYPES]).toEqual(['spawn', 'fork', 'a2a', 'acp']);
    expect([...PROVIDER_CAPABILITY_NAMES]).toEqual([
      'inherits_parent_context',
      'persona',
      'tool_filter',
      'depth_limit',
    ]);
    const rows = Object.fromEntries(
      SUBAGENT_PROVIDER_TYPES.map((type) => [
        type,
        PROVIDER_CAPABILITY_NAMES.map((capability) => PROVIDER_CAPABILITIES[type][capability]),
      ]),
    );
    expect(rows).toEqual({
      spawn: [false, true, true, true],
      fork: [true, true, true, true],
      a2a: [false, true, false, false],
      acp: [false, true, false, false],
    });
  });

  it('lists what a type can do, and words what it cannot', () => {
    expect(capabilityList('acp')).toEqual(['persona']);
    expect(capabilityList('fork')).toEqual([...PROVIDER_CAPABILITY_NAMES]);
    expect(capabilityRefusal({ name: 'local_acp', type: 'acp' }, 'tool_filter')).toBe(
      'provider local_acp (acp) cannot filter tools (its capabilities: persona)',
    );
    expect(capabilityRefusal({ name: 'team_a2a', type: 'a2a' }, 'depth_limit')).toBe(
      'provider team_a2a (a2a) cannot limit the delegation depth (its capabilities: persona)',
    );
  });
});

describe('a load’s tool name', () => {
  it.each([
    ['subagent_acp', undefined],
    ['review-bot', undefined],
    [
      'task',
      'is the default load (task stays as it is; give this load a name of its own, e.g. subagent_acp)',
    ],
    ['bash', 'is the name of a built-in tool (give this load a name of its own, e.g. subagent_acp)'],
    [
      'ask_clarification',
      'is the name of a built-in tool (give this load a name of its own, e.g. subagent_acp)',
    ],
    ['batch_task', 'is the name of a built-in tool (give this load a name of its own, e.g. subagent_acp)'],
    ['tool_search', 'is the name of a built-in tool (give this load a name of its own, e.g. subagent_acp)'],
    ['has space', 'is not a tool name (1–64 letters, digits, _ and -, no __, which MCP tools use)'],
    ['github__review', 'is not a tool name (1–64 letters, digits, _ and -, no __, which MCP tools use)'],
    ['x'.repeat(65), 'is not a tool name (1–64 letters, digits, _ and -, no __, which MCP tools use)'],
  ])('%s', (name, problem) => {
    expect(loadToolNameProblem(name)).toBe(problem);
  });
});

describe('providers of loads', () => {
  const acp = { type: 'acp' as const, name: 'local_acp', command: 'node', args: [], env: {} };
  const a2a = { type: 'a2a' as const, name: 'team_a2a', url: 'http://127.0.0.1:9999' };

  it('tells remote providers from built-in ones and lists each remote one once', () => {
    expect(isRemoteProvider(acp)).toBe(true);
    expect(isRemoteProvider({ type: 'fork', name: 'fork' })).toBe(false);
    expect(
      remoteProvidersOf([
        { provider: { type: 'spawn', name: 'spawn' } },
        { provider: acp },
        { provider: a2a },
        { provider: acp },
      ]),
    ).toEqual([acp, a2a]);
  });

  it('names a provider with its type unless its name is its type', () => {
    expect(providerLabel(acp)).toBe('local_acp (acp)');
    expect(providerLabel({ type: 'fork', name: 'fork' })).toBe('fork');
  });
});
