/** The `/encode` budgets on their own, with a hand-driven clock: per client, in total, renewed each window. */
import { EncodeQuota } from '../../../payloads/encode-quota';

describe('EncodeQuota', () => {
  it('charges a client until its budget is spent, and renews it when the window ends', () => {
    let now = 1_000_000;
    const quota = new EncodeQuota({ perClientBytes: 100, totalBytes: 1000, windowMs: 60_000 }, () => now);
    expect(quota.charge('a', 60)).toBeUndefined();
    expect(quota.charge('a', 40)).toBeUndefined();
    now += 15_000;
    expect(quota.charge('a', 1)).toEqual({
      kind: 'spent',
      message:
        'a has written 100 of its 100 bytes through /encode in this 60 s window; 1 more would pass it ' +
        '(payloads.codec_server.max_encode_bytes_per_client)',
      retryAfterSeconds: 45,
    });
    // A refused request is not charged: the client may still use what is left once the window renews.
    now += 45_000;
    expect(quota.charge('a', 100)).toBeUndefined();
  });

  it('bounds all clients together, and refuses for good what no budget can hold', () => {
    const quota = new EncodeQuota({ perClientBytes: 100, totalBytes: 250, windowMs: 60_000 }, () => 0);
    expect(quota.charge('a', 100)).toBeUndefined();
    expect(quota.charge('b', 100)).toBeUndefined();
    expect(quota.charge('c', 60)).toMatchObject({
      kind: 'spent',
      message: expect.stringMatching(/^all clients have written 200 of 250 bytes .*max_encode_bytes\)$/),
    });
    expect(quota.charge('c', 50)).toBeUndefined();
    expect(quota.charge('d', 101)).toEqual({
      kind: 'too_large',
      message:
        'an /encode request of 101 bytes is over what one client may write in 60 s ' +
        '(100 bytes; payloads.codec_server.max_encode_bytes_per_client, max_encode_bytes)',
    });
  });
});
