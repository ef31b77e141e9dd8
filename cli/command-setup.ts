/**
 * What the commands start with: the config with the flags written in (its warnings on stderr, its payload
 * settings in force for this process), and the server they talk to.
 */
import { join, resolve } from 'node:path';
import type { Config } from '../contracts/config';
import { loadConfig } from '../client/config';
import { configurePayloads } from '../payloads/store';
import { configureStreamBridge } from '../payloads/stream/bridge';
import { workspaceFolderProblem } from '../client/api';
import { connectionSettings, type ConnectionSettings } from '../client/connection';
import { findRunningDevServer } from '../devserver/dev-server-state';
import { configOverrides, stringFlag, UsageError, type FlagValues } from './flags';

const say = (line: string) => process.stderr.write(`${line}\n`);

/** The config file (`--config`, else the defaults) with the flags' settings checked as part of it. */
export function loadCommandConfig(values: FlagValues, env: NodeJS.ProcessEnv = process.env): Config {
  const { config, warnings } = loadConfig(stringFlag(values, 'config'), env, configOverrides(values, env));
  for (const warning of warnings) say(`warning: ${warning}`);
  configurePayloads(config.payloads);
  configureStreamBridge(config.stream_bridge);
  return config;
}

/**
 * The server the flags, config or environment name, else the one `subagents dev-server` runs; with neither,
 * a UsageError that says how to get one.
 */
export async function requireServer(
  command: string,
  config: Config,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ConnectionSettings & { address: string }> {
  const settings = connectionSettings(config.temporal, env);
  if (settings.address !== undefined) return { ...settings, address: settings.address };
  const recorded = await findRunningDevServer(env);
  if (!recorded) {
    throw new UsageError(
      `${command}: no server: pass --address HOST:PORT, or start one with \`subagents dev-server\``,
    );
  }
  return { ...settings, address: recorded.address, namespace: recorded.namespace };
}

/** The run's workspace folder, made and checked before anything starts (a bad one is a UsageError). */
export function runWorkspace(config: Config, values: FlagValues, runId: string): string {
  const flag = stringFlag(values, 'workspace');
  if (flag !== undefined && flag.trim() === '') {
    throw new UsageError('--workspace: "" is empty (give a folder, e.g. --workspace ./work)');
  }
  const workspace = resolve(flag ?? join(config.workspace.root, runId));
  const problem = workspaceFolderProblem(workspace);
  if (problem !== undefined) {
    const where = flag === undefined ? `workspace.root/${runId}` : '--workspace';
    throw new UsageError(`${where}: ${JSON.stringify(workspace)} ${problem}`);
  }
  return workspace;
}
