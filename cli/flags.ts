/**
 * Command-line flags: parsing with one-line errors, `--secret NAME` (read from the environment), and the flags
 * that set config values (`--provider`,
 * `--model`, `--max-running`, `--max-total`, `--address`, `--namespace`, `--task-queue`, `--metrics-port`).
 * Those are written into the config before it is checked, so they meet the same rules, defaults and clamps as
 * the file's values.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { ConfigOverrides, Given } from '../contracts/config/overrides';
import { withoutUndefined } from '../contracts/records';
import { secretNameProblem } from '../contracts/secrets';

/** A mistake the user can fix: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

const COMMON_FLAGS: FlagSpec = {
  config: { type: 'string' },
  address: { type: 'string' },
  namespace: { type: 'string' },
  'task-queue': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean' },
};

export const RUN_FLAGS: FlagSpec = {
  provider: { type: 'string' },
  model: { type: 'string' },
  'max-running': { type: 'string' },
  'max-total': { type: 'string' },
  'fairness-key': { type: 'string' },
  user: { type: 'string' },
  workspace: { type: 'string' },
  secret: { type: 'string', multiple: true },
};

/** `run` only: `start` has its own prompt. */
export const PROMPT_FLAGS: FlagSpec = {
  'prompt-file': { type: 'string' },
};

export type FlagValues = Record<string, string | string[] | boolean | undefined>;

/** Why a flag of `run` means nothing to another command: each run's input carries what it sets. */
const RUN_ONLY_REASONS: Readonly<Record<string, string>> = {
  provider: 'the run chooses the model',
  model: 'the run chooses the model',
  'max-running': 'the run sets its delegation limits; a worker declares it for admission',
  'max-total': 'the run sets its delegation limits',
  'fairness-key': 'the run takes its turn at admission',
  user: 'the run acts for its user',
  workspace: 'the run chooses its workspace',
  secret: 'the run takes the secrets its skills need',
  'prompt-file': 'the run takes the prompt',
};

/**
 * The flags of `args` by `spec` (and the common ones). A flag `command` does not know is a UsageError of one
 * line; one that belongs to `run` says so.
 */
export function parseFlags(
  args: string[],
  spec: FlagSpec,
  command?: string,
): { values: FlagValues; positionals: string[] } {
  try {
    const parsed = parseArgs({
      args,
      options: { ...COMMON_FLAGS, ...spec },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as FlagValues, positionals: parsed.positionals };
  } catch (err) {
    // Not `instanceof Error`: node:util's errors come from another realm under jest.
    const message = String((err as { message?: unknown }).message ?? err).split('\n')[0];
    const unknown = /^Unknown option '--([^']+)'/.exec(message)?.[1];
    const reason = unknown === undefined ? undefined : RUN_ONLY_REASONS[unknown];
    if (command !== undefined && reason !== undefined) {
      throw new UsageError(
        `${command}: --${unknown} is a flag of \`subagents run\` (${reason}, not \`subagents ${command}\`)`,
      );
    }
    throw new UsageError(message);
  }
}

export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The request-scoped secrets `--secret NAME` (repeatable) names, each read from `env` by that name: the value
 * never appears on a command line. A name that is not an environment variable's, or one not set, is a
 * UsageError naming it. Undefined when no --secret is given.
 */
export function secretFlags(values: FlagValues, env: NodeJS.ProcessEnv): Record<string, string> | undefined {
  const given = values.secret;
  const names = Array.isArray(given) ? given : typeof given === 'string' ? [given] : [];
  if (names.length === 0) return undefined;
  const secrets: Record<string, string> = {};
  for (const name of names) {
    const problem = secretNameProblem(name);
    if (problem !== undefined) throw new UsageError(`--secret ${JSON.stringify(name)} ${problem}`);
    const value = env[name];
    if (value === undefined) {
      throw new UsageError(
        `--secret ${name}: the environment variable ${name} is not set; --secret takes a name and reads the ` +
          `value from this command's environment (e.g. \`export ${name}=…\` first)`,
      );
    }
    secrets[name] = value;
  }
  return secrets;
}

/** An integer flag within [min, max], or a message that says what is accepted. */
export function integerFlag(values: FlagValues, name: string, min: number, max: number): number | undefined {
  const raw = stringFlag(values, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) {
    throw new UsageError(`--${name}: ${JSON.stringify(raw)} is not a whole number`);
  }
  if (value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min}–${max}`;
    throw new UsageError(`--${name}: ${value} is out of range (${range})`);
  }
  return value;
}

/** The config key each of these flags sets: the config's own rules check it, its messages name the flag. */
const SETTING_FLAGS: Readonly<Record<string, readonly [section: string, key: string]>> = {
  'max-running': ['subagent_runtime', 'max_running'],
  'max-runs': ['lead_runtime', 'max_running'],
  'max-total': ['subagents', 'max_total_per_run'],
  address: ['temporal', 'address'],
  namespace: ['temporal', 'namespace'],
  'task-queue': ['temporal', 'task_queue'],
  'fairness-key': ['lead', 'fairness_key'],
  user: ['lead', 'user_id'],
  'metrics-port': ['metrics', 'port'],
};

const NUMBER_FLAGS: readonly string[] = ['max-running', 'max-runs', 'max-total', 'metrics-port'];

/** A number when the text is one (the config then says whether it is in range), else the text as given. */
function numberOrText(raw: string): number | string {
  return /^\s*-?\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : raw;
}

/**
 * The config settings the flags give, for the config loader to write into the file's content before it is
 * checked. `--provider` / `--model` (or, for `npm start`, OPENAI_MODEL) put one model under the lead and
 * every subagent.
 */
export function configOverrides(values: FlagValues, env: NodeJS.ProcessEnv): ConfigOverrides {
  const given = (name: string): Given<string> | undefined => {
    const value = stringFlag(values, name);
    return value === undefined ? undefined : { value, source: `--${name}` };
  };
  const provider = given('provider');
  const model =
    given('model') ??
    (provider?.value === 'openai' && env.OPENAI_MODEL !== undefined
      ? { value: env.OPENAI_MODEL, source: 'OPENAI_MODEL' }
      : undefined);
  const settings = Object.entries(SETTING_FLAGS).flatMap(([name, path]) => {
    const raw = stringFlag(values, name);
    if (raw === undefined) return [];
    return [{ path, value: NUMBER_FLAGS.includes(name) ? numberOrText(raw) : raw, source: `--${name}` }];
  });
  return withoutUndefined({ provider, model, settings });
}
