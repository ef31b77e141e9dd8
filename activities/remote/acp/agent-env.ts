/**
 * An ACP agent's environment: the worker's, with the provider's `env` over it. A value may name environment
 * variables of the worker (`$NAME`, `${NAME}`; `$$` is a `$`), resolved here, on the worker that spawns the
 * agent: history and config only ever hold the names. No message here ever holds a value.
 */
import type { AcpProviderSettings } from '../../../contracts/remote-subagent';

/** A value names an environment variable this worker does not have. */
export class UnsetVariableError extends Error {
  override name = 'UnsetVariableError';
}

const REFERENCE = /\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/** `value` with each `$NAME` / `${NAME}` replaced by its value in `env`; `where` names it in the error. */
export function resolveReferences(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(REFERENCE, (whole, braced: string | undefined, bare: string | undefined) => {
    if (whole === '$$') return '$';
    const name = (braced ?? bare) as string;
    const resolved = env[name];
    if (resolved === undefined) {
      throw new UnsetVariableError(
        `${where} names the environment variable $${name}, which is not set on this worker`,
      );
    }
    return resolved;
  });
}

/** The environment the agent is spawned with; an UnsetVariableError when a value names an unset variable. */
export function agentEnvironment(
  settings: Pick<AcpProviderSettings, 'name' | 'env'>,
  env: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const own: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(settings.env)) {
    own[key] = resolveReferences(value, env, `subagent_providers.${settings.name}.env.${key}`);
  }
  return { ...env, ...own };
}
