/**
 * How many bytes the codec endpoint's `/encode` may write to the payload store: a budget per client (its
 * remote address) and one for all clients together, each renewed every window. Every `/encode` stores what it
 * is given, and nothing deletes blobs, so without a bound one caller could fill the disk or the bucket.
 *
 * Pure: the clock is injected, nothing here touches the network or the store.
 */

export interface EncodeQuotaLimits {
  /** Bytes one client may send to `/encode` in a window. */
  perClientBytes: number;
  /** Bytes all clients together may send to `/encode` in a window. */
  totalBytes: number;
  windowMs: number;
}

/** Why a request may not write: it can never fit (`too_large`), or the window's budget is spent (`spent`). */
export type EncodeRefusal =
  { kind: 'too_large'; message: string } | { kind: 'spent'; message: string; retryAfterSeconds: number };

interface Window {
  startedAt: number;
  bytes: number;
}

/** Forget idle clients once this many are remembered, so the map cannot grow with every address seen. */
const PRUNE_AT_CLIENTS = 1024;

export class EncodeQuota {
  private readonly clients = new Map<string, Window>();
  private total: Window = { startedAt: 0, bytes: 0 };

  constructor(
    readonly limits: EncodeQuotaLimits,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Charges `bytes` to `client` if both budgets have room and answers undefined; else charges nothing and says
   * why. A request is charged whole or not at all, so a refused one writes nothing.
   */
  charge(client: string, bytes: number): EncodeRefusal | undefined {
    const refusal = this.check(client, bytes);
    if (refusal) return refusal;
    const now = this.now();
    if (this.clients.size >= PRUNE_AT_CLIENTS) this.prune(now);
    const own = this.current(this.clients.get(client), now);
    own.bytes += bytes;
    this.clients.set(client, own);
    this.total = this.current(this.total, now);
    this.total.bytes += bytes;
    return undefined;
  }

  /** What charge() would refuse, without charging. */
  check(client: string, bytes: number): EncodeRefusal | undefined {
    const { perClientBytes, totalBytes } = this.limits;
    const window = `${Math.round(this.limits.windowMs / 1000)} s`;
    const limit = Math.min(perClientBytes, totalBytes);
    if (bytes > limit) {
      return {
        kind: 'too_large',
        message:
          `an /encode request of ${bytes} bytes is over what one client may write in ${window} ` +
          `(${limit} bytes; payloads.codec_server.max_encode_bytes_per_client, max_encode_bytes)`,
      };
    }
    const now = this.now();
    const own = this.current(this.clients.get(client), now);
    if (own.bytes + bytes > perClientBytes) {
      return {
        kind: 'spent',
        message:
          `${client} has written ${own.bytes} of its ${perClientBytes} bytes through /encode in this ` +
          `${window} window; ${bytes} more would pass it (payloads.codec_server.max_encode_bytes_per_client)`,
        retryAfterSeconds: this.secondsLeft(own, now),
      };
    }
    const total = this.current(this.total, now);
    if (total.bytes + bytes > totalBytes) {
      return {
        kind: 'spent',
        message:
          `all clients have written ${total.bytes} of ${totalBytes} bytes through /encode in this ` +
          `${window} window; ${bytes} more would pass it (payloads.codec_server.max_encode_bytes)`,
        retryAfterSeconds: this.secondsLeft(total, now),
      };
    }
    return undefined;
  }

  /** The window as it stands at `now`: a fresh one once the old has ended. */
  private current(window: Window | undefined, now: number): Window {
    if (window === undefined || now - window.startedAt >= this.limits.windowMs) {
      return { startedAt: now, bytes: 0 };
    }
    return window;
  }

  private secondsLeft(window: Window, now: number): number {
    return Math.max(1, Math.ceil((window.startedAt + this.limits.windowMs - now) / 1000));
  }

  private prune(now: number): void {
    for (const [client, window] of this.clients) {
      if (now - window.startedAt >= this.limits.windowMs) this.clients.delete(client);
    }
  }
}
