import { parseConfig } from '../../../../contracts/config';
import { buildLeadRunInput, runGuardrailsSettings } from '../../../../contracts/config/lead-input';
import { buildBatchInput } from '../../../../contracts/config/batch-input';
import { configProblems } from '../../../support/config-problems';

const request = { prompt: 'p', workspace: '/tmp/ws' };

describe('guardrails: in the config', () => {
  it('is off by default, and a run carries no guardrails field then', () => {
    const { config } = parseConfig({});
    expect(config.guardrails).toEqual({
      enabled: false,
      fail_closed: true,
      approval_timeout_seconds: 3600,
      unattended: 'deny',
    });
    expect(buildLeadRunInput(config, request)).not.toHaveProperty('guardrails');
  });

  it("takes DeerFlow's AllowlistProvider as written, and the short name", () => {
    for (const use of ['deerflow.guardrails.builtin:AllowlistProvider', 'allowlist']) {
      const { config } = parseConfig({
        guardrails: {
          enabled: true,
          provider: { use, config: { allowed_tools: ['bash', 'github__*'], denied_tools: ['task'] } },
        },
      });
      expect(buildLeadRunInput(config, request).scope.guardrails).toEqual({
        approval_timeout_seconds: 3600,
        run: {
          provider: 'allowlist',
          allowed_tools: ['bash', 'github__*'],
          denied_tools: ['task'],
          fail_closed: true,
          unattended: 'deny',
        },
      });
    }
  });

  it('takes rules, and carries them to a batch too', () => {
    const { config } = parseConfig({
      subagents: { batch: { enabled: true } },
      guardrails: {
        enabled: true,
        unattended: 'allow',
        approval_timeout_seconds: 60,
        rules: [{ tool: 'bash', args: { command: 'rm -rf' }, decision: 'ask', reason: 'deletes files' }],
      },
    });
    const expected = {
      approval_timeout_seconds: 60,
      run: {
        provider: 'rules',
        rules: [{ tool: 'bash', args: { command: 'rm -rf' }, decision: 'ask', reason: 'deletes files' }],
        fail_closed: true,
        unattended: 'allow',
      },
    };
    expect(runGuardrailsSettings(config)).toEqual(expected);
    const batch = buildBatchInput(config, { ...request, description: 'd', subagent_type: 'bash', items: [] });
    expect(batch.scope.guardrails).toEqual(expected);
  });

  it('takes a module provider, its export named or `provider`', () => {
    const { config } = parseConfig({
      guardrails: { enabled: true, fail_closed: false, provider: { use: './policy.js' } },
    });
    expect(config.guardrails.policy).toEqual({
      provider: 'module',
      module: './policy.js',
      export: 'provider',
      fail_closed: false,
      unattended: 'deny',
    });
  });

  it("lets an agent's override replace the run's policy, inheriting what it leaves out", () => {
    const { config } = parseConfig({
      guardrails: { enabled: true, provider: { use: 'allowlist', config: { denied_tools: ['task'] } } },
      subagents: {
        agents: { bash: { guardrails: { enabled: false } } },
        custom_agents: {
          reviewer: {
            description: 'reviews',
            system_prompt: 'review',
            guardrails: {
              unattended: 'allow',
              provider: { use: 'allowlist', config: { allowed_tools: ['read_file'] } },
            },
          },
        },
      },
    });
    expect(runGuardrailsSettings(config)?.agents).toEqual({
      bash: { provider: 'none', fail_closed: true, unattended: 'deny' },
      reviewer: {
        provider: 'allowlist',
        allowed_tools: ['read_file'],
        fail_closed: true,
        unattended: 'allow',
      },
    });
  });

  it('puts a custom agent under guardrails even when the run has none', () => {
    const { config } = parseConfig({
      subagents: {
        custom_agents: {
          reviewer: {
            description: 'r',
            system_prompt: 'r',
            guardrails: { rules: [{ tool: '*', decision: 'ask' }] },
          },
        },
      },
    });
    const settings = runGuardrailsSettings(config);
    expect(settings?.run).toBeUndefined();
    expect(settings?.agents?.reviewer.provider).toBe('rules');
  });

  it('names the rule and the pattern that is not one', () => {
    expect(
      configProblems({
        guardrails: {
          enabled: true,
          rules: [
            { tool: 'bash', decision: 'deny' },
            { tool: 'bash', args: { command: '(?=rm)' }, decision: 'deny' },
          ],
        },
      }),
    ).toEqual([
      expect.stringMatching(
        /^guardrails\.rules\[1\]\.args\.command: "\(\?=rm\)" is not a valid pattern: .*RE2/,
      ),
    ]);
  });

  it('says an unknown decision, a bad tool glob, an unknown provider and a missing one', () => {
    expect(
      configProblems({ guardrails: { enabled: true, rules: [{ tool: 'b ash', decision: 'maybe' }] } }),
    ).toEqual([
      'guardrails.rules[0].tool: "b ash" is not a tool name or glob (letters, digits, _ - . and * only)',
      'guardrails.rules[0].decision: "maybe" is not an accepted value (allow, deny, ask)',
    ]);
    expect(configProblems({ guardrails: { enabled: true, provider: { use: 'MyProvider' } } })).toEqual([
      'guardrails.provider.use: "MyProvider" is not a provider (deerflow.guardrails.builtin:AllowlistProvider, ' +
        'allowlist, rules, or a module: ./policy.js#provider)',
    ]);
    expect(configProblems({ guardrails: { enabled: true } })).toEqual([
      'guardrails.provider: is missing (enabled guardrails need a provider or rules)',
    ]);
    expect(
      configProblems({
        guardrails: { enabled: true, provider: { use: 'allowlist', config: { allowed: ['bash'] } } },
      }),
    ).toEqual([expect.stringMatching(/^guardrails\.provider\.config/)]);
  });
});
