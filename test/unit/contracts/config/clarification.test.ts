import { defaultConfig, parseConfig } from '../../../../contracts/config';
import { resolveAgent, resolveClarification } from '../../../../contracts/config/agents';
import { buildLeadRunInput } from '../../../../contracts/config/lead-input';
import { leadRunInputProblems } from '../../../../contracts/inputs';
import { configProblems } from '../../../support/config-problems';

const painter = { description: 'Paints.', system_prompt: 'You paint.' };

describe('clarification: config', () => {
  it('is on by default, with an hour for an answer, and the lead run carries it', () => {
    const config = defaultConfig();
    expect(config.clarification).toEqual({ enabled: true, timeout_seconds: 3600 });
    expect(resolveClarification(config)).toEqual({ timeout_seconds: 3600 });
    const input = buildLeadRunInput(config, { prompt: 'p', workspace: '/srv/work/1' });
    expect(input.scope.clarification).toEqual({ timeout_seconds: 3600 });
    expect(leadRunInputProblems(input)).toEqual([]);
  });

  it('when disabled, leaves the run without it (no agent may ask)', () => {
    const { config } = parseConfig({ clarification: { enabled: false } });
    expect(resolveClarification(config)).toBeUndefined();
    expect(
      buildLeadRunInput(config, { prompt: 'p', workspace: '/srv/work/1' }).scope.clarification,
    ).toBeUndefined();
  });

  it('checks its keys and values strictly', () => {
    expect(configProblems({ clarification: { timeout_seconds: 0, wait: 5 } })).toEqual([
      'clarification.timeout_seconds: 0 is out of range (more than 0)',
      'clarification.wait: unknown key (accepted: enabled, timeout_seconds)',
    ]);
  });

  it('gives the tool to a custom agent whose tools allow it, and to no other', () => {
    const { config } = parseConfig({
      subagents: {
        custom_agents: {
          painter: { ...painter, tools: { allow: ['ls', 'ask_clarification'] } },
          plain: painter,
        },
      },
    });
    expect(resolveAgent(config, 'painter').tools).toEqual(['ls', 'ask_clarification']);
    expect(resolveAgent(config, 'plain').tools).not.toContain('ask_clarification');
    expect(resolveAgent(config, 'general-purpose').tools).not.toContain('ask_clarification');
  });

  it('refuses it for a built-in agent, which works without asking back', () => {
    expect(
      configProblems({
        subagents: { agents: { bash: { tools: { allow: ['bash', 'ask_clarification'] } } } },
      }),
    ).toEqual([
      'subagents.agents.bash.tools.allow: lists ask_clarification, but built-in agents work without asking ' +
        'questions back (define a custom agent that may ask)',
    ]);
  });

  it('checks the settings a workflow input carries', () => {
    const input = buildLeadRunInput(defaultConfig(), { prompt: 'p', workspace: '/srv/work/1' });
    const clarification = { timeout_seconds: -1 };
    expect(leadRunInputProblems({ ...input, scope: { ...input.scope, clarification } })).toEqual([
      'scope.clarification.timeout_seconds: -1 is out of range (more than 0)',
    ]);
    // Beside the scope it would be ignored: it is refused, naming where it goes.
    expect(leadRunInputProblems({ ...input, clarification })).toEqual([
      'clarification: a mapping is a run-wide setting: it goes in scope (scope.clarification)',
    ]);
  });
});
