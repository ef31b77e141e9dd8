/**
 * Request-scoped secrets in bash (issue 30): the sealed values a tool call carries are opened with the worker's
 * keyring, handed to the command as environment variables, and masked wherever they would come back to the
 * model (its output, the tool's error text). Also the worker-environment policy every bash kind follows.
 */
import { maskedSecret, secretNameProblem, type SealedSecret } from '../../contracts/secrets';
import type { PayloadKeyring } from '../../payloads/encryption-codec';
import { openSecrets } from '../../payloads/secrets';
import { ToolError } from './tool-context';

/**
 * Values shorter than this are not masked: masking every `a` or `1` of an output would make it unreadable
 * (and would tell the value as surely). A secret worth the name is longer; docs/skills.md says so.
 */
export const MIN_MASKED_SECRET_CHARS = 4;

/**
 * A worker variable whose name looks like it holds a secret (DeerFlow's environment policy): never passed on
 * to a command, whatever the sandbox. Request-scoped secrets are the way to give a command one.
 */
export function isSecretLookingName(name: string): boolean {
  return /KEY|SECRET|TOKEN|PASS/i.test(name) || name.toUpperCase() === 'DATABASE_URL';
}

/** The variables `names` of `env` that are set and do not look secret. */
export function inheritedEnv(names: readonly string[], env: NodeJS.ProcessEnv): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && !isSecretLookingName(name)) kept[name] = value;
  }
  return kept;
}

/**
 * The plain values of a call's secrets (name → value). One that cannot be opened (no keyring, a key this worker
 * does not hold, a damaged or misnamed value) fails the call with a tool error naming it, never its value.
 */
export function openBashSecrets(
  secrets: readonly SealedSecret[] | undefined,
  keyring: PayloadKeyring | undefined,
): Record<string, string> {
  if (secrets === undefined || secrets.length === 0) return {};
  for (const secret of secrets) {
    const problem = secretNameProblem(secret.name);
    if (problem !== undefined) throw new ToolError(`bash: secret ${JSON.stringify(secret.name)} ${problem}`);
  }
  if (keyring === undefined || keyring.keyIds.length === 0) {
    throw new ToolError(
      `bash: secret ${secrets[0].name} cannot be opened: this worker holds no encryption key (the client and ` +
        'the workers need a shared one: SUBAGENTS_ENCRYPTION_KEY or payloads.encryption)',
    );
  }
  const values: Record<string, string> = {};
  for (const secret of secrets) {
    try {
      Object.assign(values, openSecrets(keyring, [secret]));
    } catch (err) {
      // The keyring's messages name the secret (`secret NAME is encrypted with key …`) and never hold key or value.
      const reason = err instanceof Error ? err.message : String(err);
      throw new ToolError(`bash: secret ${secret.name} cannot be opened: ${reason}`);
    }
  }
  return values;
}

/** A function that shows each value (of MIN_MASKED_SECRET_CHARS or more) as `maskedSecret(name)`. */
export function secretMasker(values: Readonly<Record<string, string>>): {
  mask: (text: string) => string;
  /** The longest value masked: how far a value may reach past a cut. */
  longest: number;
} {
  // Longest first: a value that contains another is masked whole.
  const masked = Object.entries(values)
    .filter(([, value]) => value.length >= MIN_MASKED_SECRET_CHARS)
    .sort(([, a], [, b]) => b.length - a.length);
  return {
    mask: (text) => masked.reduce((out, [name, value]) => out.split(value).join(maskedSecret(name)), text),
    longest: masked.reduce((most, [, value]) => Math.max(most, value.length), 0),
  };
}
