/**
 * A blob store that keeps its blobs encrypted at rest, for what activities store directly (transcript
 * segments, tool specs, graph checkpoints); the claim-check codec stores payloads the encryption codec has
 * encrypted already, so it uses the plain store.
 *
 * Keys stay the callers' (the sha256 of the plaintext, which they check on reading); a stored blob is
 * `SUBAGENTS-ENCRYPTED-BLOB\n`, the key id, a new line, then nonce, ciphertext and tag. A blob without that
 * header (written before encryption) is read as it is.
 */
import type { PayloadKeyring } from './encryption-codec';
import type { BlobStore } from './store';

const HEADER = Buffer.from('SUBAGENTS-ENCRYPTED-BLOB\n', 'utf8');
const NEWLINE = 0x0a;

export class EncryptedBlobStore implements BlobStore {
  readonly description: string;

  constructor(
    readonly inner: BlobStore,
    readonly keyring: PayloadKeyring,
  ) {
    this.description = inner.description;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    if (this.keyring.keyId === undefined) return this.inner.put(key, bytes);
    const sealed = this.keyring.seal(bytes);
    await this.inner.put(key, Buffer.concat([HEADER, Buffer.from(`${sealed.keyId}\n`, 'utf8'), sealed.data]));
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const stored = await this.inner.get(key);
    if (stored === undefined || !isEncryptedBlob(stored)) return stored;
    const end = stored.indexOf(NEWLINE, HEADER.length);
    const what = `payload blob ${key} in ${this.description}`;
    const keyId = Buffer.from(stored.subarray(HEADER.length, end < 0 ? HEADER.length : end)).toString('utf8');
    return this.keyring.open(keyId, end < 0 ? new Uint8Array() : stored.subarray(end + 1), what);
  }
}

export function isEncryptedBlob(bytes: Uint8Array): boolean {
  return bytes.length >= HEADER.length && Buffer.from(bytes.subarray(0, HEADER.length)).equals(HEADER);
}
