/**
 * Sealing and opening request-scoped secrets (contracts/secrets.ts) with the payload keyring: the client seals
 * with the newest key, a worker opens with any key it holds. The same AES-256-GCM as payloads, bound to the
 * secret's name (a sealed value moved under another name does not open).
 */
import { randomBytes } from 'node:crypto';
import type { EncryptionSettings } from '../contracts/config/payloads';
import type { SealedSecret } from '../contracts/secrets';
import { secretNameProblem } from '../contracts/secrets';
import { PayloadKeyring } from './encryption-codec';
import { ENCRYPTION_KEY_BYTES, processEncryptionKeys, type EncryptionKey } from './encryption-keys';
import { payloadSettings } from './store';

const textEncoder = new TextEncoder();

/** A secret that cannot be sealed or opened; the message names the secret, never its value. */
export class SecretError extends Error {
  override name = 'SecretError';
}

// The name is sealed with the value, so that opening checks both.
function framed(name: string, value: string): Uint8Array {
  return textEncoder.encode(`${name}\n${value}`);
}

/** `values` (name → value) sealed under the keyring's newest key, in name order. */
export function sealSecrets(
  keyring: PayloadKeyring,
  values: Readonly<Record<string, string>>,
): SealedSecret[] {
  if (keyring.keyId === undefined) {
    throw new SecretError(
      'secrets need an encryption key the workers hold: set SUBAGENTS_ENCRYPTION_KEY (or payloads.encryption) ' +
        'for the client and the workers alike',
    );
  }
  return Object.keys(values)
    .sort()
    .map((name) => {
      const problem = secretNameProblem(name);
      if (problem !== undefined) throw new SecretError(`secret ${JSON.stringify(name)} ${problem}`);
      const sealed = keyring.seal(framed(name, values[name]));
      return { name, key_id: sealed.keyId, sealed: sealed.data.toString('base64') };
    });
}

/** The plain values of `secrets` (name → value); a secret that does not open is an error naming it. */
export function openSecrets(
  keyring: PayloadKeyring,
  secrets: readonly SealedSecret[],
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const secret of secrets) {
    const plain = keyring
      .open(secret.key_id, Buffer.from(secret.sealed, 'base64'), `secret ${secret.name}`)
      .toString('utf8');
    const newline = plain.indexOf('\n');
    if (newline < 0 || plain.slice(0, newline) !== secret.name) {
      throw new SecretError(`secret ${secret.name} was sealed under another name; refusing to use it`);
    }
    values[secret.name] = plain.slice(newline + 1);
  }
  return values;
}

let ephemeralKey: EncryptionKey | undefined;

/**
 * A key of this process's own for secrets, made on first call (random, never written anywhere): what an
 * embedded run (the CLI's own server and worker, one process) seals and opens its secrets with when no
 * encryption key is configured. Only this process can open what it seals; payloads stay as configured.
 */
export function useEphemeralSecretsKey(): string {
  ephemeralKey ??= {
    id: `process-${randomBytes(4).toString('hex')}`,
    material: randomBytes(ENCRYPTION_KEY_BYTES),
  };
  return ephemeralKey.id;
}

/**
 * The keyring secrets are sealed and opened with in this process: the payload keys of `encryption` (default:
 * this process's settings), newest first, then this process's own key when it made one (useEphemeralSecretsKey):
 * it seals only when no key is configured.
 */
export function processSecretsKeyring(
  encryption: EncryptionSettings = payloadSettings().encryption,
): PayloadKeyring {
  const keys = processEncryptionKeys(encryption);
  return new PayloadKeyring(ephemeralKey === undefined ? keys : [...keys, ephemeralKey]);
}
