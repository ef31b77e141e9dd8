import { parseConfig } from '../../../contracts/config';
import { resolveAgent } from '../../../contracts/config/agents';
import { applyRunFlags, integerFlag, parseFlags, RUN_FLAGS, UsageError } from '../../../client/flags';

const base = () =>
  parseConfig({
    models: [
      { name: 'fast', provider: 'scripted', model: 'a' },
      { name: 'smart', provider: 'scripted', model: 'b' },
    ],
    subagents: { model: 'smart', agents: { bash: { model: 'fast' } } },
  }).config;

describe('run flags', () => {
  it('--provider openai puts one model under the lead and every subagent, key from the environment', () => {
    const { values } = parseFlags(['--provider', 'openai', '--model', 'gpt-x', 'prompt'], RUN_FLAGS);
    const config = applyRunFlags(base(), values, {});
    expect(config.models).toEqual([
      { name: 'gpt-x', provider: 'openai', model: 'gpt-x', api_key_env: 'OPENAI_API_KEY' },
    ]);
    expect(resolveAgent(config, 'bash').model.name).toBe('gpt-x');
    expect(resolveAgent(config, 'general-purpose').model.name).toBe('gpt-x');
  });

  it('--model naming a configured model selects it for everyone', () => {
    const { values } = parseFlags(['--model', 'smart'], RUN_FLAGS);
    const config = applyRunFlags(base(), values, {});
    expect(config.models.map((m) => m.name)).toEqual(['smart']);
    expect(resolveAgent(config, 'bash').model.model).toBe('b');
  });

  it('leaves the config alone without model flags, and sets the limits it is given', () => {
    const { values } = parseFlags(['--max-running', '5', '--max-total', '12'], RUN_FLAGS);
    const config = applyRunFlags(base(), values, {});
    expect(resolveAgent(config, 'bash').model.name).toBe('fast');
    expect(config.subagent_runtime.max_running).toBe(5);
    expect(config.subagents.max_total_per_run).toBe(12);
  });

  it('refuses numbers out of range or not whole, naming the flag, the value and the range', () => {
    const parse = (args: string[]) => parseFlags(args, RUN_FLAGS).values;
    expect(() => integerFlag(parse(['--max-total', '80']), 'max-total', 1, 50)).toThrow(
      new UsageError('--max-total: 80 is out of range (1–50)'),
    );
    expect(() => integerFlag(parse(['--max-running', '2.5']), 'max-running', 1, 10)).toThrow(
      /"2.5" is not a whole number/,
    );
    expect(() =>
      integerFlag(parse(['--max-running', '0']), 'max-running', 1, Number.MAX_SAFE_INTEGER),
    ).toThrow(/0 is out of range \(at least 1\)/);
  });
});
