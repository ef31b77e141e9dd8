import { log } from '@temporalio/workflow';
import type { AdmissionAnswer, AdmissionSettings, SlotRequest } from '../../../contracts/admission';
import { Slots } from '../../../workflows/admission/slots';
import {
  ADMISSION_SWEEP_BATCH,
  ADMISSION_SWEEP_INTERVAL_MS,
  Sweep,
} from '../../../workflows/admission/sweep';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');

const SETTINGS: AdmissionSettings = {
  max_running: 40,
  max_queued: 64,
  admission_policy: 'queue',
  queue_timeout_seconds: 300,
};

const req = (slot: string): SlotRequest => ({ slot, owner: `owner-${slot}`, fairness_key: 'run-1' });

/** A sweep over real slots; `closed` lists the owners the activity finds closed (`fail`: it throws). */
function sweeping() {
  const told: AdmissionAnswer[] = [];
  const slots = new Slots({ settings: SETTINGS }, (_owner, answer) => told.push(answer));
  const described: string[][] = [];
  const plan = { closed: [] as string[], fail: false };
  const sweep = new Sweep(slots, {
    closedOwners: async (owners) => {
      described.push(owners);
      if (plan.fail) throw new Error('server unreachable');
      return plan.closed.filter((owner) => owners.includes(owner));
    },
  });
  return { slots, sweep, described, plan, told };
}

describe('Sweep', () => {
  let now = T0;
  let clock: jest.SpyInstance;
  beforeEach(() => {
    now = T0;
    clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
  });
  afterEach(() => clock.mockRestore());

  it('is due an interval after a slot is first held, and not while none is held', () => {
    const { slots, sweep } = sweeping();
    expect(sweep.due(now)).toBe(false);
    expect(sweep.dueAt(now)).toBe(Infinity);
    slots.acquire(req('a'), now);
    expect(sweep.dueAt(now)).toBe(T0 + ADMISSION_SWEEP_INTERVAL_MS);
    expect(sweep.due(now)).toBe(false);
    expect(sweep.due(T0 + ADMISSION_SWEEP_INTERVAL_MS - 1)).toBe(false);
    expect(sweep.due(T0 + ADMISSION_SWEEP_INTERVAL_MS)).toBe(true);
    // The slot comes back before the sweep: the interval starts again at the next grant.
    slots.release('a', now);
    expect(sweep.due(T0 + ADMISSION_SWEEP_INTERVAL_MS)).toBe(false);
    slots.acquire(req('b'), T0 + ADMISSION_SWEEP_INTERVAL_MS);
    expect(sweep.due(T0 + ADMISSION_SWEEP_INTERVAL_MS)).toBe(false);
    expect(sweep.dueAt(T0 + ADMISSION_SWEEP_INTERVAL_MS)).toBe(T0 + 2 * ADMISSION_SWEEP_INTERVAL_MS);
  });

  it('gives back the slots of owners that closed, grants them to the queue, and is due again an interval on', async () => {
    const { slots, sweep, described, plan, told } = sweeping();
    for (let i = 0; i < SETTINGS.max_running; i += 1) slots.acquire(req(`s${i}`), now);
    slots.acquire(req('waiting'), now);
    sweep.due(now);
    now = T0 + ADMISSION_SWEEP_INTERVAL_MS;
    expect(sweep.due(now)).toBe(true);
    plan.closed = ['owner-s0'];
    await sweep.run();
    // At most a batch of owners a sweep.
    expect(described[0]).toHaveLength(ADMISSION_SWEEP_BATCH);
    expect(slots.running.map((holder) => holder.slot)).not.toContain('s0');
    expect(told).toEqual([{ slot: 'waiting', outcome: 'granted' }]);
    expect(slots.counters.reclaimed).toBe(1);
    expect(sweep.due(now)).toBe(false);
    expect(sweep.dueAt(now)).toBe(now + ADMISSION_SWEEP_INTERVAL_MS);
  });

  it('gives nothing back when the activity fails, and tries again an interval later', async () => {
    const warn = jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    const { slots, sweep, plan } = sweeping();
    slots.acquire(req('a'), now);
    sweep.due(now);
    now = T0 + ADMISSION_SWEEP_INTERVAL_MS;
    plan.fail = true;
    plan.closed = ['owner-a'];
    await sweep.run();
    expect(slots.running.map((holder) => holder.slot)).toEqual(['a']);
    expect(warn).toHaveBeenCalledWith('admission sweep failed', { error: 'server unreachable' });
    expect(sweep.due(now)).toBe(false);
    expect(sweep.due(now + ADMISSION_SWEEP_INTERVAL_MS)).toBe(true);
    warn.mockRestore();
  });
});
