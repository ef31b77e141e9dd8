/**
 * The encryption payload codec: AES-256-GCM over each payload's protobuf encoding (metadata and data), so
 * history and the claim-check store hold only ciphertext. It runs before the claim-check codec: a large
 * payload is encrypted first, and the store keeps the ciphertext.
 *
 * On the wire, as in Temporal's encryption samples: metadata `encoding: binary/encrypted` and
 * `encryption-key-id: <id>`, data = 12-byte nonce, ciphertext, 16-byte tag; a decoder of those samples
 * holding the same key reads it. The nonce is not random but an HMAC of the plaintext under a key derived
 * from the encryption key (a synthetic nonce): equal payloads encrypt alike under one key, so a transcript
 * sent every turn is still stored once. That shows which payloads are equal, which the claim-check's sha256
 * names show already, and nothing else; distinct payloads get distinct nonces but by a 2^-96 chance.
 *
 * Payloads of any other encoding decode untouched, so histories written before encryption still replay.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { describeContext } from './payload-context';
import type { EncryptionKey } from './encryption-keys';

const ProtoPayload = temporal.api.common.v1.Payload;

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const ENCODING_KEY = 'encoding';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();
const ENCRYPTED_ENCODING_BYTES = textEncoder.encode(ENCRYPTED_ENCODING);

/** An encrypted payload this process cannot read: its key is not among the process's keys. */
export class MissingEncryptionKeyError extends Error {
  override name = 'MissingEncryptionKeyError';
  constructor(
    readonly keyId: string,
    message: string,
  ) {
    super(message);
  }
}

/** An encrypted payload that does not decrypt under the key its metadata names: altered, or malformed. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

interface HeldKey {
  id: string;
  idBytes: Uint8Array;
  material: Buffer;
  nonceKey: Buffer;
}

/** Sealed bytes: the id of the key and nonce, ciphertext, tag. */
export interface Sealed {
  keyId: string;
  data: Buffer;
}

/** A process's keys: the newest seals, every one opens. */
export class PayloadKeyring {
  /** The key that seals; undefined when the process holds none. */
  private readonly newest: HeldKey | undefined;
  private readonly byId: ReadonlyMap<string, HeldKey>;

  /** `keys` newest first. */
  constructor(keys: readonly EncryptionKey[]) {
    const held = keys.map((key) => ({
      id: key.id,
      idBytes: textEncoder.encode(key.id),
      material: key.material,
      nonceKey: Buffer.from(hkdfSync('sha256', key.material, '', 'durable-subagents payload nonce', 32)),
    }));
    this.newest = held[0];
    this.byId = new Map(held.map((key) => [key.id, key]));
  }

  /** The id new payloads are encrypted with; undefined when there is no key (payloads stay plain). */
  get keyId(): string | undefined {
    return this.newest?.id;
  }

  /** Every key id this keyring decrypts, newest first. */
  get keyIds(): string[] {
    return [...this.byId.keys()];
  }

  /** `plain` under the newest key (there must be one: see keyId). */
  seal(plain: Uint8Array): Sealed {
    const key = this.newest;
    if (key === undefined) throw new Error('no encryption key to seal with');
    const nonce = createHmac('sha256', key.nonceKey).update(plain).digest().subarray(0, NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.material, nonce);
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return { keyId: key.id, data: Buffer.concat([nonce, body, cipher.getAuthTag()]) };
  }

  /** The plaintext of `data` sealed under `keyId`; `what` names it in errors (`payload`, `payload blob …`). */
  open(keyId: string, data: Uint8Array, what: string): Buffer {
    const key = this.byId.get(keyId);
    if (key === undefined) {
      const held = this.byId.size === 0 ? 'none' : this.keyIds.join(', ');
      throw new MissingEncryptionKeyError(
        keyId,
        `${what} is encrypted with key ${keyId}, which this process does not hold (keys held: ${held}); ` +
          `add the key ${keyId} to SUBAGENTS_ENCRYPTION_KEY or to payloads.encryption's key_file or key_command`,
      );
    }
    if (data.length < NONCE_BYTES + TAG_BYTES) {
      throw new PayloadDecryptionError(
        `${what} is encrypted with key ${keyId} but is ${data.length} bytes, too short to be ciphertext`,
      );
    }
    const decipher = createDecipheriv('aes-256-gcm', key.material, data.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)),
        decipher.final(),
      ]);
    } catch {
      throw new PayloadDecryptionError(
        `${what} is encrypted with key ${keyId} but does not decrypt: it was altered, or another key ` +
          `carries the id ${keyId}; refusing to use it`,
      );
    }
  }
}

export class EncryptionCodec implements PayloadCodec {
  constructor(readonly keyring: PayloadKeyring) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    if (this.keyring.keyId === undefined) return payloads;
    return payloads.map((payload) => {
      const sealed = this.keyring.seal(ProtoPayload.encode(payload).finish());
      return {
        metadata: {
          [ENCODING_KEY]: ENCRYPTED_ENCODING_BYTES,
          [KEY_ID_METADATA]: textEncoder.encode(sealed.keyId),
        },
        data: sealed.data,
      };
    });
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (!isEncryptedPayload(payload)) return payload;
      const what = context === undefined ? 'payload' : `payload of ${describeContext(context)}`;
      const idBytes = payload.metadata?.[KEY_ID_METADATA];
      if (!idBytes?.length) {
        throw new PayloadDecryptionError(`${what} is ${ENCRYPTED_ENCODING} without ${KEY_ID_METADATA}`);
      }
      const plain = this.keyring.open(textDecoder.decode(idBytes), payload.data ?? new Uint8Array(), what);
      return ProtoPayload.decode(plain);
    });
  }
}

export function isEncryptedPayload(payload: Payload): boolean {
  const encoding = payload.metadata?.[ENCODING_KEY];
  return encoding !== undefined && encoding !== null && textDecoder.decode(encoding) === ENCRYPTED_ENCODING;
}
