/**
 * The semaphore's state and its decisions (`Slots`), without the workflow around them: who holds a slot, who
 * waits in which fairness key's queue, the counters, the workers' declarations and the leases (leases.ts). Pure
 * but for `answer` and a warning logged when a declaration replaces the settings; every time is handed in, so
 * each rule has a unit test that needs no server. `admissionWorkflow` (workflows/admission.ts) wires signals,
 * the lease Update, the outbox, timers and continue-as-new to it.
 */
import { log } from '@temporalio/workflow';
import {
  capacityFullText,
  queueTimeoutText,
  sameAdmissionSettings,
  type AdmissionAnswer,
  type AdmissionCounters,
  type AdmissionPool,
  type AdmissionSettings,
  type AdmissionState,
  type LeaseHold,
  type LeaseReply,
  type LeaseReport,
  type QueuedRequest,
  type SlotHolder,
  type SlotRequest,
  type WorkerDeclaration,
} from '../../contracts/admission';
import type { AdmissionCarry, AdmissionWorkflowInput } from './input';
import { Leases } from './leases';
import { ADMISSION_SWEEP_BATCH, ADMISSION_SWEEP_INTERVAL_MS } from './sweep';

/** Declarations kept for the state query (the newest last). */
const MAX_WORKER_DECLARATIONS = 16;

const ZERO_COUNTERS: AdmissionCounters = {
  granted: 0,
  queued: 0,
  rejected: 0,
  timed_out: 0,
  released: 0,
  reclaimed: 0,
};

/** The semaphore's state and its decisions, without the workflow around them (pure but for `answer`). */
export class Slots {
  settings: AdmissionSettings;
  running: SlotHolder[];
  queued: QueuedRequest[];
  rotation: string[];
  counters: AdmissionCounters;
  workers: WorkerDeclaration[];
  lastGrantMs?: number;
  /** Spare slots lent to workers: they count against `max_running` like the slots granted. */
  readonly lent: Leases;
  readonly pool: AdmissionPool;

  constructor(
    input: AdmissionWorkflowInput,
    private readonly answer: (owner: string, answer: AdmissionAnswer) => void,
  ) {
    const carry = input.carry;
    this.settings = input.settings;
    this.pool = input.pool ?? 'subagents';
    this.running = carry?.running ?? [];
    this.queued = carry?.queued ?? [];
    this.rotation = carry?.rotation ?? [];
    this.counters = carry?.counters ?? { ...ZERO_COUNTERS };
    this.workers = carry?.workers ?? [];
    this.lastGrantMs = carry?.last_grant_ms;
    this.lent = new Leases(carry?.leases ?? []);
  }

  /** The leases, as the state query lists them. */
  get leases(): LeaseHold[] {
    return this.lent.holds;
  }

  carry(): AdmissionCarry {
    return {
      running: this.running,
      queued: this.queued,
      rotation: this.rotation,
      counters: this.counters,
      workers: this.workers,
      ...(this.lastGrantMs !== undefined && { last_grant_ms: this.lastGrantMs }),
      ...(this.leases.length > 0 && { leases: this.leases }),
    };
  }

  state(): AdmissionState {
    return {
      settings: this.settings,
      running: this.running,
      queued: this.queued,
      counters: this.counters,
      workers: this.workers,
      ...(this.leases.length > 0 && { leases: this.leases }),
    };
  }

  /** When the start rate next allows a grant (undefined: no rate, or allowed now). */
  private pacedUntil(now: number): number | undefined {
    const rate = this.settings.max_starts_per_second;
    if (rate === undefined || this.lastGrantMs === undefined) return undefined;
    const next = this.lastGrantMs + 1000 / rate;
    return next > now ? next : undefined;
  }

  /** Slots taken: granted, and spare in leases (those being taken back included). */
  private taken(): number {
    return this.running.length + this.lent.spare();
  }

  private hasFreeSlot(): boolean {
    return this.taken() < this.settings.max_running;
  }

  /**
   * When set, a repeated request for a slot it knows gets no answer unless it says `again` (the requester's
   * own task was retried: the first answer is on its way). Histories recorded before answered every repeat.
   */
  quietRepeats = false;

  /**
   * A request's immediate answer (signalled back at once): granted, queued, or refused. Asked again for a slot
   * it knows, it answers with where that slot stands, taking nothing twice (or, with `quietRepeats`, not at all
   * unless the request says `again`).
   */
  acquire(request: SlotRequest, now: number): AdmissionAnswer | undefined {
    const { slot } = request;
    const repeat = this.quietRepeats && request.again !== true;
    if (this.running.some((holder) => holder.slot === slot)) {
      return repeat ? undefined : { slot, outcome: 'granted' };
    }
    const waiting = this.queued.findIndex((entry) => entry.slot === slot);
    if (waiting >= 0) {
      if (repeat) return undefined;
      return { slot, outcome: 'queued', running: this.running.length, queued: waiting + 1 };
    }
    if (this.hasFreeSlot() && this.queued.length === 0 && this.pacedUntil(now) === undefined) {
      this.take(request, now);
      return { slot, outcome: 'granted' };
    }
    // A free slot held back only by the start rate is a short wait, whatever the policy.
    const mustWait = !this.hasFreeSlot();
    if (
      mustWait &&
      (this.settings.admission_policy === 'reject' || this.queued.length >= this.settings.max_queued)
    ) {
      this.counters.rejected += 1;
      return {
        slot,
        outcome: 'refused',
        error: capacityFullText(this.running.length, this.queued.length, this.pool),
      };
    }
    const { again: _again, ...asked } = request;
    this.queued.push({ ...asked, queued_at: new Date(now).toISOString() });
    if (!this.rotation.includes(request.fairness_key)) this.rotation.push(request.fairness_key);
    this.counters.queued += 1;
    return { slot, outcome: 'queued', running: this.running.length, queued: this.queued.length };
  }

  /** Gives a slot back or withdraws a request; then grants what now fits. Unknown slots are ignored. */
  release(slot: string, now: number, reclaimed = false): void {
    const held = this.running.findIndex((holder) => holder.slot === slot);
    if (held >= 0) {
      this.running.splice(held, 1);
      if (reclaimed) this.counters.reclaimed += 1;
      else this.counters.released += 1;
    } else {
      this.dequeue(slot);
    }
    this.grantWhatFits(now);
  }

  /** Refuses the requests that waited past the queue timeout. */
  expire(now: number): void {
    const limitMs = this.settings.queue_timeout_seconds * 1000;
    for (const waiting of [...this.queued]) {
      if (now - Date.parse(waiting.queued_at) < limitMs) continue;
      this.dequeue(waiting.slot);
      this.counters.timed_out += 1;
      this.answer(waiting.owner, {
        slot: waiting.slot,
        outcome: 'refused',
        error: queueTimeoutText(this.settings.queue_timeout_seconds, this.pool),
      });
    }
  }

  /** Grants queued requests while slots are free, rotating between fairness keys. */
  grantWhatFits(now: number): void {
    while (this.hasFreeSlot() && this.queued.length > 0 && this.pacedUntil(now) === undefined) {
      const key = this.rotation.shift();
      const index = this.queued.findIndex((waiting) => waiting.fairness_key === key);
      if (key === undefined || index < 0) {
        // Cannot happen while rotation and queue agree; rebuild the rotation rather than stall.
        this.rotation = [...new Set(this.queued.map((waiting) => waiting.fairness_key))];
        continue;
      }
      const [next] = this.queued.splice(index, 1);
      if (this.queued.some((waiting) => waiting.fairness_key === key)) this.rotation.push(key);
      const { queued_at: _queuedAt, ...request } = next;
      this.grant(request, now);
    }
  }

  /**
   * A worker's lease report: the slots it granted become held like any other (a slot already held, or a token
   * no longer its lease's, takes nothing twice); the slots given back through it are released; spare slots it
   * dropped after an earlier reply are free; queued requests are served first; then, while none waits (and no
   * start rate paces grants), the lease is topped up towards what it wants. The reply lists the spare slots it
   * may grant: while requests wait, none.
   */
  report(report: LeaseReport, now: number): LeaseReply {
    const hold = this.lent.renew(report, now);
    for (const { token, request } of report.assigned) {
      this.lent.spend(hold, token);
      if (this.running.some((holder) => holder.slot === request.slot)) continue;
      this.dequeue(request.slot);
      this.take(request, now);
    }
    for (const slot of report.released ?? []) this.release(slot, now);
    this.lent.settle(hold, report.ack);
    this.grantWhatFits(now);
    const lend =
      this.queued.length === 0 &&
      this.settings.admission_policy === 'queue' &&
      this.settings.max_starts_per_second === undefined;
    const spare = this.lent.reply(hold, report, lend ? this.settings.max_running - this.taken() : undefined);
    return { seq: report.seq, spare };
  }

  /** Leases not renewed within LEASE_TTL_MS: their workers are gone, their spare slots free again. */
  expireLeases(now: number): void {
    if (this.lent.expire(now)) this.grantWhatFits(now);
  }

  declare(declaration: WorkerDeclaration, now: number): void {
    if (!declaration.left) this.adopt(declaration);
    this.workers = [
      ...this.workers.filter((worker) => worker.identity !== declaration.identity),
      declaration,
    ].slice(-MAX_WORKER_DECLARATIONS);
    // A higher max_running may free slots at once; a lower one lets the running finish.
    this.grantWhatFits(now);
  }

  private adopt(declaration: WorkerDeclaration): void {
    const changed = !sameAdmissionSettings(this.settings, declaration.settings);
    if (changed) {
      log.warn('admission settings replaced by a starting worker', {
        identity: declaration.identity,
        before: this.settings,
        after: declaration.settings,
      });
    }
    this.settings = declaration.settings;
  }

  /** When each owner's slot was last found open by a sweep (not carried: after continue-as-new, its grant). */
  private readonly checked = new Map<string, number>();

  /**
   * The owners a sweep checks: those holding a slot for a sweep interval or more, the ones checked longest ago
   * first, at most ADMISSION_SWEEP_BATCH. A queued owner that closed is found when its grant cannot reach it,
   * or its request times out.
   */
  owners(now: number): string[] {
    const since = new Map<string, number>();
    for (const holder of this.running) {
      const at = this.checked.get(holder.owner) ?? Date.parse(holder.since);
      since.set(holder.owner, Math.min(since.get(holder.owner) ?? Infinity, at));
    }
    return [...since]
      .filter(([, at]) => now - at >= ADMISSION_SWEEP_INTERVAL_MS)
      .sort((a, b) => a[1] - b[1])
      .slice(0, ADMISSION_SWEEP_BATCH)
      .map(([owner]) => owner);
  }

  /** After a sweep: these owners were found open now. */
  checkedOpen(owners: readonly string[], now: number): void {
    for (const owner of owners) this.checked.set(owner, now);
    const holding = new Set(this.running.map((holder) => holder.owner));
    for (const owner of [...this.checked.keys()]) if (!holding.has(owner)) this.checked.delete(owner);
  }

  /** Gives back every slot and request of owners that have closed, then grants what now fits. */
  reclaim(closedOwners: readonly string[], now: number): void {
    const closed = new Set(closedOwners);
    // Their requests leave the queue first: a freed slot must not go to an owner that is gone.
    for (const waiting of this.queued.filter((entry) => closed.has(entry.owner))) this.dequeue(waiting.slot);
    const kept = this.running.filter((holder) => !closed.has(holder.owner));
    this.counters.reclaimed += this.running.length - kept.length;
    this.running = kept;
    this.grantWhatFits(now);
  }

  /** When the loop must next wake: the first queue timeout, the start rate's next grant. */
  nextDeadline(now: number): number | undefined {
    const deadlines: number[] = this.queued.map(
      (waiting) => Date.parse(waiting.queued_at) + this.settings.queue_timeout_seconds * 1000,
    );
    const paced = this.pacedUntil(now);
    if (paced !== undefined && this.queued.length > 0 && this.hasFreeSlot()) deadlines.push(paced);
    deadlines.push(...this.lent.deadlines());
    return deadlines.length === 0 ? undefined : Math.min(...deadlines);
  }

  private take(request: SlotRequest, now: number): void {
    const { again: _again, ...asked } = request;
    this.running.push({ ...asked, since: new Date(now).toISOString() });
    this.counters.granted += 1;
    this.lastGrantMs = now;
  }

  /** A queued request's slot: taken, and its owner told. */
  private grant(request: SlotRequest, now: number): void {
    this.take(request, now);
    this.answer(request.owner, { slot: request.slot, outcome: 'granted' });
  }

  private dequeue(slot: string): void {
    const index = this.queued.findIndex((waiting) => waiting.slot === slot);
    if (index < 0) return;
    const [gone] = this.queued.splice(index, 1);
    if (!this.queued.some((waiting) => waiting.fairness_key === gone.fairness_key)) {
      this.rotation = this.rotation.filter((key) => key !== gone.fairness_key);
    }
  }
}
