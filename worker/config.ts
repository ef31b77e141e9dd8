import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, parseConfig, type Config, type ConfigSections } from '../contracts/config';
import { parseGraphReference } from '../contracts/graph';
import type { ConfigOverrides } from '../contracts/config/overrides';
import { withExtensionsConfig } from './mcp-config';
import { workspaceRootProblem } from '../contracts/inputs';
import { withoutUndefined } from '../contracts/records';

/** `custom_agents` with each `graph:` module path made absolute against `base` (the config file's folder). */
function withAbsoluteGraphs<A extends { graph?: string }>(
  agents: Record<string, A>,
  base: string,
): Record<string, A> {
  return Object.fromEntries(
    Object.entries(agents).map(([name, agent]) => {
      const reference = agent.graph === undefined ? undefined : parseGraphReference(agent.graph);
      if (reference === undefined) return [name, agent];
      return [name, { ...agent, graph: `${resolve(base, reference.module)}#${reference.export}` }];
    }),
  );
}

/** A guardrail policy whose module path is made absolute against `base`; any other as it is. */
function withAbsoluteModule<P extends { module?: string } | undefined>(policy: P, base: string): P {
  return policy?.module === undefined ? policy : { ...policy, module: resolve(base, policy.module) };
}

/** Agents' guardrail overrides with their module paths absolute. */
function withAbsoluteAgentGuardrails<A extends { guardrails?: { policy?: { module?: string } } }>(
  agents: Record<string, A>,
  base: string,
): Record<string, A> {
  return Object.fromEntries(
    Object.entries(agents).map(([name, agent]) => [
      name,
      agent.guardrails === undefined
        ? agent
        : {
            ...agent,
            guardrails: { ...agent.guardrails, policy: withAbsoluteModule(agent.guardrails.policy, base) },
          },
    ]),
  );
}

export interface LoadedConfig {
  /** Every default applied; file paths in it are absolute. */
  config: Config;
  /** For the caller to print: unused sections, ignored DeerFlow keys, values adjusted. */
  warnings: string[];
  /** Absolute path of the file read; absent when the defaults were used. */
  path?: string;
  /** The file's top-level sections, read and ignored; none for the defaults. */
  sections: ConfigSections;
}

/**
 * Reads a YAML config file (no path: the defaults) with `overrides` (the command line's settings) written in
 * before it is checked. Relative paths in it are taken from the file's folder, so a config works the same
 * from any working directory; `$NAME` values are read from `env`.
 */
export function loadConfig(
  path?: string,
  env: NodeJS.ProcessEnv = process.env,
  overrides?: ConfigOverrides,
): LoadedConfig {
  if (path === undefined) {
    const { config, warnings, sections } = parseConfig({}, { env, overrides });
    return withExtensionsConfig({ config: withAbsolutePaths(config, process.cwd()), warnings, sections });
  }
  const file = resolve(path);
  const raw = readYaml(file);
  const { config, warnings, sections } = parseConfig(raw.value, { env, overrides, file });
  return withExtensionsConfig({
    config: withAbsolutePaths(config, dirname(file)),
    warnings: [...raw.warnings, ...warnings],
    sections,
    path: file,
  });
}

/**
 * The skills folder a run started from this config gets (`buildLeadRunInput`'s `skills_root`): `skills.path`
 * (absolute once loaded) when it is a folder on this machine; else undefined, and the run has no skills (and
 * takes no snapshot). Here, beside the loader, so a client command loads no worker code for it.
 */
export function existingSkillsRoot(config: Pick<Config, 'skills'>): string | undefined {
  const root = resolve(config.skills.path);
  try {
    return statSync(root).isDirectory() ? root : undefined;
  } catch {
    return undefined;
  }
}

/** Aliases one document may expand, weighted by what each expands to (the `yaml` package's measure). */
const MAX_ALIAS_COUNT = 100;

/** Far above any real config; a larger file is a mistake (a binary, a log) not worth reading into memory. */
const MAX_CONFIG_BYTES = 1024 * 1024;

function readYaml(file: string): { value: unknown; warnings: string[] } {
  let bytes: Buffer;
  try {
    const stat = statSync(file);
    // A device or a pipe (/dev/zero) has no size to check and may never end.
    if (!stat.isFile() && !stat.isDirectory()) {
      throw new ConfigError([`config file ${file} is not a regular file`]);
    }
    if (stat.size > MAX_CONFIG_BYTES) {
      throw new ConfigError([
        `config file ${file} is over ${MAX_CONFIG_BYTES / (1024 * 1024)} MB, the most a config file may be`,
      ]);
    }
    bytes = readFileSync(file);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EISDIR'
          ? 'is a folder, not a file'
          : `cannot be read (${(error as Error).message})`;
    throw new ConfigError([`config file ${file} ${reason}`]);
  }
  const text = yamlText(bytes);
  if (text === undefined) {
    throw new ConfigError([`config file ${file} is not a YAML text file (binary data, or not UTF-8)`]);
  }
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    throw new ConfigError(
      document.errors.map((error) => {
        const reason = error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
        const at = error.linePos?.[0];
        return at === undefined ? reason : `line ${at.line}, column ${at.col}: ${reason}`;
      }),
      `config file ${file} is not valid YAML:`,
    );
  }
  let value: unknown;
  try {
    value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    // The `yaml` package refuses an alias bomb (billion laughs) and an alias without its anchor with a
    // ReferenceError when it builds the value; say either in one line.
    if (!(error instanceof ReferenceError)) throw error;
    const reason = /excessive alias count/i.test(error.message)
      ? `expands its YAML aliases too far (over ${MAX_ALIAS_COUNT} alias expansions: an alias bomb?)`
      : `is not valid YAML: ${error.message.split('\n')[0]}`;
    throw new ConfigError([`config file ${file} ${reason}`]);
  }
  return {
    value,
    warnings: document.warnings.map((warning) => `${file}: ${warning.message.split('\n')[0]}`),
  };
}

/** The file's text, or undefined when it is not UTF-8 text (a NUL byte or a byte sequence UTF-8 forbids). */
function yamlText(bytes: Buffer): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function withAbsolutePaths(config: Config, base: string): Config {
  const absolute = (path: string | undefined): string | undefined =>
    path === undefined ? undefined : resolve(base, path);
  const tls = config.temporal.tls;
  const root = resolve(base, config.workspace.root);
  const rootProblem = workspaceRootProblem(root, homedir());
  if (rootProblem !== undefined) {
    throw new ConfigError([`workspace.root: ${JSON.stringify(root)} ${rootProblem}`]);
  }
  return {
    ...config,
    models: config.models.map((model) =>
      model.script_file === undefined ? model : { ...model, script_file: resolve(base, model.script_file) },
    ),
    temporal:
      tls === undefined
        ? config.temporal
        : {
            ...config.temporal,
            tls: withoutUndefined({
              server_name: tls.server_name,
              server_root_ca_cert_path: absolute(tls.server_root_ca_cert_path),
              client_cert_path: absolute(tls.client_cert_path),
              client_key_path: absolute(tls.client_key_path),
            }),
          },
    subagents: {
      ...config.subagents,
      agents: withAbsoluteAgentGuardrails(config.subagents.agents, base),
      custom_agents: withAbsoluteAgentGuardrails(
        withAbsoluteGraphs(config.subagents.custom_agents, base),
        base,
      ),
    },
    // A custom guardrail provider is loaded by the workers: its path travels absolute, as a graph module's.
    guardrails: { ...config.guardrails, policy: withAbsoluteModule(config.guardrails.policy, base) },
    workspace: withoutUndefined({
      ...config.workspace,
      root,
      sample_dir: absolute(config.workspace.sample_dir),
    }),
    payloads: withoutUndefined({
      ...config.payloads,
      path: absolute(config.payloads.path),
      encryption: withoutUndefined({
        ...config.payloads.encryption,
        key_file: absolute(config.payloads.encryption.key_file),
      }),
    }),
    tracing: withoutUndefined({ ...config.tracing, file: absolute(config.tracing.file) }),
    // A run carries its skills folder absolute: its workers may not share the starter's working folder.
    skills: { ...config.skills, path: resolve(base, config.skills.path) },
    ...(config.extensions_config !== undefined && {
      extensions_config: resolve(base, config.extensions_config),
    }),
  };
}
