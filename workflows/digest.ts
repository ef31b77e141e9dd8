/**
 * SHA-256 of a string's UTF-8 bytes, in plain JavaScript: workflow code cannot reach Node's crypto, and the
 * digest must be the one any other SHA-256 gives (an audited library, not a hand-written one).
 */
import { sha256 } from '@noble/hashes/sha2';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils';

export function sha256Hex(text: string): string {
  return bytesToHex(sha256(utf8ToBytes(text)));
}
