/**
 * The digest of a worker's effective config: what decides how the runs it takes execute. Its config (all of
 * it but where it connects and how it is observed), and what its environment adds: whether the keys and
 * endpoints its models' providers and its payload store read are set, and to what (as fingerprints, never the
 * values), its payload store, the ids of its encryption keys. Workers publish it in their heartbeats (a plugin
 * name: contracts/worker-heartbeats.ts); `run` computes its own and hands a run to the recorded dev server's
 * workers only when theirs is the same (cli/run-session.ts). Two processes that load the same config file with
 * the same flags in the same environment get the same digest; any difference counts, even one a run would not
 * feel: a worker of the run's own costs seconds, a run on the wrong worker fails.
 */
import { createHash } from 'node:crypto';
import type { WorkerPlugin } from '@temporalio/worker';
import type { Config } from '../contracts/config';
import { keyVariable } from '../contracts/config/tools';
import { DEFAULT_API_KEY_ENVS, type NetworkModelProvider } from '../contracts/model';
import { CONFIG_DIGEST_PLUGIN_PREFIX } from '../contracts/worker-heartbeats';
import { processEncryptionKeys } from '../payloads/encryption-keys';
import { localPayloadDir } from '../payloads/store';

/** What a worker's process adds to its config. */
export interface ConfigDigestFacts {
  /** The process's environment: only the variables the config's providers and payload store read are looked at. */
  env: Readonly<Record<string, string | undefined>>;
  /** The folder of a local payload store, SUBAGENTS_PAYLOAD_DIR applied (an S3 store is all in the config). */
  payloadDir?: string;
  /** The ids of the payload encryption keys it holds, newest first (ids only: they name keys, not reveal them). */
  encryptionKeyIds: readonly string[];
}

/**
 * Sections that do not change how a run executes: where the worker connects (the task queue is where `run`
 * looks, so only workers of the same one are ever compared), its workflow cache and host id, its metrics and
 * traces.
 */
const NOT_DIGESTED: readonly (keyof Config)[] = ['temporal', 'worker', 'metrics', 'tracing'];

/** AWS's own credential chain, read by Bedrock models and by an S3 payload store without named variables. */
const AWS_ENV = [
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_PROFILE',
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
];

/**
 * The variables each provider's client reads besides its key (activities/model/*.ts): an endpoint, a version,
 * AWS's chain. Keep in step with the providers.
 */
const PROVIDER_ENV: Readonly<Record<NetworkModelProvider, readonly string[]>> = {
  openai: ['OPENAI_BASE_URL'],
  azure_openai: ['AZURE_OPENAI_ENDPOINT', 'OPENAI_API_VERSION'],
  anthropic: [],
  google: [],
  bedrock: AWS_ENV,
  ollama: ['OLLAMA_BASE_URL'],
};

/** The environment variables a worker with `config` reads when it runs runs, sorted. */
export function digestedEnvNames(config: Config): string[] {
  const names = new Set<string>();
  for (const model of config.models) {
    if (model.provider === 'scripted') continue;
    const provider = model.provider as NetworkModelProvider;
    for (const name of model.api_key_env ? [model.api_key_env] : DEFAULT_API_KEY_ENVS[provider])
      names.add(name);
    for (const name of PROVIDER_ENV[provider]) names.add(name);
  }
  // The web tools' keys (contracts/config/tools.ts): another key, another worker.
  for (const entry of config.tools ?? []) {
    const variable = keyVariable(entry);
    if (variable !== undefined) names.add(variable);
  }
  const { payloads } = config;
  if (payloads.store === 's3') {
    const named = [payloads.s3?.access_key_id_env, payloads.s3?.secret_access_key_env];
    for (const name of named.every((n) => n === undefined) ? AWS_ENV : named) if (name) names.add(name);
  }
  return [...names].sort();
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** JSON with every object's keys sorted (undefined members left out, as JSON.stringify does). */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Hex digits of the digest: 64 bits, ample to tell the configs on one server apart. */
const DIGEST_HEX_DIGITS = 16;

/** The digest of `config` run in a process with `facts`: equal inputs, equal digests. */
export function configDigest(config: Config, facts: ConfigDigestFacts): string {
  const sections = Object.fromEntries(
    Object.entries(config).filter(([key]) => !NOT_DIGESTED.includes(key as keyof Config)),
  );
  // A fingerprint of each variable's value: a key set in one shell and not another, or another key, differs.
  const env = Object.fromEntries(
    digestedEnvNames(config).map((name) => {
      const value = facts.env[name];
      return [name, value ? sha256(`${name}=${value}`) : null];
    }),
  );
  const digested = {
    version: 1,
    config: sections,
    env,
    payload_dir: facts.payloadDir ?? null,
    encryption_key_ids: facts.encryptionKeyIds,
  };
  return sha256(canonicalJson(digested)).slice(0, DIGEST_HEX_DIGITS);
}

/** The digest of `config` in a process with `env`: its payload folder and its encryption keys from there. */
export function processConfigDigest(config: Config, env: NodeJS.ProcessEnv = process.env): string {
  const { payloads } = config;
  return configDigest(config, {
    env,
    ...(payloads.store !== 's3' && { payloadDir: localPayloadDir(payloads, env) }),
    encryptionKeyIds: processEncryptionKeys(config.payloads.encryption, env).map((key) => key.id),
  });
}

/** The plugin whose name publishes `digest` in the worker's heartbeats; it changes nothing else. */
export function configDigestPlugin(digest: string): WorkerPlugin {
  return { name: `${CONFIG_DIGEST_PLUGIN_PREFIX}${digest}` };
}
