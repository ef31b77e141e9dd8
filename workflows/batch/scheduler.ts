/**
 * A batch's decisions as plain state (no Temporal API, no clock of its own: every time is handed in), so each
 * rule has a unit test that needs no server. `batchWorkflow` (workflows/batch.ts) wires admission answers,
 * children, timers and continue-as-new to it.
 *
 * Each item is pending (in `ready`, or backing off in `later` until its `not_before`), live (its slot asked for,
 * granted, its child running, its answer being checked), or done. At most `max_live_items` items are live and
 * at most `max_running_items` run. An item is live for one attempt at a time, from the slot's request to the
 * attempt's verdict: two attempts of one item never overlap. A refusal at admission puts the item back without
 * spending an attempt; a failed attempt is retried after backoff, doubling each time, up to `max_attempts`.
 * What crosses continue-as-new is one compact record per item and the counters (`carry`).
 */
import {
  BATCH_STATUS_PAGE_MAX,
  batchItemWorkflowId,
  type BatchCarry,
  type BatchCounters,
  type BatchInput,
  type BatchItemRecord,
  type BatchItemState,
  type BatchItemView,
  type BatchResult,
  type BatchStatus,
} from '../../contracts/batch';
import type { AdmissionAnswer } from '../../contracts/admission';
import type { SubagentStatus, SubagentStopReason } from '../../contracts/status';

/** The longest error kept in an item's record. */
const RECORD_ERROR_CHARS = 300;

/** An item in flight: its slot asked for (`asking`, `queued`), granted (`granted`), or its child running. */
export interface LiveItem {
  attempt: number;
  slot: string;
  phase: 'asking' | 'queued' | 'granted' | 'running' | 'checking';
  /** Since when it has waited without an answer (ask again past `askAgainMs`). */
  askedAt: number;
  /** ISO 8601: when admission granted the slot (the child's `admitted_at`). */
  grantedAt?: string;
}

/** What the workflow does next for a live item (`BatchScheduler.steps`). */
export type LiveStep =
  | { kind: 'run'; item: number; entry: LiveItem }
  /** Continuing as new: this slot (asked for or granted) goes back; its item is pending again. */
  | { kind: 'give_back'; slot: string }
  /** A queued request heard nothing for `askAgainMs`: ask again (idempotent). */
  | { kind: 'ask_again'; item: number; slot: string };

/** How an attempt went, as the batch records it. */
export interface AttemptVerdict {
  status: SubagentStatus;
  stop_reason?: SubagentStopReason;
  error?: string;
  /** Set when the item has acceptance criteria and its answer was checked. */
  accepted?: boolean;
}

export interface SchedulerClock {
  /** The batch's workflow id: each attempt's slot and child id derive from it. */
  batchId: string;
  /** ISO 8601: this execution's start (the batch's, unless a carry says otherwise). */
  startedAt: string;
  /** A queued request that heard nothing for this long asks again. */
  askAgainMs: number;
}

const ZERO_COUNTERS: BatchCounters = { completed: 0, failed: 0, cancelled: 0, attempts: 0, requeued: 0 };

export class BatchScheduler {
  readonly records: BatchItemRecord[];
  readonly counters: BatchCounters;
  readonly startedAt: string;
  readonly live = new Map<number, LiveItem>();
  /** Live items that run a child (not those checking their answer). */
  running = 0;
  /** Continuing as new: nothing new is asked for or started; slots not yet running go back. */
  draining = false;
  /** Set by every change the workflow may act on; the workflow clears it before it waits. */
  changed = false;
  /** Set once the batch has ended, for the status query. */
  ended?: 'completed' | 'cancelled';
  private readonly bySlot = new Map<string, number>();
  // Items to ask for, in item order; those backing off wait in `later` until their time.
  private readonly ready: number[] = [];
  private readonly later: number[] = [];

  constructor(
    private readonly input: Pick<BatchInput, 'items' | 'limits' | 'carry' | 'description' | 'subagent_type'>,
    private readonly clock: SchedulerClock,
  ) {
    const { carry, items } = input;
    this.records = carry?.records ?? items.map(() => ({ state: 'pending', attempts: 0 }) as BatchItemRecord);
    this.counters = carry?.counters ?? { ...ZERO_COUNTERS };
    this.startedAt = carry?.started_at ?? clock.startedAt;
    this.records.forEach((record, i) => {
      if (record.state !== 'pending') return;
      (record.not_before === undefined ? this.ready : this.later).push(i);
    });
  }

  /** Items completed, failed or cancelled. */
  get terminal(): number {
    return this.counters.completed + this.counters.failed + this.counters.cancelled;
  }

  get done(): boolean {
    return this.terminal >= this.input.items.length;
  }

  /** Draining, with every slot back: the batch may continue as new. */
  get drained(): boolean {
    return this.draining && this.live.size === 0;
  }

  /** Backed-off items whose time has come join the queue. */
  releaseDue(now: number): void {
    for (let k = this.later.length - 1; k >= 0; k--) {
      const i = this.later[k];
      if ((this.records[i].not_before ?? 0) <= now) {
        this.later.splice(k, 1);
        this.records[i] = { ...this.records[i], not_before: undefined };
        this.ready.push(i);
      }
    }
  }

  /** The next item to ask a slot for (now live, `asking`), while there is room; undefined when there is none. */
  askNext(now: number): { item: number; slot: string } | undefined {
    if (this.draining || this.live.size >= this.input.limits.max_live_items || this.ready.length === 0) {
      return undefined;
    }
    const i = this.ready.shift()!;
    const attempt = this.records[i].attempts + 1;
    const slot = batchItemWorkflowId(this.clock.batchId, this.input.items[i].key, attempt);
    this.live.set(i, { attempt, slot, phase: 'asking', askedAt: now });
    this.bySlot.set(slot, i);
    return { item: i, slot };
  }

  /** The request was sent: the answer is due by signal. */
  sent(i: number): void {
    // No wake-up for this: how a replay groups local activities' results into activations differs from the
    // original's, so the loop's iterations must not depend on them.
    const entry = this.live.get(i);
    if (entry?.phase === 'asking') entry.phase = 'queued';
  }

  /** No admission to be had just now: as a refusal, without spending an attempt. */
  unavailable(i: number, now: number): void {
    this.leave(i);
    this.counters.requeued += 1;
    this.backOff(i, this.input.limits.retry_backoff_seconds * 1000, now);
  }

  /** Admission's answer for a slot. */
  answered(answer: AdmissionAnswer, now: number): void {
    const i = this.bySlot.get(answer.slot);
    const entry = i === undefined ? undefined : this.live.get(i);
    // Only a request still waiting hears its answer: a second grant (the answer to asking again) must not
    // start an attempt that has started, or has already ended.
    if (i === undefined || !entry || (entry.phase !== 'asking' && entry.phase !== 'queued')) return;
    if (answer.outcome === 'granted') {
      entry.phase = 'granted';
      entry.grantedAt = new Date(now).toISOString();
    } else if (answer.outcome === 'queued') {
      entry.phase = 'queued';
    } else {
      // Refused (capacity full, queue timeout): back in the queue, no attempt spent.
      this.leave(i);
      this.records[i] = { ...this.records[i], refusals: (this.records[i].refusals ?? 0) + 1 };
      this.counters.requeued += 1;
      this.backOff(i, this.input.limits.retry_backoff_seconds * 1000, now);
    }
    this.touch();
  }

  /**
   * What to do for each live item, decided one at a time as the workflow takes them (it may wait between two, and
   * what it does, `start` above all, counts for the next).
   */
  *steps(now: number): Generator<LiveStep> {
    const { max_running_items } = this.input.limits;
    for (const [i, entry] of this.live) {
      if (entry.phase === 'granted' && this.running < max_running_items && !this.draining) {
        yield { kind: 'run', item: i, entry };
      } else if (this.draining && (entry.phase === 'queued' || entry.phase === 'granted')) {
        this.leave(i);
        this.ready.unshift(i);
        yield { kind: 'give_back', slot: entry.slot };
      } else if (entry.phase === 'queued' && now - entry.askedAt >= this.clock.askAgainMs) {
        entry.askedAt = now;
        yield { kind: 'ask_again', item: i, slot: entry.slot };
      }
    }
  }

  /** The item's child starts in its granted slot. */
  start(entry: LiveItem): void {
    entry.phase = 'running';
    this.running += 1;
    this.counters.attempts += 1;
  }

  /** The item's child has closed: its slot is free (the next item may run while this answer is checked). */
  childClosed(i: number, entry: LiveItem): void {
    this.records[i] = { ...this.records[i], attempts: entry.attempt };
    entry.phase = 'checking';
    this.running -= 1;
    this.touch();
  }

  /** The item ends cancelled (the batch was, or its child). */
  cancel(i: number, error: string): void {
    this.leave(i);
    this.finish(i, 'cancelled', { error });
  }

  /** The attempt's verdict: the item completes, backs off for another attempt, or fails for good. */
  settle(i: number, attempt: number, verdict: AttemptVerdict, now: number): void {
    const { accepted, error } = verdict;
    this.leave(i);
    const succeeded = verdict.status === 'completed' && accepted !== false;
    const outcome = {
      ...(verdict.stop_reason && { stop_reason: verdict.stop_reason }),
      ...(error !== undefined && !succeeded && { error: brief(error) }),
      ...(accepted !== undefined && { accepted }),
    };
    const { max_attempts, retry_backoff_seconds } = this.input.limits;
    if (succeeded) {
      this.records[i] = { ...this.records[i], error: undefined };
      this.finish(i, 'completed', outcome);
    } else if (attempt < max_attempts) {
      this.records[i] = { ...this.records[i], ...outcome };
      this.backOff(i, retry_backoff_seconds * 1000 * 2 ** (attempt - 1), now);
    } else {
      this.finish(i, 'failed', outcome);
    }
    this.touch();
  }

  /** The batch was cancelled: items never started end cancelled. */
  cancelPending(error = 'Batch cancelled'): void {
    this.records.forEach((item, i) => item.state === 'pending' && this.finish(i, 'cancelled', { error }));
  }

  /** An item leaves the live set (its slot given back or its attempt over). */
  leave(i: number): void {
    const entry = this.live.get(i);
    if (!entry) return;
    if (entry.phase === 'running') this.running -= 1;
    this.live.delete(i);
    this.bySlot.delete(entry.slot);
    this.touch();
  }

  touch(): void {
    this.changed = true;
  }

  /** The soonest deadline: a backoff's end, or a queued request's time to ask again. */
  nextDeadline(now: number): { at: number; what: string } | undefined {
    const { items } = this.input;
    const deadlines = [
      ...this.later.map((i) => ({
        at: this.records[i].not_before ?? now,
        what: `backoff: item ${items[i].key}`,
      })),
      ...[...this.live]
        .filter(([, entry]) => entry.phase === 'queued')
        .map(([i, entry]) => ({
          at: entry.askedAt + this.clock.askAgainMs,
          what: `admission: ask again for item ${items[i].key}`,
        })),
    ];
    return deadlines.reduce<(typeof deadlines)[number] | undefined>(
      (soonest, deadline) => (soonest === undefined || deadline.at < soonest.at ? deadline : soonest),
      undefined,
    );
  }

  /** One line of counts, as the batch stands. */
  progressLine(): string {
    const { counters, input } = this;
    const waiting = [...this.live.values()].filter(
      (entry) => entry.phase !== 'running' && entry.phase !== 'checking',
    ).length;
    const pending = input.items.length - this.terminal - this.live.size;
    return (
      `**${input.subagent_type}** batch: ${this.terminal} of ${input.items.length} done ` +
      `(${counters.completed} completed, ${counters.failed} failed) · ${this.running} running · ` +
      `${waiting} waiting · ${pending} pending · ${counters.attempts} attempts, ${counters.requeued} requeued`
    );
  }

  /** The status query's answer: the counts, and one page of items. */
  status(page: { offset?: number; limit?: number } = {}): BatchStatus {
    const offset = Math.max(0, page.offset ?? 0);
    const limit = Math.min(BATCH_STATUS_PAGE_MAX, Math.max(0, page.limit ?? 50));
    const counts = zeroCounts();
    this.records.forEach((_, i) => (counts[this.view(i).state] += 1));
    const { input } = this;
    return {
      batch_id: this.clock.batchId,
      status: this.ended ?? 'running',
      description: input.description,
      subagent_type: input.subagent_type,
      total: input.items.length,
      counts,
      counters: this.counters,
      limits: input.limits,
      started_at: this.startedAt,
      items: input.items.slice(offset, offset + limit).map((_, j) => this.view(offset + j)),
    };
  }

  /** What the next execution starts from. */
  carry(continued: number): BatchCarry {
    return { records: this.records, counters: this.counters, continued, started_at: this.startedAt };
  }

  result(status: 'completed' | 'cancelled'): BatchResult {
    const { completed, failed, cancelled } = this.counters;
    const counts = { ...zeroCounts(), completed, failed, cancelled };
    return {
      batch_id: this.clock.batchId,
      status,
      total: this.input.items.length,
      counts,
      counters: this.counters,
    };
  }

  private view(i: number): BatchItemView {
    const { items } = this.input;
    const entry = this.live.get(i);
    const { state, attempts, stop_reason, error, accepted } = this.records[i];
    const started = entry?.phase === 'running' || entry?.phase === 'checking';
    const shown: BatchItemState = entry ? (started ? 'running' : 'waiting') : state;
    const attempt = started ? entry.attempt : attempts;
    return {
      key: items[i].key,
      state: shown,
      attempts: attempt,
      ...(attempt > 0 && { workflow_id: batchItemWorkflowId(this.clock.batchId, items[i].key, attempt) }),
      ...(stop_reason && { stop_reason }),
      ...(error !== undefined && { error }),
      ...(accepted !== undefined && { accepted }),
    };
  }

  private finish(i: number, state: 'completed' | 'failed' | 'cancelled', patch: Partial<BatchItemRecord>) {
    this.records[i] = { ...this.records[i], ...patch, state, not_before: undefined };
    this.counters[state] += 1;
  }

  private backOff(i: number, ms: number, now: number): void {
    this.records[i] = { ...this.records[i], not_before: now + ms };
    this.later.push(i);
  }
}

function zeroCounts(): Record<BatchItemState, number> {
  return { pending: 0, waiting: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
}

function brief(text: string): string {
  return text.length > RECORD_ERROR_CHARS ? `${text.slice(0, RECORD_ERROR_CHARS - 1)}…` : text;
}
