import { log } from '@temporalio/workflow';
import {
  LEASE_TTL_MS,
  type AdmissionSettings,
  type LeaseReport,
  type SlotRequest,
} from '../../../contracts/admission';
import { Leases } from '../../../workflows/admission/leases';
import { Slots } from '../../../workflows/admission/slots';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');

const SETTINGS: AdmissionSettings = {
  max_running: 4,
  max_queued: 64,
  admission_policy: 'queue',
  queue_timeout_seconds: 300,
};

const report = (fields: Partial<LeaseReport> & { seq: number }): LeaseReport => ({
  lease: 'w1/subagents/abc',
  identity: 'w1',
  ack: fields.seq - 1,
  assigned: [],
  want: 4,
  ...fields,
});

const req = (slot: string): SlotRequest => ({ slot, owner: `owner-${slot}`, fairness_key: 'run-1' });

describe('Leases', () => {
  it('lends what a lease wants within the free slots, each spare slot a token of its own', () => {
    const leases = new Leases();
    const first = report({ seq: 1, want: 3 });
    const hold = leases.renew(first, T0);
    expect(leases.reply(hold, first, 2)).toEqual(['w1/subagents/abc#1', 'w1/subagents/abc#2']);
    expect(leases.spare()).toBe(2);
    const second = report({ seq: 2, want: 3 });
    expect(leases.reply(leases.renew(second, T0), second, 5)).toEqual([
      'w1/subagents/abc#1',
      'w1/subagents/abc#2',
      'w1/subagents/abc#3',
    ]);
  });

  it('counts a spare slot taken back until the worker acknowledges the reply that took it', () => {
    const leases = new Leases();
    const hold = leases.renew(report({ seq: 1 }), T0);
    leases.reply(hold, report({ seq: 1 }), 4);
    // Nothing may be lent (a request waits): the reply lists none, and all four still count.
    expect(leases.reply(hold, report({ seq: 2 }), undefined)).toEqual([]);
    leases.settle(hold, 1);
    expect(leases.spare()).toBe(4);
    leases.settle(hold, 2);
    expect(leases.spare()).toBe(0);
  });

  it('takes a spare slot its worker granted out of the lease (it is held like any other slot)', () => {
    const leases = new Leases();
    const hold = leases.renew(report({ seq: 1 }), T0);
    const [token] = leases.reply(hold, report({ seq: 1 }), 4);
    leases.spend(hold, token);
    expect(leases.spare()).toBe(3);
    expect(hold.tokens).not.toContain(token);
  });

  it('gives up a lease whose worker stops reporting, once, after LEASE_TTL_MS', () => {
    const warn = jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    const leases = new Leases();
    leases.reply(leases.renew(report({ seq: 1 }), T0), report({ seq: 1 }), 2);
    const other = report({ seq: 1, lease: 'w2/subagents/def', identity: 'w2' });
    leases.reply(leases.renew(other, T0), other, 2);
    expect(leases.deadlines()).toEqual([T0 + LEASE_TTL_MS, T0 + LEASE_TTL_MS]);
    // w2 reports again: its lease lives on.
    leases.renew({ ...other, seq: 2, ack: 1 }, T0 + 20_000);
    expect(leases.expire(T0 + LEASE_TTL_MS - 1)).toBe(false);
    expect(leases.expire(T0 + LEASE_TTL_MS)).toBe(true);
    expect(leases.holds.map((hold) => hold.lease)).toEqual(['w2/subagents/def']);
    expect(leases.spare()).toBe(2);
    expect(leases.expire(T0 + LEASE_TTL_MS + 1)).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith('admission lease given up: its worker stopped reporting', {
      lease: 'w1/subagents/abc',
      identity: 'w1',
      spare: 2,
    });
    warn.mockRestore();
  });

  it('sets no deadline for a lease with nothing lent, and forgets one that holds and wants nothing', () => {
    const leases = new Leases();
    const idle = report({ seq: 1, want: 0 });
    const hold = leases.renew(idle, T0);
    expect(leases.deadlines()).toEqual([]);
    expect(leases.reply(hold, idle, 4)).toEqual([]);
    expect(leases.holds).toEqual([]);
  });
});

describe('Leases within Slots: the bound holds', () => {
  it("counts a lease's spare slots and its worker's grants within max_running", () => {
    const slots = new Slots({ settings: SETTINGS }, () => undefined);
    const taken = () => slots.running.length + slots.lent.spare();
    const lent = slots.report(report({ seq: 1, want: 3 }), T0).spare;
    expect(lent).toHaveLength(3);
    // One slot is left for requests by signal; the next one waits.
    expect(slots.acquire(req('a'), T0)?.outcome).toBe('granted');
    expect(slots.acquire(req('b'), T0)?.outcome).toBe('queued');
    expect(taken()).toBe(4);
    // The worker granted two spare slots: they are held, and still within the bound.
    slots.report(
      report({
        seq: 2,
        assigned: [
          { token: lent[0], request: req('c') },
          { token: lent[1], request: req('d') },
        ],
      }),
      T0,
    );
    expect(slots.running.map((holder) => holder.slot)).toEqual(['a', 'c', 'd']);
    expect(taken()).toBe(4);
  });
});
