import {
  buildTaskToolSpec,
  parseTaskArgs,
  type TaskToolOptions,
} from '../../../../workflows/delegation/task-tool';

const AGENTS = [
  { name: 'general-purpose', description: 'A capable agent for multi-step work.' },
  { name: 'bash', description: 'A command-line specialist.' },
];
const NAMES = AGENTS.map((agent) => agent.name);

function spec(options: Partial<TaskToolOptions> = {}) {
  return buildTaskToolSpec({
    provider: 'spawn',
    agents: AGENTS,
    maxConcurrent: 3,
    maxTotalPerRun: 6,
    ...options,
  });
}

function promptDescription(parameters: Record<string, unknown>): string {
  const properties = parameters.properties as Record<string, { description?: string }>;
  return properties.prompt.description ?? '';
}

describe('buildTaskToolSpec', () => {
  it('shows exactly description, prompt and subagent_type, with the agents as an enum and no provider', () => {
    const { name, parameters } = spec();
    expect(name).toBe('task');
    expect(parameters.type).toBe('object');
    expect(Object.keys(parameters.properties as object).sort()).toEqual([
      'description',
      'prompt',
      'subagent_type',
    ]);
    expect([...(parameters.required as string[])].sort()).toEqual(['description', 'prompt', 'subagent_type']);
    expect(parameters.additionalProperties).toBe(false);
    expect((parameters.properties as Record<string, { enum?: string[] }>).subagent_type.enum).toEqual(NAMES);
    expect(JSON.stringify(parameters)).not.toContain('provider');
    expect(parameters).not.toHaveProperty('$schema');
  });

  it('lists every agent with its description', () => {
    expect(spec().description).toContain(
      'Subagent types:\n- general-purpose: A capable agent for multi-step work.\n- bash: A command-line specialist.',
    );
  });

  it('tells a spawn child’s caller that the prompt must stand alone', () => {
    const { description, parameters } = spec({ provider: 'spawn' });
    expect(description).toContain('it does not see this conversation, so the prompt must stand alone');
    expect(promptDescription(parameters)).toContain('It does not see this conversation');
    expect(description).not.toContain('seeded');
  });

  it('tells a fork child’s caller to state only what is new', () => {
    const { description, parameters } = spec({ provider: 'fork' });
    expect(description).toContain("The subagent is seeded with this conversation's completed turns");
    expect(description).toContain('The prompt should state only what is new');
    expect(promptDescription(parameters)).toContain('state only what is new');
    expect(description).not.toContain('does not see this conversation');
  });

  it('states the enforced hard limits', () => {
    expect(spec({ maxConcurrent: 3, maxTotalPerRun: 6 }).description).toContain(
      'HARD LIMITS: at most 3 task calls per response (extra calls are dropped without running); at most 6 ' +
        'delegations in this run',
    );
    expect(spec({ maxConcurrent: 2, maxTotalPerRun: 1 }).description).toContain(
      'at most 2 task calls per response (extra calls are dropped without running); at most 1 delegation in this run',
    );
  });

  it('frames delegation as an optimisation with independent parallel scopes', () => {
    const { description } = spec();
    expect(description).toContain('Do the work yourself by default: delegation is an optimisation');
    expect(description).toContain('parallel latency');
    expect(description).toContain('Up to 3 task calls in one response run at the same time');
    expect(description).toContain('independent and do not overlap');
  });

  it('drops every parallel benefit from the wording when one call per response is allowed', () => {
    const { description } = spec({ maxConcurrent: 1 });
    expect(description).toContain('at most 1 task call per response');
    expect(description).toContain(
      'only for a material benefit of a specialist capability or of context isolation',
    );
    expect(description).not.toMatch(/parallel|same time|batch/);
  });

  it('refuses to build a tool with no agent to start', () => {
    expect(() => spec({ agents: [] })).toThrow('task tool: no subagent is available');
  });
});

describe('parseTaskArgs', () => {
  const valid = {
    description: 'Survey the loader',
    prompt: 'Read config.ts and list its sections.',
    subagent_type: 'bash',
  };

  it('accepts valid arguments', () => {
    expect(parseTaskArgs(JSON.stringify(valid), AGENTS)).toEqual({
      ok: true,
      args: valid,
      agent: AGENTS.find((agent) => agent.name === 'bash'),
    });
  });

  it('lists the available agents for an unknown subagent_type', () => {
    expect(parseTaskArgs(JSON.stringify({ ...valid, subagent_type: 'researcher' }), AGENTS)).toEqual({
      ok: false,
      error:
        'Invalid task arguments:\n- subagent_type: "researcher" is not an available subagent (general-purpose, bash)',
    });
  });

  it('names every missing or empty argument, one a line', () => {
    expect(parseTaskArgs(JSON.stringify({ description: '  ' }), AGENTS)).toEqual({
      ok: false,
      error: [
        'Invalid task arguments:',
        '- description: is empty (a 3–5 word label for the task)',
        '- prompt: is missing (the task for the subagent)',
        '- subagent_type: is missing (general-purpose, bash)',
      ].join('\n'),
    });
    const blank = parseTaskArgs(JSON.stringify({ ...valid, prompt: ' \n ' }), AGENTS);
    expect(blank).toEqual({
      ok: false,
      error: 'Invalid task arguments:\n- prompt: is blank (the task for the subagent)',
    });
  });

  it('refuses a provider (or any other) argument: the provider is bound by config', () => {
    expect(parseTaskArgs(JSON.stringify({ ...valid, provider: 'fork' }), AGENTS)).toEqual({
      ok: false,
      error:
        'Invalid task arguments:\n- provider: not an argument of task (accepted: description, prompt, subagent_type)',
    });
  });

  it('explains arguments that are not JSON, or not an object', () => {
    const notJson = parseTaskArgs('{"description": ', AGENTS);
    expect(notJson.ok).toBe(false);
    if (!notJson.ok) {
      expect(notJson.error).toMatch(
        /^Invalid task arguments: they are not valid JSON \(.+\); send an object with description, prompt, subagent_type\.$/,
      );
    }
    expect(parseTaskArgs('["bash"]', AGENTS)).toEqual({
      ok: false,
      error:
        'Invalid task arguments:\n- the arguments are not a JSON object (an object with description, prompt, subagent_type)',
    });
  });

  it('says so when no agent is available', () => {
    const out = parseTaskArgs(JSON.stringify(valid), []);
    expect(out).toEqual({
      ok: false,
      error:
        'Invalid task arguments:\n- subagent_type: "bash" is not an available subagent (none is available)',
    });
  });
});
