/**
 * When the admission loop wakes (`Alarm`): at its next deadline (a queue timeout, the start rate's next grant, a
 * lease's expiry, the sweep), or as soon as a handler moves that deadline earlier. Handlers decide at once, so
 * the loop sleeps through every handler that changes nothing it waits for.
 *
 * The timers are never cancelled: at most one is started per deadline and each is left to fire; one that is no
 * longer the earliest wakes the loop to find nothing due. (A cancelled timer that fired in the same workflow task
 * as the signal cancelling it, that task lost to a killed worker and retried, wedged the workflow in a
 * non-determinism error.) Histories recorded before wait with `condition`'s own timeout, cancelled when a
 * handler wakes the loop first. The timer and the wait are handed in, so a unit test drives it without a server.
 */

export interface AlarmEffects {
  sleep(ms: number): Promise<void>;
  /** Resolves once `ready()` holds, or after `timeoutMs` (cancelling its timer when `ready()` comes first). */
  condition(ready: () => boolean, timeoutMs?: number): Promise<unknown>;
  /** When the loop must next wake (Infinity: only for a handler). */
  deadline(now: number): number;
}

export class Alarm {
  /** When the loop is set to wake (Infinity: only for a handler). */
  private armed = Infinity;
  /** A handler moved the deadline earlier than `armed`. */
  private woken = false;
  /** Uncancelled timers: the earliest deadline a timer is running for. */
  private timerAt = Infinity;
  /** Uncancelled timers: one has fired since the loop last waited. */
  private fired = false;

  constructor(
    /** Timers left to fire (otherwise `condition`'s own timeout). */
    private readonly uncancelled: boolean,
    private readonly effects: AlarmEffects,
  ) {}

  /** A handler changed the state: the loop wakes if its next deadline is now earlier than the one it waits for. */
  changed(now: number): void {
    if (this.effects.deadline(now) < this.armed) this.woken = true;
  }

  /**
   * The loop waits: until its next deadline, until a handler moves that deadline earlier, or until `ready()`
   * (answers to send, time to continue as new).
   */
  wait(now: number, ready: () => boolean): Promise<unknown> {
    const at = this.effects.deadline(now);
    this.armed = at;
    this.woken = false;
    if (this.uncancelled) {
      this.fired = false;
      this.arm(at, now);
      return this.effects.condition(() => this.woken || this.fired || ready());
    }
    const predicate = () => this.woken || ready();
    if (at === Infinity) return this.effects.condition(predicate);
    return this.effects.condition(predicate, Math.max(1, at - now));
  }

  /** Starts a timer for `at` unless one already runs for it or an earlier deadline. */
  private arm(at: number, now: number): void {
    if (at === Infinity || at >= this.timerAt) return;
    this.timerAt = at;
    void this.effects.sleep(Math.max(1, at - now)).then(() => {
      if (this.timerAt === at) this.timerAt = Infinity;
      this.fired = true;
    });
  }
}
