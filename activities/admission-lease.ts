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
 * back). Slots are given back by signal, as any other (durable before the owner's task completes).
 *
 * Nothing here waits on the admission workflow inside a local activity: that workflow's task may need this very
 * worker, and a worker whose workflow cache is full evicts a run whose local activity is still running (its task
 * is then lost and retried after its timeout). A request that finds no spare slot goes by signal at once.
 */
import { randomUUID } from 'node:crypto';
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
/** How long a close waits for its last report (none may answer: this worker has stopped polling). */
const LEASE_CLOSE_MS = 2_000;

/** Whether a pool's settings let its slots be leased. */
export function leasable(settings: AdmissionSettings): boolean {
  return (
    settings.max_running >= LEASE_MIN_RUNNING &&
    settings.admission_policy === 'queue' &&
    settings.max_starts_per_second === undefined
  );
}

/**
 * What a lease asks for: a quarter of the pool, so that a burst of requests finds spare slots (the reply to each
 * report tops it up again). Several workers of one queue may lend the whole pool between them: a request that
 * then waits in the queue takes the spare slots back from every lease at its next report.
 */
function wanted(settings: AdmissionSettings): number {
  return Math.floor(settings.max_running / 4);
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
  /** After a reply that lent nothing (requests wait in the queue): no report for a miss before this. */
  private quietUntil = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private again = false;
  private closed = false;
  /** Slots given back through the next report: granted in the report in flight when their owner ended. */
  private releasing: string[] = [];

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
   * signal (and the lease asks to be topped up, unless the last reply lent none: requests wait in the queue).
   * The same request asking again (its task retried) gets the token it took, if not yet reported.
   */
  take(request: SlotRequest): string | undefined {
    if (this.closed) return undefined;
    this.lastDemandAt = performance.now();
    const token = this.takeSpare(request);
    if (token === undefined && performance.now() >= this.quietUntil) this.kick();
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
   * heard of it: its token is spare again); one whose report is in flight is given back in the next report, which
   * the admission workflow takes after it. True: nothing to signal.
   */
  release(slot: string): boolean {
    const index = this.pending.findIndex((taken) => taken.request.slot === slot);
    if (index >= 0) {
      const [taken] = this.pending.splice(index, 1);
      this.spare.push(taken.token);
      return true;
    }
    if (this.inFlight && this.sent.some((taken) => taken.request.slot === slot)) {
      this.releasing.push(slot);
      this.kick();
      return true;
    }
    return false;
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
    const want = this.closed || idle ? 0 : wanted(settings);
    this.sent = this.pending;
    this.pending = [];
    const released = this.releasing;
    this.releasing = [];
    const report: LeaseReport = {
      lease: this.id,
      identity,
      seq: this.seq + 1,
      ack: this.ack,
      assigned: this.sent,
      ...(released.length > 0 && { released }),
      want,
    };
    const sentAt = performance.now();
    try {
      const reply = await client.workflow
        .getHandle(admissionWorkflowId(taskQueue, pool))
        .executeUpdate(leaseReportUpdate, { args: [report] });
      this.seq = report.seq;
      this.sent = [];
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
      this.releasing = [...released, ...this.releasing];
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
