import { createHash } from 'node:crypto';
import { sha256Hex } from '../../../workflows/digest';

function nodeSha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

describe('sha256Hex', () => {
  it('matches the published test vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
  });

  it('matches Node for long multi-byte text', () => {
    const text = 'Ünïcödé — 中文字符 — emoji 😀🚀 — '.repeat(5000);
    expect(sha256Hex(text)).toBe(nodeSha256(text));
  });

  it('matches Node at every padding boundary around one block', () => {
    for (let length = 50; length <= 130; length++) {
      const text = 'a'.repeat(length);
      expect(sha256Hex(text)).toBe(nodeSha256(text));
    }
  });

  it('encodes a lone surrogate as U+FFFD, as Node does', () => {
    for (const text of ['\ud800', 'a\udc00b', 'x\ud83d']) expect(sha256Hex(text)).toBe(nodeSha256(text));
  });
});
