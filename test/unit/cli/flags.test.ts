import { parseConfig } from '../../../contracts/config';
import { resolveAgent } from '../../../contracts/config/agents';
import { buildBatchInput } from '../../../contracts/config/batch-input';
import { buildLeadRunInput } from '../../../contracts/config/lead-input';
import { configOverrides, parseFlags, RUN_FLAGS, UsageError } from '../../../cli/flags';
import { configProblems } from '../../support/config-problems';

const file = {
  models: [
    { name: 'fast', provider: 'scripted', model: 'a' },
    { name: 'smart', provider: 'scripted', model: 'b' },
  ],
  subagents: { model: 'smart', agents: { bash: { model: 'fast' } } },
};

/** The config `file` (or the defaults) with the flags of `args` written in, as a command loads it. */
function configWith(args: string[], raw: unknown = file, env: NodeJS.ProcessEnv = {}) {
  const { values } = parseFlags(args, RUN_FLAGS);
  return parseConfig(raw, { env, overrides: configOverrides(values, env) }).config;
}

function problemsOf(args: string[], raw: unknown = {}): string[] {
  const { values } = parseFlags(args, RUN_FLAGS);
  return configProblems(raw, { overrides: configOverrides(values, {}) });
}

describe('run flags', () => {
  it('--provider openai puts one model under the lead and every subagent, key from the environment', () => {
    const config = configWith(['--provider', 'openai', '--model', 'gpt-x', 'prompt']);
    expect(config.models).toEqual([
      { name: 'gpt-x', provider: 'openai', model: 'gpt-x', api_key_env: 'OPENAI_API_KEY' },
    ]);
    expect(resolveAgent(config, 'bash').model.name).toBe('gpt-x');
    expect(resolveAgent(config, 'general-purpose').model.name).toBe('gpt-x');
  });

  it('--provider openai takes the model id from OPENAI_MODEL, else gpt-4o-mini', () => {
    expect(configWith(['--provider', 'openai'], {}, { OPENAI_MODEL: 'deepseek-chat' }).models[0].model).toBe(
      'deepseek-chat',
    );
    expect(configWith(['--provider', 'openai'], {}).models[0].model).toBe('gpt-4o-mini');
  });

  it('--model naming a configured model selects it for everyone', () => {
    const config = configWith(['--model', 'smart']);
    expect(config.models.map((m) => m.name)).toEqual(['smart']);
    expect(resolveAgent(config, 'bash').model.model).toBe('b');
  });

  it('leaves the config alone without model flags, and sets the limits it is given', () => {
    const config = configWith(['--max-running', '5', '--max-total', '12']);
    expect(resolveAgent(config, 'bash').model.name).toBe('fast');
    expect(config.subagent_runtime.max_running).toBe(5);
    expect(config.subagents.max_total_per_run).toBe(12);
  });

  it('--max-running bounds how many task calls one response may make (3 by default, 1–4 when set)', () => {
    const input = (args: string[]) =>
      buildLeadRunInput(configWith(args, {}), { prompt: 'Go.', workspace: '/srv/project' });
    expect(input([]).limits.max_concurrent).toBe(3);
    // The seeds' default holds above it; below it, the capacity is the limit.
    expect(input(['--max-running', '5']).limits.max_concurrent).toBe(3);
    expect(input(['--max-running', '1']).limits.max_concurrent).toBe(1);
    // The file's own per-response limit still holds below the new capacity, and is clamped above it.
    expect(
      buildLeadRunInput(configWith(['--max-running', '5'], { subagents: { max_concurrent: 2 } }), {
        prompt: 'Go.',
        workspace: '/srv/project',
      }).limits.max_concurrent,
    ).toBe(2);
    expect(
      configWith(['--max-running', '2'], { subagents: { max_concurrent: 4 } }).subagents.max_concurrent,
    ).toBe(2);
  });

  it('--fairness-key puts the run in a tenant’s turn at admission; without it each run has its own', () => {
    const input = (args: string[], file: Record<string, unknown> = {}) =>
      buildLeadRunInput(configWith(args, file), { prompt: 'Go.', workspace: '/srv/project' });
    expect(input([]).scope.fairness_key).toBeUndefined();
    expect(input(['--fairness-key', 'team-a']).scope.fairness_key).toBe('team-a');
    expect(input([], { lead: { fairness_key: 'team-b' } }).scope.fairness_key).toBe('team-b');
    expect(input(['--fairness-key', 'team-a'], { lead: { fairness_key: 'team-b' } }).scope.fairness_key).toBe(
      'team-a',
    );
  });

  it('--user names whose run it is, for the run and a batch; without it neither carries one (default)', () => {
    const input = (args: string[], file: Record<string, unknown> = {}) =>
      buildLeadRunInput(configWith(args, file), { prompt: 'Go.', workspace: '/srv/project' });
    expect(input([]).scope.user_id).toBeUndefined();
    expect(input(['--user', 'alice']).scope.user_id).toBe('alice');
    expect(input([], { lead: { user_id: 'bob@example.org' } }).scope.user_id).toBe('bob@example.org');
    expect(input(['--user', 'alice'], { lead: { user_id: 'bob' } }).scope.user_id).toBe('alice');
    const batch = buildBatchInput(configWith(['--user', 'alice']), {
      description: 'Parts',
      subagent_type: 'general-purpose',
      items: [{ key: 'a', prompt: 'Do a.' }],
      workspace: '/srv/project',
    });
    expect(batch.scope.user_id).toBe('alice');
  });

  it('refuses a user id that could leave its folder, naming the flag', () => {
    for (const bad of ['../alice', 'a/b', '.hidden', '', 'x'.repeat(129)]) {
      const problems = problemsOf(['--user', bad]);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^--user: .*is not a user id \(letters, digits/);
    }
  });

  it('refuses values the config refuses, with the config’s message under the flag’s name', () => {
    expect(problemsOf(['--max-total', '80'])).toEqual(['--max-total: 80 is out of range (1–50)']);
    expect(problemsOf(['--max-running', '2.5'])).toEqual([
      '--max-running: 2.5 is not a whole number (1 or more)',
    ]);
    expect(problemsOf(['--max-running', '0'])).toEqual(['--max-running: 0 is out of range (1 or more)']);
    expect(problemsOf(['--max-running', 'many'])).toEqual([
      '--max-running: "many" is not a whole number (1 or more)',
    ]);
    expect(problemsOf(['--provider', 'gemini'])).toEqual([
      '--provider: "gemini" is not an accepted value (scripted, openai, anthropic, google, bedrock, azure_openai, ollama)',
    ]);
    expect(problemsOf(['--address', 'temporal.internal:99999'])).toEqual([
      '--address: "temporal.internal:99999" is not host:port (e.g. localhost:7233, port 1–65535)',
    ]);
    expect(problemsOf(['--namespace', ''])).toEqual(['--namespace: "" is empty (write some text)']);
    expect(problemsOf(['--address', 'localhost:7233'], { temporal: 'localhost' })).toEqual([
      'temporal: "localhost" is not a mapping (keys: address, namespace, task_queue, api_key, tls, ui_url)',
    ]);
  });
});

describe('a flag the command does not take', () => {
  it('says in one line that a run flag belongs to `run`, and why', () => {
    expect(() => parseFlags(['--provider', 'openai'], {}, 'worker')).toThrow(
      new UsageError(
        'worker: --provider is a flag of `subagents run` (the run chooses the model, not `subagents worker`)',
      ),
    );
    expect(() => parseFlags(['--max-total=4'], {}, 'worker')).toThrow(
      'worker: --max-total is a flag of `subagents run` (the run sets its delegation limits, not `subagents worker`)',
    );
  });

  it('names any other unknown flag as Node does', () => {
    expect(() => parseFlags(['--turbo'], {}, 'worker')).toThrow(/^Unknown option '--turbo'/);
  });
});
