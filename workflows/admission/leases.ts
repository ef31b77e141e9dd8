/**
 * The spare slots the admission workflow lends to workers (`Leases`), apart from the semaphore that decides how
 * many (`Slots`, slots.ts): every lease, its spare slots (tokens), those being taken back, and when its worker
 * last reported. Pure but for a warning logged when a lease is given up; every time is handed in.
 */
import { log } from '@temporalio/workflow';
import { LEASE_TTL_MS, type LeaseHold, type LeaseReport } from '../../contracts/admission';

export class Leases {
  constructor(
    /** Every lease lent something or asked for something, in the order they first reported. */
    public holds: LeaseHold[] = [],
  ) {}

  /** Spare slots lent, those being taken back included: each counts against `max_running`. */
  spare(): number {
    return this.holds.reduce((sum, hold) => sum + hold.tokens.length, 0);
  }

  /** The lease `report` is about (made at its first report), renewed `now`. */
  renew(report: LeaseReport, now: number): LeaseHold {
    let hold = this.holds.find((lease) => lease.lease === report.lease);
    if (!hold) {
      hold = {
        lease: report.lease,
        identity: report.identity,
        tokens: [],
        revoking: [],
        renewed_at: '',
        made: 0,
      };
      this.holds.push(hold);
    }
    hold.renewed_at = new Date(now).toISOString();
    return hold;
  }

  /** A spare slot its worker granted: no longer the lease's (it is held like any other slot). */
  spend(hold: LeaseHold, token: string): void {
    hold.tokens = hold.tokens.filter((held) => held !== token);
    hold.revoking = hold.revoking.filter((taking) => taking.token !== token);
  }

  /** Taken back by a reply the worker has since applied (`ack`): it grants them no more, they are free. */
  settle(hold: LeaseHold, ack: number): void {
    const done = new Set(hold.revoking.filter((taking) => taking.seq <= ack).map((taking) => taking.token));
    hold.revoking = hold.revoking.filter((taking) => !done.has(taking.token));
    hold.tokens = hold.tokens.filter((token) => !done.has(token));
  }

  /**
   * The spare slots the reply to `report` lists. With `free` slots to lend (undefined: lend nothing), the lease
   * is topped up towards what it wants; spare slots beyond that (all of them, when nothing may be lent) are
   * taken back, counted until the worker acknowledges this reply. A lease that holds and wants nothing is
   * forgotten.
   */
  reply(hold: LeaseHold, report: LeaseReport, free: number | undefined): string[] {
    const revoking = new Set(hold.revoking.map((taking) => taking.token));
    const spare = hold.tokens.filter((token) => !revoking.has(token));
    if (free === undefined || report.want < spare.length) {
      const kept = free === undefined ? 0 : report.want;
      for (const token of spare.slice(kept)) hold.revoking.push({ token, seq: report.seq });
      spare.splice(kept);
    } else {
      const lent = Math.min(report.want - spare.length, free);
      for (let i = 0; i < lent; i += 1) {
        hold.made += 1;
        const token = `${report.lease}#${hold.made}`;
        hold.tokens.push(token);
        spare.push(token);
      }
    }
    if (hold.tokens.length === 0 && report.want === 0) {
      this.holds = this.holds.filter((lease) => lease !== hold);
    }
    return spare;
  }

  /**
   * Gives up the leases not renewed within LEASE_TTL_MS (their workers are gone, their spare slots free again).
   * True when it gave up any.
   */
  expire(now: number): boolean {
    const live = this.holds.filter((hold) => now - Date.parse(hold.renewed_at) < LEASE_TTL_MS);
    if (live.length === this.holds.length) return false;
    for (const hold of this.holds.filter((lease) => !live.includes(lease))) {
      log.warn('admission lease given up: its worker stopped reporting', {
        lease: hold.lease,
        identity: hold.identity,
        spare: hold.tokens.length,
      });
    }
    this.holds = live;
    return true;
  }

  /** When a lease that holds spare slots is given up unless its worker reports first. */
  deadlines(): number[] {
    return this.holds
      .filter((hold) => hold.tokens.length > 0)
      .map((hold) => Date.parse(hold.renewed_at) + LEASE_TTL_MS);
  }
}

/** Throws unless `report` has the shape `Slots.report` reads. */
export function validLeaseReport(report: LeaseReport): void {
  const text = (value: unknown) => typeof value === 'string' && value.length > 0;
  const count = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;
  const readable =
    typeof report === 'object' &&
    report !== null &&
    text(report.lease) &&
    typeof report.identity === 'string' &&
    count(report.seq) &&
    count(report.ack) &&
    count(report.want) &&
    Array.isArray(report.assigned) &&
    report.assigned.every(
      (grant) =>
        typeof grant === 'object' &&
        grant !== null &&
        text(grant.token) &&
        typeof grant.request === 'object' &&
        grant.request !== null &&
        text(grant.request.slot) &&
        text(grant.request.owner) &&
        typeof grant.request.fairness_key === 'string',
    ) &&
    (report.released === undefined || (Array.isArray(report.released) && report.released.every(text)));
  if (!readable) throw new Error('admission: a lease report it cannot read');
}
