/**
 * What the remote providers (A2A, ACP) share: reading the secrets their settings name from the worker's
 * environment, and keeping those secrets out of every message that leaves the activity. History only ever
 * holds the names (`Bearer $TEAM_TOKEN`); the values exist in the worker's memory while it calls.
 */

/** A provider's settings cannot be used on this worker (a variable they name is not set). */
export class RemoteSettingsError extends Error {
  override name = 'RemoteSettingsError';
}

/** `$NAME`, `${NAME}`, or `$$` (a literal `$`). Any other `$` stays as it is. */
const ENV_REFERENCE = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)|\$)/g;

/** One settings map with its environment references resolved, and the values that came from the environment. */
export interface ResolvedValues {
  values: Record<string, string>;
  /** What a message must never show (each value read from the environment). */
  secrets: string[];
}

/**
 * Resolves `$NAME` and `${NAME}` anywhere in each value (`Bearer $TEAM_TOKEN`) from `env`; `$$` is a literal
 * `$`. A variable that is not set is a RemoteSettingsError naming `where.key` and the variable, never a value.
 */
export function resolveEnvReferences(
  values: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv,
  where: string,
): ResolvedValues {
  const secrets = new Set<string>();
  const resolved = Object.fromEntries(
    Object.entries(values).map(([key, value]) => [
      key,
      value.replace(ENV_REFERENCE, (_match, braced: string | undefined, bare: string | undefined) => {
        const name = braced ?? bare;
        if (name === undefined) return '$';
        const found = env[name];
        if (found === undefined) {
          throw new RemoteSettingsError(
            `${where}.${key} names $${name}, which is not set in the worker's environment`,
          );
        }
        if (found !== '') secrets.add(found);
        return found;
      }),
    ]),
  );
  return { values: resolved, secrets: [...secrets] };
}

/** Shorter values are left alone: replacing every "1" or "on" in a message would make it unreadable. */
const MIN_REDACTED_LENGTH = 4;

/** `text` with every secret replaced by `[redacted]` (the longest first, so no part of one is left). */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= MIN_REDACTED_LENGTH) out = out.split(secret).join('[redacted]');
  }
  return out;
}
