/**
 * How a web call fails. A refusal (the guard, a host that does not resolve, a provider that says 4xx, a missing
 * key) becomes an error result the model reads; a transient failure (429, 5xx, a reset connection) is thrown,
 * so the tool activity is retried as a model call is. No message carries a key: providers' answers are quoted
 * with every key masked (`withoutSecrets`).
 */
export { WebRefusal } from './addresses';

/** Worth another attempt: the activity's retry policy gives it one. */
export class TransientWebError extends Error {
  override name = 'TransientWebError';
}

/** `text` with each secret's value replaced by `***`. */
export function withoutSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 4) out = out.split(secret).join('***');
  }
  return out;
}
