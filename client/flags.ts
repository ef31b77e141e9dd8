/**
 * Command-line flags: parsing with one-line errors, and the flags that override the config
 * (`--provider`, `--model`, `--max-running`, `--max-total`).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Config } from '../contracts/config';
import type { ModelSettings } from '../contracts/model';

/** A mistake the user can fix: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

export const COMMON_FLAGS: FlagSpec = {
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
  workspace: { type: 'string' },
};

/** `run` only: `start` has its own prompt. */
export const PROMPT_FLAGS: FlagSpec = {
  'prompt-file': { type: 'string' },
};

export type FlagValues = Record<string, string | boolean | undefined>;

export function parseFlags(args: string[], spec: FlagSpec): { values: FlagValues; positionals: string[] } {
  try {
    const parsed = parseArgs({
      args,
      options: { ...COMMON_FLAGS, ...spec },
      allowPositionals: true,
      strict: true,
    });
    return { values: parsed.values as FlagValues, positionals: parsed.positionals };
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message.split('\n')[0] : String(err));
  }
}

export function stringFlag(values: FlagValues, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
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

export function hostPortFlag(values: FlagValues, name: string): string | undefined {
  const raw = stringFlag(values, name);
  if (raw === undefined) return undefined;
  if (!/^[\w.-]+:\d{1,5}$/.test(raw) && !/^\[[\da-fA-F:]+\]:\d{1,5}$/.test(raw)) {
    throw new UsageError(`--${name}: ${JSON.stringify(raw)} is not HOST:PORT (e.g. 127.0.0.1:7233)`);
  }
  return raw;
}

const PROVIDERS = ['scripted', 'openai'] as const;

/**
 * The model the flags (or, for `npm start`, OPENAI_BASE_URL + OPENAI_API_KEY) ask for, or undefined to keep
 * the config's. One model then serves the lead and every subagent.
 */
export function modelFromFlags(
  values: FlagValues,
  config: Config,
  env: NodeJS.ProcessEnv,
): ModelSettings | undefined {
  const provider = stringFlag(values, 'provider');
  const model = stringFlag(values, 'model');
  if (provider !== undefined && !(PROVIDERS as readonly string[]).includes(provider)) {
    throw new UsageError(
      `--provider: ${JSON.stringify(provider)} is not a provider (${PROVIDERS.join(', ')})`,
    );
  }
  if (provider === 'openai') {
    const id = model ?? env.OPENAI_MODEL ?? 'gpt-4o-mini';
    return { name: id, provider: 'openai', model: id, api_key_env: 'OPENAI_API_KEY' };
  }
  if (provider === 'scripted') {
    const current = config.models.find((m) => m.provider === 'scripted');
    return {
      name: 'scripted',
      provider: 'scripted',
      model: model ?? current?.model ?? 'scripted',
      ...(current?.script_file && { script_file: current.script_file }),
    };
  }
  if (model !== undefined) {
    const named = config.models.find((m) => m.name === model);
    return named ?? { ...config.models[0], model };
  }
  return undefined;
}

/** The config with the flags applied; the config file itself is checked before this, strictly. */
export function applyRunFlags(config: Config, values: FlagValues, env: NodeJS.ProcessEnv): Config {
  const next: Config = structuredClone(config);
  const model = modelFromFlags(values, config, env);
  if (model) {
    next.models = [model];
    // Every reference now names the one model, so no agent keeps pointing at one that is gone.
    delete next.subagents.model;
    for (const override of Object.values(next.subagents.agents)) delete override.model;
    for (const custom of Object.values(next.subagents.custom_agents)) delete custom.model;
    delete next.summarization.model;
  }
  const maxRunning = integerFlag(values, 'max-running', 1, Number.MAX_SAFE_INTEGER);
  if (maxRunning !== undefined) next.subagent_runtime.max_running = maxRunning;
  const maxTotal = integerFlag(values, 'max-total', 1, 50);
  if (maxTotal !== undefined) next.subagents.max_total_per_run = maxTotal;
  return next;
}
