/**
 * An ACP agent's environment: the worker's, with the provider's `env` over it. A value may name environment
 * variables of the worker (`$NAME`, `${NAME}`; `$$` is a `$`), resolved here by the resolver every remote
 * provider shares (../shared.ts), on the worker that spawns the agent: history and config only ever hold the
 * names. No message here ever holds a value.
 */
import type { AcpProviderSettings } from '../../../contracts/remote-subagent';
import { resolveEnvReferences } from '../shared';

/** The environment the agent is spawned with; a RemoteSettingsError when a value names an unset variable. */
export function agentEnvironment(
  settings: Pick<AcpProviderSettings, 'name' | 'env'>,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const own = resolveEnvReferences(settings.env, env, `subagent_providers.${settings.name}.env`).values;
  return { ...env, ...own };
}
