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
