import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigError, parseConfig, type Config } from '../contracts/config';
import { workspaceRootProblem } from '../contracts/inputs';

export interface LoadedConfig {
  /** Every default applied; file paths in it are absolute. */
  config: Config;
  /** For the caller to print: unused sections, ignored DeerFlow keys, values adjusted. */
  warnings: string[];
  /** Absolute path of the file read; absent when the defaults were used. */
  path?: string;
}

/**
 * Reads a YAML config file (no path: the defaults). Relative paths in it are taken from the file's folder,
 * so a config works the same from any working directory; `$NAME` values are read from `env`.
 */
export function loadConfig(path?: string, env: NodeJS.ProcessEnv = process.env): LoadedConfig {
  if (path === undefined) {
    const { config, warnings } = parseConfig({}, { env });
    return { config: withAbsolutePaths(config, process.cwd()), warnings };
  }
  const file = resolve(path);
  const raw = readYaml(file);
  try {
    const { config, warnings } = parseConfig(raw.value, { env });
    return {
      config: withAbsolutePaths(config, dirname(file)),
      warnings: [...raw.warnings, ...warnings],
      path: file,
    };
  } catch (error) {
    if (error instanceof ConfigError) {
      const count = error.problems.length === 1 ? '1 problem' : `${error.problems.length} problems`;
      throw new ConfigError(error.problems, `config file ${file} has ${count}:`);
    }
    throw error;
  }
}

function readYaml(file: string): { value: unknown; warnings: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'does not exist'
        : code === 'EISDIR'
          ? 'is a folder, not a file'
          : `cannot be read (${(error as Error).message})`;
    throw new ConfigError([`config file ${file} ${reason}`]);
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
  return {
    value: document.toJS(),
    warnings: document.warnings.map((warning) => `${file}: ${warning.message.split('\n')[0]}`),
  };
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
            tls: dropUndefined({
              server_name: tls.server_name,
              server_root_ca_cert_path: absolute(tls.server_root_ca_cert_path),
              client_cert_path: absolute(tls.client_cert_path),
              client_key_path: absolute(tls.client_key_path),
            }),
          },
    workspace: dropUndefined({
      root,
      sample_dir: absolute(config.workspace.sample_dir),
    }),
    payloads: dropUndefined({ ...config.payloads, path: absolute(config.payloads.path) }),
  };
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}
