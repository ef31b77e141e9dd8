/**
 * A worker's leases of admission slots (one per pool whose `max_running` is at least LEASE_MIN_RUNNING, with
 * the `queue` policy and no start rate): a few spare slots held in this process and granted to the runs and
 * subagents that ask here, within the local activity of their first task — no signal to the admission workflow,
 * no answer back, no task of their own for it. What was granted is reported, and the lease renewed, by one
 * Update per batch (one in flight per pool); its reply is the spare slots this worker may still grant.
 *
 * The lease is given up when the worker stops (a last report wanting none), when it stops reporting (the
 * admission workflow frees its spare slots after LEASE_TTL_MS; this worker stops granting them after half of
 * that since its last report went out), and while requests wait in the queue (the reply takes the spare slots
 * back). A slot is given back through the next report too, awaited (so that it is given back before its owner's
 * task completes, as a signal would be), or by signal when the report does not come within two seconds.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleepFor } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import {
  admissionWorkflowId,
  LEASE_MIN_RUNNING,
  LEASE_TTL_MS,
  leaseReportUpdate,
  type AdmissionPool,
  type AdmissionSettings,
  type LeaseReport,
  type SlotRequest,
} from '../contracts/admission';

/** While a lease holds spare slots it is renewed this often (and given back after LEASE_IDLE_MS unused). */
export const LEASE_RENEW_MS = 2_000;
/** A lease whose spare slots went unused this long gives them back. */
export const LEASE_IDLE_MS = 10_000;
/** After a report fails: the pause before the next, doubling up to LEASE_RETRY_MAX_MS. */
const LEASE_RETRY_MS = 500;
const LEASE_RETRY_MAX_MS = 8_000;
/**
 * A request that finds no spare slot while the lease is being topped up waits this long for the reply at most
 * before it goes by signal (in a burst the reply comes within one task of the admission workflow).
 */
export const LEASE_WAIT_MS = 1_000;
/** How long a close waits for its last report (none may answer: this worker has stopped polling). */
const LEASE_CLOSE_MS = 2_000;

const sleep = (ms: number) => sleepFor(Math.max(0, ms), undefined, { ref: false });

/** Whether a pool's settings let its slots be leased. */
export function leasable(settings: AdmissionSettings): boolean {
  return (
    settings.max_running >= LEASE_MIN_RUNNING &&
    settings.admission_policy === 'queue' &&
    settings.max_starts_per_second === undefined
  );
}

/** What a lease asks for: a share of the pool, more while it is in demand, never more than a quarter. */
function wanted(settings: AdmissionSettings, demand: number): number {
  const base = Math.floor(settings.max_running / 8);
  return Math.min(Math.floor(settings.max_running / 4), Math.max(base, demand * 2));
}

export interface PoolLeaseOptions {
  client: Client;
  taskQueue: string;
  pool: AdmissionPool;
  settings: AdmissionSettings;
  identity: string;
  /** Default LEASE_RENEW_MS and LEASE_IDLE_MS (tests shorten them). */
  renewMs?: number;
  idleMs?: number;
  /** Where a lease's trouble is told (default: nowhere; the signal path serves meanwhile). */
  warn?: (message: string) => void;
}

/** One pool's lease in this worker. */
export class PoolLease {
  readonly id: string;
  private spare: string[] = [];
  /** Granted and not yet reported. */
  private pending: { token: string; request: SlotRequest }[] = [];
  /** Reported in the report in flight. */
  private sent: { token: string; request: SlotRequest }[] = [];
  private inFlight: Promise<void> | undefined;
  private seq = 0;
  private ack = 0;
  /** performance.now() after which the spare slots are not granted (the admission workflow may have freed them). */
  private trustedUntil = 0;
  private lastDemandAt = 0;
  private demand = 0;
  /** After a reply that lent nothing (requests wait in the queue): no report for a miss before this. */
  private quietUntil = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private again = false;
  private closed = false;
  /** Slots given back through the next report, and those in the report in flight. */
  private releasing: { slot: string; done: (given: boolean) => void }[] = [];
  private releasingSent: { slot: string; done: (given: boolean) => void }[] = [];
  /** Requests waiting for a reply with spare slots, and their wake-ups. */
  private waiting = 0;
  private replied: (() => void)[] = [];

  constructor(private readonly options: PoolLeaseOptions) {
    this.id = `${options.identity}/${options.pool}/${randomUUID().slice(0, 8)}`;
  }

  /** Spare slots this worker may grant now (for tests and the bench). */
  get spareSlots(): number {
    return this.failures === 0 && performance.now() < this.trustedUntil ? this.spare.length : 0;
  }

  /** Asks for spare slots ahead of the first request (a worker that has just started). */
  prefetch(): void {
    this.lastDemandAt = performance.now();
    this.kick();
  }

  /**
   * A spare slot for this request (its token), or undefined: the request goes to the admission workflow by
   * signal. When none is spare, the lease asks for more and the request waits for the reply (LEASE_WAIT_MS at
   * most), unless the last reply lent none (requests wait in the queue). The same request asking again (its
   * task retried) gets the token it took, if not yet reported.
   */
  async take(request: SlotRequest): Promise<string | undefined> {
    if (this.closed) return undefined;
    this.lastDemandAt = performance.now();
    this.demand += 1;
    let token = this.takeSpare(request);
    // No wait when the last reply lent none (requests queue) or the last report failed (retried after a pause).
    if (token !== undefined || performance.now() < this.quietUntil || this.failures > 0) return token;
    const deadline = performance.now() + LEASE_WAIT_MS;
    this.waiting += 1;
    try {
      while (token === undefined && !this.closed && performance.now() < deadline) {
        this.kick();
        const replied = new Promise<void>((resolve) => this.replied.push(resolve));
        await Promise.race([replied, sleep(deadline - performance.now())]);
        token = this.takeSpare(request);
        if (performance.now() < this.quietUntil || this.failures > 0) break;
      }
    } finally {
      this.waiting -= 1;
    }
    return token;
  }

  private takeSpare(request: SlotRequest): string | undefined {
    const again = this.pending.find((taken) => taken.request.slot === request.slot);
    if (again) return again.token;
    // Granted only while the reports go through: a grant nobody hears of is a slot outside the count.
    const usable = this.failures === 0 && performance.now() < this.trustedUntil;
    const token = usable ? this.spare.pop() : undefined;
    if (token === undefined) return undefined;
    this.pending.push({ token, request });
    this.kick();
    return token;
  }

  /**
   * Before a slot is given back by signal: a grant not yet reported is undone here (the admission workflow never
   * heard of it: its token is spare again, true is returned, no signal is needed); one whose report is in flight
   * waits for it (LEASE_WAIT_MS at most), so that the release does not reach the admission workflow before the
   * grant.
   */
  async release(slot: string): Promise<boolean> {
    const index = this.pending.findIndex((taken) => taken.request.slot === slot);
    if (index >= 0) {
      const [taken] = this.pending.splice(index, 1);
      this.spare.push(taken.token);
      return true;
    }
    const inFlight = this.inFlight;
    if (inFlight && this.sent.some((taken) => taken.request.slot === slot)) {
      // Bounded: with the admission workflow unreachable the signal goes anyway (its sweep is the backstop).
      const settled = await Promise.race([inFlight.then(() => true), sleep(LEASE_WAIT_MS).then(() => false)]);
      // Not reported after all (the report failed): undone here, as above.
      if (settled) return this.release(slot);
      return false;
    }
    if (this.closed || this.seq === 0 || this.failures > 0) return false;
    // Given back in the next report, many at once, and awaited: done when the admission workflow has it.
    let entry: { slot: string; done: (given: boolean) => void } | undefined;
    const given = new Promise<boolean>((done) => {
      entry = { slot, done };
      this.releasing.push(entry);
    });
    this.kick();
    const outcome = await Promise.race([given, sleep(2 * LEASE_WAIT_MS).then(() => false)]);
    // Not given back in time: its owner signals the release, and a report not yet sent leaves it out.
    if (!outcome) this.releasing = this.releasing.filter((waiting) => waiting !== entry);
    return outcome;
  }

  /** Stops without a last report (the worker has stopped: nothing may answer); the lease runs out. */
  stop(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.spare = [];
  }

  /** Gives the spare slots back and stops (a worker shutting down). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.spare = [];
    if (this.seq === 0 && this.pending.length === 0 && !this.inFlight) return;
    const last = async () => {
      await this.inFlight;
      await this.report();
    };
    await Promise.race([
      last().catch(() => undefined),
      new Promise((resolve) => setTimeout(resolve, LEASE_CLOSE_MS).unref()),
    ]);
  }

  /** A report soon: at once when none is in flight, else right after it. */
  private kick(): void {
    if (this.inFlight) {
      this.again = true;
      return;
    }
    // After a failed report the next waits for its pause (the timer set for it).
    if (this.failures > 0 && this.timer !== undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    // After this turn of the event loop: the grants of one activation's local activities go in one report.
    this.inFlight = new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.cycle());
  }

  private async cycle(): Promise<void> {
    let ok = true;
    try {
      await this.report();
      this.failures = 0;
    } catch (err) {
      ok = false;
      this.failures += 1;
      if (this.failures === 2 && !this.closed) {
        this.options.warn?.(
          `admission lease (${this.options.pool}): report failed, retrying: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    } finally {
      this.inFlight = undefined;
      for (const wake of this.replied.splice(0)) wake();
    }
    if (this.closed) return;
    const delay = ok
      ? this.again || this.pending.length > 0 || this.releasing.length > 0
        ? 0
        : this.spare.length > 0
          ? (this.options.renewMs ?? LEASE_RENEW_MS)
          : undefined
      : Math.min(LEASE_RETRY_MAX_MS, LEASE_RETRY_MS * 2 ** (this.failures - 1));
    this.again = false;
    if (delay === 0) this.kick();
    else if (delay !== undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.kick();
      }, delay);
      this.timer.unref();
    }
  }

  private async report(): Promise<void> {
    const { client, taskQueue, pool, settings, identity } = this.options;
    const idle = performance.now() - this.lastDemandAt > (this.options.idleMs ?? LEASE_IDLE_MS);
    const want = this.closed || idle ? 0 : wanted(settings, this.demand + this.waiting);
    this.demand = 0;
    this.sent = this.pending;
    this.pending = [];
    this.releasingSent = this.releasing;
    this.releasing = [];
    const report: LeaseReport = {
      lease: this.id,
      identity,
      seq: this.seq + 1,
      ack: this.ack,
      assigned: this.sent,
      ...(this.releasingSent.length > 0 && { released: this.releasingSent.map(({ slot }) => slot) }),
      want,
    };
    const sentAt = performance.now();
    try {
      const reply = await client.workflow
        .getHandle(admissionWorkflowId(taskQueue, pool))
        .executeUpdate(leaseReportUpdate, { args: [report] });
      this.seq = report.seq;
      this.sent = [];
      for (const { done } of this.releasingSent.splice(0)) done(true);
      const before = new Set(this.spare);
      // Spare slots taken since this report went out are in `pending`, reported next.
      const granted = new Set(this.pending.map((taken) => taken.token));
      this.spare = this.closed ? [] : reply.spare.filter((token) => !granted.has(token));
      this.ack = reply.seq;
      this.trustedUntil = sentAt + LEASE_TTL_MS / 2;
      if (want > 0 && reply.spare.length === 0) {
        this.quietUntil = performance.now() + (this.options.renewMs ?? LEASE_RENEW_MS);
      }
      // Slots taken back: say so at once, so that the admission workflow frees them for the queue.
      if ([...before].some((token) => !reply.spare.includes(token))) this.again = true;
    } catch (err) {
      // Not reported: granted again in the next report (a grant reported twice takes nothing twice).
      this.pending = [...this.sent, ...this.pending];
      this.sent = [];
      // Not given back: their owners signal the release instead.
      for (const { done } of this.releasingSent.splice(0)) done(false);
      throw err;
    }
  }
}

/** A worker's leases, by pool: only for pools that can lease. */
export class SlotLeases {
  private readonly leases = new Map<AdmissionPool, PoolLease>();

  constructor(
    options: Omit<PoolLeaseOptions, 'pool' | 'settings'> & {
      settings: Record<AdmissionPool, AdmissionSettings>;
    },
  ) {
    for (const pool of ['subagents', 'runs'] as const) {
      if (!leasable(options.settings[pool])) continue;
      this.leases.set(pool, new PoolLease({ ...options, pool, settings: options.settings[pool] }));
    }
  }

  get(pool: AdmissionPool): PoolLease | undefined {
    return this.leases.get(pool);
  }

  prefetch(): void {
    for (const lease of this.leases.values()) lease.prefetch();
  }

  async close(): Promise<void> {
    await Promise.all([...this.leases.values()].map((lease) => lease.close()));
  }

  stop(): void {
    for (const lease of this.leases.values()) lease.stop();
  }
}
