/**
 * A worker's lease of admission slots (activities/admission-lease.ts) against the admission workflow's own
 * decisions (`Slots`), its Update stood in for by a call: what it grants is reported and held, an unreported
 * grant given back is undone in the worker, a burst beyond the spare slots goes by signal, a queue takes the spare slots back, an idle lease gives them back,
 * a failed report is sent again. test/temporal/admission-lease.test.ts runs it against the real server.
 */
import type { Client } from '@temporalio/client';
import type {
  AdmissionAnswer,
  AdmissionSettings,
  LeaseReport,
  SlotRequest,
} from '../../../contracts/admission';
import { leasable, PoolLease } from '../../../activities/admission-lease';
import { Slots } from '../../../workflows/admission/slots';

const SETTINGS: AdmissionSettings = {
  max_running: 32,
  max_queued: 64,
  admission_policy: 'queue',
  queue_timeout_seconds: 300,
};

function req(slot: string): SlotRequest {
  return { slot, owner: `owner-${slot}`, fairness_key: 'run-1' };
}

/** Waits for `predicate`, looking every few ms; the deadline only bounds a test that has gone wrong. */
async function until(what: string, predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A lease whose reports go straight to a `Slots` (failing while `down`). */
function leased(
  settings: Partial<AdmissionSettings> = {},
  timing: { renewMs?: number; idleMs?: number } = {},
) {
  const answers: AdmissionAnswer[] = [];
  const slots = new Slots({ settings: { ...SETTINGS, ...settings } }, (_owner, answer) =>
    answers.push(answer),
  );
  const reports: LeaseReport[] = [];
  /** `failed`: reports that reached the stand-in while it was down. */
  const state = { down: false, failed: 0 };
  const client = {
    workflow: {
      getHandle: () => ({
        executeUpdate: async (_update: unknown, { args: [report] }: { args: [LeaseReport] }) => {
          await new Promise((resolve) => setImmediate(resolve));
          if (state.down) {
            state.failed += 1;
            throw new Error('server unreachable');
          }
          reports.push(report);
          return slots.report(report, Date.now());
        },
      }),
    },
  } as unknown as Client;
  const lease = new PoolLease({
    client,
    taskQueue: 'q',
    pool: 'subagents',
    settings: { ...SETTINGS, ...settings },
    identity: 'w1',
    ...timing,
  });
  return { lease, slots, reports, answers, state };
}

const held = (slots: Slots) => slots.running.map((holder) => holder.slot);
const spareAt = (slots: Slots) => slots.leases.reduce((sum, hold) => sum + hold.tokens.length, 0);

describe('PoolLease', () => {
  it('leases only pools large enough, with the queue policy and no start rate', () => {
    expect(leasable(SETTINGS)).toBe(true);
    expect(leasable({ ...SETTINGS, max_running: 3 })).toBe(false);
    expect(leasable({ ...SETTINGS, admission_policy: 'reject' })).toBe(false);
    expect(leasable({ ...SETTINGS, max_starts_per_second: 2 })).toBe(false);
  });

  it('grants from its spare slots and reports the grants, which the admission workflow then holds', async () => {
    const { lease, slots } = leased();
    lease.prefetch();
    await until('spare slots', () => lease.spareSlots > 0);
    // A quarter of the pool.
    expect(lease.spareSlots).toBe(8);
    const tokens = ['a', 'b', 'c'].map((slot) => lease.take(req(slot)));
    expect(tokens.every((token) => token !== undefined)).toBe(true);
    await until('the grants reported', () => held(slots).length === 3);
    expect(held(slots)).toEqual(['a', 'b', 'c']);
    // Reported: the slot goes back by signal, as any other.
    expect(lease.release('a')).toBe(false);
    lease.stop();
  });

  it('undoes a grant given back before it was reported: the admission workflow never hears of it', async () => {
    const { lease, slots, reports } = leased();
    lease.prefetch();
    await until('spare slots', () => lease.spareSlots > 0);
    const before = lease.spareSlots;
    const sent = reports.length;
    const token = lease.take(req('a'));
    expect(token).toBeDefined();
    // Within the same turn of the event loop: not reported yet.
    expect(lease.release('a')).toBe(true);
    expect(lease.spareSlots).toBe(before);
    // The report the grant asked for has gone out since (not a number of ms: the report itself), without it.
    await until('the report after the grant', () => reports.length > sent);
    expect(reports.flatMap((report) => report.assigned)).toEqual([]);
    expect(held(slots)).toEqual([]);
    lease.stop();
  });

  it('sends a burst beyond its spare slots by signal at once, and is topped up again', async () => {
    const { lease, slots } = leased();
    lease.prefetch();
    await until('spare slots', () => lease.spareSlots > 0);
    const tokens = Array.from({ length: 10 }, (_, i) => lease.take(req(`s${i}`)));
    expect(tokens.filter((token) => token === undefined)).toHaveLength(2);
    await until('every grant reported', () => held(slots).length === 8);
    await until('the lease topped up', () => lease.spareSlots === 8);
    // Never more than a quarter of the pool spare.
    expect(spareAt(slots)).toBe(SETTINGS.max_running / 4);
    lease.stop();
  });

  it('gives back in its next report a slot whose grant is being reported, after that grant', async () => {
    const { lease, slots, reports } = leased();
    lease.prefetch();
    await until('spare slots', () => lease.spareSlots > 0);
    expect(lease.take(req('a'))).toBeDefined();
    // The report goes out on the next turn of the event loop, and is then in flight.
    await new Promise((resolve) => setImmediate(resolve));
    expect(lease.release('a')).toBe(true);
    await until('the slot given back', () => slots.counters.released === 1);
    expect(held(slots)).toEqual([]);
    const carrying = reports.filter((report) => report.assigned.length > 0 || report.released);
    expect(
      carrying.map((report) => [report.assigned.map((grant) => grant.request.slot), report.released]),
    ).toEqual([
      [['a'], undefined],
      [[], ['a']],
    ]);
    lease.stop();
  });

  it('gives its spare slots back for a queued request, and lends none while one waits', async () => {
    const { lease, slots, answers } = leased({ max_running: 34 }, { renewMs: 20 });
    lease.prefetch();
    await until('spare slots', () => lease.spareSlots > 0);
    // Every other slot taken by signal, so that the next requests wait: more of them than the lease holds.
    for (let i = 0; i < 34 - spareAt(slots); i += 1) slots.acquire(req(`x${i}`), Date.now());
    const late = Array.from({ length: 9 }, (_, i) => `l${i}`);
    for (const slot of late) expect(slots.acquire(req(slot), Date.now())?.outcome).toBe('queued');
    // The renewal's reply takes the spare back; the worker's next report acknowledges it; the slots go to the
    // queued requests, and the one left waiting keeps the lease empty.
    await until(
      'eight queued requests granted',
      () => answers.filter((a) => a.outcome === 'granted').length === 8,
    );
    expect(slots.queued.map((waiting) => waiting.slot)).toEqual(['l8']);
    expect(lease.spareSlots).toBe(0);
    expect(spareAt(slots)).toBe(0);
    expect(lease.take(req('z'))).toBeUndefined();
    expect(held(slots)).toHaveLength(34);
    lease.stop();
  });

  it('gives its spare slots back once idle, and reports a grant again after a failed report', async () => {
    const { lease, slots, state } = leased({}, { renewMs: 10, idleMs: 100 });
    lease.prefetch();
    await until('spare slots', () => lease.spareSlots > 0);
    state.down = true;
    expect(lease.take(req('a'))).toBeDefined();
    // The report of that grant has failed (not a number of ms: the failure itself).
    await until('the report of the grant to fail', () => state.failed > 0);
    expect(held(slots)).toEqual([]);
    // While its reports fail it grants nothing: the request goes by signal.
    expect(lease.take(req('b'))).toBeUndefined();
    state.down = false;
    await until('the grant reported after the failure', () => held(slots).length === 1);
    await until('the idle lease forgotten', () => slots.leases.length === 0);
    expect(lease.spareSlots).toBe(0);
    lease.stop();
  });
});
