/** The problems the config refuses a content with, for tests that pin the messages. */
import { ConfigError, parseConfig, type ParseOptions } from '../../contracts/config';

/** parseConfig's problems for `raw`, one a line (and nothing above them); fails the test if it accepts it. */
export function configProblems(raw: unknown, options: ParseOptions = {}): string[] {
  try {
    parseConfig(raw, options);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect((error as ConfigError).message).toBe(problems.join('\n'));
    return problems;
  }
  throw new Error('the config was accepted');
}

/** The problems of a config with this `sandbox:` section; none when it is accepted. */
export function sandboxProblems(sandbox: Record<string, unknown>): string[] {
  try {
    parseConfig({ sandbox });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}
