import { parseConfig } from '../../../../contracts/config';
import {
  listAgentNames,
  listAgents,
  resolveAgent,
  resolveModel,
  UnknownAgentError,
} from '../../../../contracts/config/agents';

const config = (raw: unknown) => parseConfig(raw).config;

const ANALYSIS = { description: 'Data analysis specialist', system_prompt: 'You analyse data.' };

describe('agent resolution', () => {
  it('lets a per-agent override beat the global value', () => {
    const c = config({
      subagents: { timeout_seconds: 600, max_turns: 40, agents: { 'general-purpose': { max_turns: 250 } } },
    });
    expect(resolveAgent(c, 'general-purpose')).toMatchObject({ max_turns: 250, timeout_seconds: 600 });
    expect(resolveAgent(c, 'bash')).toMatchObject({ max_turns: 40, timeout_seconds: 600 });
  });

  it('applies the global turn and time limits to built-ins only', () => {
    const c = config({
      subagents: { timeout_seconds: 600, max_turns: 40, custom_agents: { analysis: ANALYSIS } },
    });
    expect(resolveAgent(c, 'analysis')).toMatchObject({ max_turns: 50, timeout_seconds: 900 });
  });

  it('gives a custom agent its own defaults, overridable from subagents.agents', () => {
    const c = config({
      subagents: {
        custom_agents: { analysis: ANALYSIS, quick: { ...ANALYSIS, max_turns: 5, timeout_seconds: 30 } },
        agents: { quick: { max_turns: 8 } },
      },
    });
    const analysis = resolveAgent(c, 'analysis');
    expect(analysis).toMatchObject({
      name: 'analysis',
      description: 'Data analysis specialist',
      system_prompt: 'You analyse data.',
      max_turns: 50,
      timeout_seconds: 900,
      tools: ['bash', 'ls', 'read_file', 'write_file', 'str_replace'],
    });
    expect(resolveAgent(c, 'quick')).toMatchObject({ max_turns: 8, timeout_seconds: 30 });
    expect(listAgentNames(c)).toEqual(['general-purpose', 'bash', 'analysis', 'quick']);
    expect(listAgents(c).map((agent) => agent.name)).toEqual(listAgentNames(c));
  });

  describe('token budget', () => {
    it('defaults to 1,000,000 when summarization is on', () => {
      const c = config({
        summarization: { enabled: true },
        subagents: { custom_agents: { analysis: ANALYSIS } },
      });
      expect(resolveAgent(c, 'general-purpose').token_budget.max_tokens).toBe(1_000_000);
      expect(resolveAgent(c, 'analysis').token_budget.max_tokens).toBe(1_000_000);
    });

    it('keeps a budget the user wrote, globally or per agent, whatever summarization says', () => {
      const global = config({
        summarization: { enabled: true },
        subagents: { token_budget: { max_tokens: 2_000_000 } },
      });
      expect(resolveAgent(global, 'bash').token_budget.max_tokens).toBe(2_000_000);

      const perAgent = config({
        summarization: { enabled: true },
        subagents: { agents: { bash: { token_budget: { max_tokens: 300_000 } } } },
      });
      expect(resolveAgent(perAgent, 'bash').token_budget.max_tokens).toBe(300_000);
      expect(resolveAgent(perAgent, 'general-purpose').token_budget.max_tokens).toBe(1_000_000);
    });

    it('merges each field separately: per agent, then custom agent, then global', () => {
      const c = config({
        subagents: {
          token_budget: { max_tokens: 900_000, warn_threshold: 0.5 },
          custom_agents: { analysis: { ...ANALYSIS, token_budget: { max_tokens: 400_000, enabled: false } } },
          agents: { analysis: { token_budget: { warn_threshold: 0.9 } } },
        },
      });
      expect(resolveAgent(c, 'analysis').token_budget).toEqual({
        enabled: false,
        max_tokens: 400_000,
        warn_threshold: 0.9,
        hard_threshold: 1.0,
      });
    });
  });

  describe('tools', () => {
    it('takes the allow list (default: all built-in tools) minus the deny list', () => {
      const c = config({
        subagents: {
          custom_agents: {
            reader: { ...ANALYSIS, tools: { deny: ['bash', 'write_file', 'str_replace'] } },
            runner: { ...ANALYSIS, tools: { allow: ['read_file', 'bash', 'ls'], deny: ['ls'] } },
          },
          agents: { 'general-purpose': { tools: { deny: ['bash'] } } },
        },
      });
      expect(resolveAgent(c, 'reader').tools).toEqual(['ls', 'read_file']);
      expect(resolveAgent(c, 'runner').tools).toEqual(['bash', 'read_file']);
      expect(resolveAgent(c, 'general-purpose').tools).toEqual([
        'ls',
        'read_file',
        'write_file',
        'str_replace',
      ]);
    });

    it('gives task only to a custom agent that asks for it', () => {
      const c = config({
        subagents: {
          max_depth: 2,
          custom_agents: { planner: { ...ANALYSIS, tools: { allow: ['read_file', 'task'] } } },
        },
      });
      expect(resolveAgent(c, 'planner').tools).toEqual(['read_file', 'task']);
      expect(resolveAgent(c, 'general-purpose').tools).not.toContain('task');
    });

    it('warns when a custom agent may delegate but max_depth forbids it', () => {
      const { warnings } = parseConfig({
        subagents: { custom_agents: { planner: { ...ANALYSIS, tools: { allow: ['task'] } } } },
      });
      expect(warnings).toEqual([
        'subagents: planner may call task, but subagents.max_depth is 1, so its delegations will be refused',
      ]);
    });

    it('does not warn when an override takes task away again', () => {
      const { config: c, warnings } = parseConfig({
        subagents: {
          custom_agents: { planner: { ...ANALYSIS, tools: { allow: ['read_file', 'task'] } } },
          agents: { planner: { tools: { deny: ['task'] } } },
        },
      });
      expect(warnings).toEqual([]);
      expect(resolveAgent(c, 'planner').tools).toEqual(['read_file']);
    });
  });

  describe('models', () => {
    const models = [
      { name: 'lead-model', provider: 'scripted' },
      { name: 'cheap', provider: 'scripted' },
      { name: 'special', provider: 'scripted' },
    ];

    it('uses the lead’s model unless subagents.model, the custom agent or the override says otherwise', () => {
      expect(resolveAgent(config({ models }), 'bash').model.name).toBe('lead-model');
      const c = config({
        models,
        subagents: {
          model: 'cheap',
          custom_agents: { analysis: { ...ANALYSIS, model: 'special' } },
          agents: { bash: { model: 'special' } },
        },
      });
      expect(resolveAgent(c, 'general-purpose').model.name).toBe('cheap');
      expect(resolveAgent(c, 'bash').model.name).toBe('special');
      expect(resolveAgent(c, 'analysis').model.name).toBe('special');
    });

    it('names the configured models when asked for one that is not there', () => {
      expect(() => resolveModel(config({ models }), 'gpt-5')).toThrow(
        'model: "gpt-5" is not a configured model (lead-model, cheap, special)',
      );
    });
  });

  it('lists the available agents when asked for one that does not exist', () => {
    const c = config({ subagents: { custom_agents: { analysis: ANALYSIS } } });
    expect(() => resolveAgent(c, 'researcher')).toThrow(UnknownAgentError);
    expect(() => resolveAgent(c, 'researcher')).toThrow(
      'subagent_type "researcher" is not an available agent (general-purpose, bash, analysis)',
    );
    expect(() => resolveAgent(c, 'constructor')).toThrow(UnknownAgentError);
  });

  it('clamps per-response concurrency to what the runtime can run, with a warning', () => {
    const { config: c, warnings } = parseConfig({
      subagents: { max_concurrent: 4 },
      subagent_runtime: { max_running: 2 },
    });
    expect(c.subagents.max_concurrent).toBe(2);
    expect(warnings).toEqual([
      'subagents.max_concurrent: 4 is above subagent_runtime.max_running, so 2 is used',
    ]);
    expect(config({ subagents: { max_concurrent: 2 } }).subagents.max_concurrent).toBe(2);
  });

  it("keeps per-response concurrency within the seeds' 1–4, whatever the capacity (3 unless set)", () => {
    expect(() => config({ subagents: { max_concurrent: 8 } })).toThrow(
      'subagents.max_concurrent: 8 is out of range (1–4)',
    );
    expect(() => config({ subagents: { max_concurrent: 0 } })).toThrow(
      'subagents.max_concurrent: 0 is out of range (1–4)',
    );
    expect(config({ subagent_runtime: { max_running: 200 } }).subagents.max_concurrent).toBe(3);
    expect(
      config({ subagents: { max_concurrent: 4 }, subagent_runtime: { max_running: 200 } }).subagents
        .max_concurrent,
    ).toBe(4);
  });
});
