/**
 * Request-scoped secrets (issue 30): values a caller hands one run for its skills' scripts
 * (`subagents run --secret NAME`, the client API's `secrets` map). Each value travels sealed — AES-256-GCM under
 * a key the workers hold (`payloads.encryption`'s keys; an embedded run's own key when none is configured) — so
 * no store (history, memo, search attributes, the payload store, logs) ever holds it in plain text. Its name is
 * no secret and stays readable. Only the bash tool opens a value, and only for an agent whose active skill
 * declares that name in `required-secrets`. Pure: workflow code may import it.
 */

/** One secret as it travels: its name, the id of the key that sealed it, and the sealed bytes in base64. */
export interface SealedSecret {
  name: string;
  key_id: string;
  /** base64 of nonce ‖ ciphertext ‖ tag (payloads/secrets.ts). */
  sealed: string;
}

/** An environment variable's name, as a secret is named: letters, digits and `_`, not starting with a digit. */
export const SECRET_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Why `name` cannot name a secret, or undefined when it can. */
export function secretNameProblem(name: string): string | undefined {
  return SECRET_NAME_PATTERN.test(name)
    ? undefined
    : 'is not a secret name (an environment variable name: letters, digits and _, not starting with a digit)';
}

/** What a masked value shows in place of a secret's value in tool output. */
export function maskedSecret(name: string): string {
  return `[secret ${name}]`;
}
