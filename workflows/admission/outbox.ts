/**
 * The admission workflow's answers on their way to their owners (`Outbox`). The handlers only decide; the answers
 * they decide wait here, one per slot (a newer answer replaces one not yet sent: a grant supersedes "queued"),
 * and the loop sends them many at a time, in one activity (`deliver`), so an activation does no outbound work
 * per request. An answer whose owner has closed gives its slot, or its place in the queue, back.
 *
 * Histories recorded before answers were batched sent one signal per answer, each its own promise, and while
 * the execution drained to continue as new, kept the answers decided meanwhile for the next one (`defer`).
 * The activity, the signal and the pause are handed in, so a unit test drives it without a server.
 */
import { log } from '@temporalio/workflow';
import {
  ADMISSION_ANSWERS_PER_DELIVERY,
  type AdmissionAnswer,
  type AdmissionDelivery,
} from '../../contracts/admission';

/** After a delivery that failed every attempt: the pause before its answers are sent again. */
export const DELIVERY_RETRY_MS = 5_000;

export interface OutboxEffects {
  /** Sends answers, many in one activity; resolves with the slots whose owners could not be told. */
  send(batch: AdmissionDelivery[]): Promise<string[]>;
  /** Histories recorded before batching: one answer, signalled to its owner. */
  signal(owner: string, answer: AdmissionAnswer): Promise<void>;
  sleep(ms: number): Promise<void>;
  /** An answer (granted or queued) its owner could not be told: the owner has closed. */
  undelivered(answer: AdmissionAnswer): void;
}

export class Outbox {
  /** Answers decided and not yet sent, by slot, the oldest first. */
  private readonly waiting = new Map<string, AdmissionDelivery>();
  /** Histories recorded before batching: the signals in flight. */
  private readonly sending = new Set<Promise<void>>();
  /** Histories recorded before batching, while it drains to continue as new: the answers decided meanwhile. */
  private deferred?: AdmissionDelivery[];

  constructor(
    /** Answers go out many at a time (`deliver`); otherwise one signal each, at once. */
    private readonly batched: boolean,
    private readonly effects: OutboxEffects,
  ) {}

  /** Answers waiting for the loop to send them. */
  get size(): number {
    return this.waiting.size;
  }

  /** No signal in flight (histories recorded before batching). */
  get settled(): boolean {
    return this.sending.size === 0;
  }

  /** An answer decided: it waits for the next delivery (or, in histories recorded before, goes out now). */
  tell(owner: string, answer: AdmissionAnswer): void {
    if (this.batched) {
      this.waiting.delete(answer.slot);
      this.waiting.set(answer.slot, { owner, answer });
      return;
    }
    if (this.deferred) {
      this.deferred.push({ owner, answer });
      return;
    }
    const sent = this.effects
      .signal(owner, answer)
      .catch(() => {
        // An owner that cannot be told has closed: its slot, or its place in the queue, goes back.
        if (answer.outcome === 'refused') return;
        this.effects.undelivered(answer);
      })
      .finally(() => this.sending.delete(sent));
    this.sending.add(sent);
  }

  /**
   * Sends the oldest answers waiting (at most ADMISSION_ANSWERS_PER_DELIVERY) in one activity. An answer whose
   * owner has closed gives its slot, or its place in the queue, back. A delivery that keeps failing (the server
   * unreachable) puts its answers back, behind any newer answer for the same slot, and waits a little: some of
   * them may have arrived, so no slot is given back on a guess.
   */
  async deliver(): Promise<void> {
    const batch = [...this.waiting.values()].slice(0, ADMISSION_ANSWERS_PER_DELIVERY);
    for (const { answer } of batch) this.waiting.delete(answer.slot);
    let undelivered: string[];
    try {
      undelivered = await this.effects.send(batch);
    } catch (err) {
      log.warn('admission answers could not be delivered; trying again', {
        answers: batch.length,
        error: err instanceof Error ? err.message : String(err),
      });
      const newer = new Map(this.waiting);
      this.waiting.clear();
      for (const delivery of batch) this.waiting.set(delivery.answer.slot, delivery);
      for (const [slot, delivery] of newer) {
        this.waiting.delete(slot);
        this.waiting.set(slot, delivery);
      }
      await this.effects.sleep(DELIVERY_RETRY_MS);
      return;
    }
    const lost = new Set(undelivered);
    for (const { answer } of batch) {
      if (!lost.has(answer.slot) || answer.outcome === 'refused') continue;
      this.effects.undelivered(answer);
    }
  }

  /** Histories recorded before batching, draining to continue as new: answers decided from now on wait. */
  defer(): void {
    this.deferred = [];
  }

  /** The answers not yet sent, for the next execution to send first. */
  unsent(): AdmissionDelivery[] {
    return this.batched ? [...this.waiting.values()] : (this.deferred ?? []);
  }
}
