/**
 * The keys of the encryption codec, read once per process from `payloads.encryption`'s sources: the
 * environment variable (SUBAGENTS_ENCRYPTION_KEY by default), a key file and a key command (a KMS or
 * secret-manager client that prints them).
 *
 * Every source holds the same text: entries separated by commas, spaces or new lines, newest first; `#`
 * starts a comment to the end of its line. An entry is the base64 of 32 random bytes (`openssl rand -base64
 * 32`), optionally named as `<id>:<base64>`; an unnamed key's id is the first 8 hex digits of its sha256.
 * The first key found (environment, then file, then command) encrypts new payloads; every key decrypts.
 *
 * No message ever shows key material: problems name the source and the entry's position.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { EncryptionSettings } from '../contracts/config/payloads';

export const ENCRYPTION_KEY_BYTES = 32;

export interface EncryptionKey {
  /** What a payload's metadata names; short, and no secret. */
  id: string;
  /** 32 bytes: an AES-256 key. */
  material: Buffer;
}

/** A key source that cannot be read, or holds something that is not a key. */
export class EncryptionKeyError extends Error {
  override name = 'EncryptionKeyError';
}

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
/** A key command's output beyond this is not a list of keys. */
const MAX_COMMAND_OUTPUT_BYTES = 1024 * 1024;

/** The id of an unnamed key: the first 8 hex digits of its sha256 (says nothing usable about the key). */
export function keyIdOf(material: Uint8Array): string {
  return createHash('sha256').update(material).digest('hex').slice(0, 8);
}

/** The keys `text` holds, newest first; `source` names it in errors (`SUBAGENTS_ENCRYPTION_KEY`, a file). */
export function parseEncryptionKeys(text: string, source: string): EncryptionKey[] {
  const entries = text
    .split('\n')
    .map((line) => line.replace(/#.*$/, ''))
    .join('\n')
    .split(/[\s,]+/)
    .filter((entry) => entry !== '');
  return entries.map((entry, index) => {
    const where = `${source}: entry ${index + 1}`;
    const colon = entry.indexOf(':');
    const named = colon >= 0 ? entry.slice(0, colon) : undefined;
    const encoded = colon >= 0 ? entry.slice(colon + 1) : entry;
    if (named !== undefined && !KEY_ID.test(named)) {
      throw new EncryptionKeyError(
        `${where} has a key id that is not 1–64 letters, digits, dots, hyphens or underscores`,
      );
    }
    const material = BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : undefined;
    if (material === undefined || material.length !== ENCRYPTION_KEY_BYTES) {
      throw new EncryptionKeyError(
        `${where} is not a key (the base64 of ${ENCRYPTION_KEY_BYTES} random bytes, e.g. from ` +
          '`openssl rand -base64 32`, optionally named as <id>:<base64>)',
      );
    }
    return { id: named ?? keyIdOf(material), material };
  });
}

/** Runs the key command through the shell, bounded in time; its standard output. */
function runKeyCommand(command: string, timeoutSeconds: number): string {
  try {
    return execFileSync('/bin/sh', ['-c', command], {
      encoding: 'utf8',
      timeout: timeoutSeconds * 1000,
      killSignal: 'SIGKILL',
      maxBuffer: MAX_COMMAND_OUTPUT_BYTES,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const failed = err as NodeJS.ErrnoException & {
      status?: number | null;
      signal?: string | null;
      stderr?: string;
    };
    // Its standard error may help and is not key material; its standard output might be, and is never shown.
    const stderr = (failed.stderr ?? '').trim().split('\n').pop()?.slice(0, 300);
    const reason =
      failed.code === 'ETIMEDOUT' || failed.signal === 'SIGKILL'
        ? `did not finish within ${timeoutSeconds} s (payloads.encryption.key_command_timeout_seconds)`
        : failed.code === 'ENOBUFS'
          ? `printed over ${MAX_COMMAND_OUTPUT_BYTES} bytes`
          : typeof failed.status === 'number'
            ? `exited with status ${failed.status}`
            : `could not run (${failed.message})`;
    throw new EncryptionKeyError(`payloads.encryption.key_command ${reason}${stderr ? `: ${stderr}` : ''}`);
  }
}

/**
 * Every key the settings' sources hold, newest (the one that encrypts) first; none when no source has any.
 * A key file or command that is configured must give at least one key.
 */
export function loadEncryptionKeys(
  settings: EncryptionSettings,
  env: NodeJS.ProcessEnv = process.env,
): EncryptionKey[] {
  const keys: EncryptionKey[] = [];
  const fromEnv = env[settings.key_env];
  if (fromEnv) keys.push(...parseEncryptionKeys(fromEnv, settings.key_env));
  if (settings.key_file !== undefined) {
    const source = `payloads.encryption.key_file ${settings.key_file}`;
    let text: string;
    try {
      text = readFileSync(settings.key_file, 'utf8');
    } catch (err) {
      throw new EncryptionKeyError(
        `${source} cannot be read (${(err as NodeJS.ErrnoException).code ?? err})`,
      );
    }
    const found = parseEncryptionKeys(text, source);
    if (found.length === 0) throw new EncryptionKeyError(`${source} holds no keys`);
    keys.push(...found);
  }
  if (settings.key_command !== undefined) {
    const source = 'payloads.encryption.key_command';
    const found = parseEncryptionKeys(
      runKeyCommand(settings.key_command, settings.key_command_timeout_seconds),
      `the output of ${source}`,
    );
    if (found.length === 0) throw new EncryptionKeyError(`${source} printed no keys`);
    keys.push(...found);
  }
  return distinctKeys(keys);
}

/** The same key listed twice is kept once; two different keys under one id would make payloads ambiguous. */
function distinctKeys(keys: EncryptionKey[]): EncryptionKey[] {
  const byId = new Map<string, EncryptionKey>();
  for (const key of keys) {
    const known = byId.get(key.id);
    if (known === undefined) byId.set(key.id, key);
    else if (!known.material.equals(key.material)) {
      throw new EncryptionKeyError(
        `two different encryption keys have the id ${key.id} (name one of them differently: <id>:<base64>)`,
      );
    }
  }
  return [...byId.values()];
}

let cached: { source: string; keys: EncryptionKey[] } | undefined;

/**
 * This process's keys for `settings`: read (the key command run) once, again only when the settings or the
 * environment variable change.
 */
export function processEncryptionKeys(
  settings: EncryptionSettings,
  env: NodeJS.ProcessEnv = process.env,
): EncryptionKey[] {
  // A digest, so the key text itself is not kept twice in memory.
  const source = createHash('sha256')
    .update(JSON.stringify([settings, env[settings.key_env] ?? '']))
    .digest('hex');
  if (cached?.source !== source) cached = { source, keys: loadEncryptionKeys(settings, env) };
  return cached.keys;
}
