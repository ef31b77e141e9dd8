import { log } from '@temporalio/workflow';
import {
  capacityFullText,
  LEASE_TTL_MS,
  queueTimeoutText,
  type AdmissionAnswer,
  type AdmissionSettings,
  type LeaseReport,
  type SlotRequest,
  type WorkerDeclaration,
} from '../../../contracts/admission';
import type { AdmissionCarry } from '../../../workflows/admission';
import { validLeaseReport } from '../../../workflows/admission/leases';
import { Slots } from '../../../workflows/admission/slots';
import { ADMISSION_SWEEP_BATCH } from '../../../workflows/admission/sweep';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const SETTINGS: AdmissionSettings = {
  max_running: 2,
  max_queued: 64,
  admission_policy: 'queue',
  queue_timeout_seconds: 300,
};

interface Told {
  owner: string;
  answer: AdmissionAnswer;
}

/**
 * A `Slots` whose answers are recorded in order, as the subagents would receive them: a request's immediate
 * answer (what `acquire` returns, the update's result) and the later ones (signals) alike.
 */
function semaphore(settings: Partial<AdmissionSettings> = {}, carry?: AdmissionCarry) {
  const told: Told[] = [];
  const slots = new Slots(
    { settings: { ...SETTINGS, ...settings }, ...(carry && { carry }) },
    (owner, answer) => told.push({ owner, answer }),
  );
  const acquire = slots.acquire.bind(slots);
  slots.acquire = (request, now) => {
    const answer = acquire(request, now);
    if (answer) told.push({ owner: request.owner, answer });
    return answer;
  };
  /** The answers given since the last call. */
  const heard = (): Told[] => told.splice(0, told.length);
  return { slots, told, heard };
}

/** Slot `id`, owned by `owner-<id>` unless said otherwise, in the fairness key `run-1`. */
function req(slot: string, fields: Partial<SlotRequest> = {}): SlotRequest {
  return { slot, owner: `owner-${slot}`, fairness_key: 'run-1', ...fields };
}

const granted = (told: readonly Told[]) =>
  told.filter(({ answer }) => answer.outcome === 'granted').map(({ answer }) => answer.slot);
const runningSlots = (slots: Slots) => slots.running.map((holder) => holder.slot);
const queuedSlots = (slots: Slots) => slots.queued.map((waiting) => waiting.slot);

describe('Slots: granting and queueing', () => {
  it('grants up to max_running at once, then queues with the counts it joined at', () => {
    const { slots, heard } = semaphore({ max_running: 2 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    slots.acquire(req('c'), T0 + 10);
    slots.acquire(req('d'), T0 + 20);
    expect(heard()).toEqual([
      { owner: 'owner-a', answer: { slot: 'a', outcome: 'granted' } },
      { owner: 'owner-b', answer: { slot: 'b', outcome: 'granted' } },
      { owner: 'owner-c', answer: { slot: 'c', outcome: 'queued', running: 2, queued: 1 } },
      { owner: 'owner-d', answer: { slot: 'd', outcome: 'queued', running: 2, queued: 2 } },
    ]);
    const state = slots.state();
    expect(state.running).toEqual([
      { slot: 'a', owner: 'owner-a', fairness_key: 'run-1', since: iso(T0) },
      { slot: 'b', owner: 'owner-b', fairness_key: 'run-1', since: iso(T0) },
    ]);
    expect(state.queued).toEqual([
      { slot: 'c', owner: 'owner-c', fairness_key: 'run-1', queued_at: iso(T0 + 10) },
      { slot: 'd', owner: 'owner-d', fairness_key: 'run-1', queued_at: iso(T0 + 20) },
    ]);
    expect(state.counters).toMatchObject({ granted: 2, queued: 2, rejected: 0 });
  });

  it('grants the next waiter, in arrival order, when a slot is released', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    slots.acquire(req('c'), T0);
    heard();
    slots.release('a', T0 + 1000);
    expect(heard()).toEqual([{ owner: 'owner-b', answer: { slot: 'b', outcome: 'granted' } }]);
    expect(slots.running).toEqual([
      { slot: 'b', owner: 'owner-b', fairness_key: 'run-1', since: iso(T0 + 1000) },
    ]);
    expect(queuedSlots(slots)).toEqual(['c']);
    expect(slots.counters).toMatchObject({ granted: 2, released: 1 });
  });
});

describe('Slots: refusals', () => {
  it('refuses beyond max_running under `reject`, with the exact capacity text', () => {
    const { slots, heard } = semaphore({ max_running: 2, admission_policy: 'reject' });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    heard();
    slots.acquire(req('c'), T0);
    expect(heard()).toEqual([
      {
        owner: 'owner-c',
        answer: {
          slot: 'c',
          outcome: 'refused',
          error: 'Subagent execution capacity is full (2 running, 0 queued)',
        },
      },
    ]);
    expect(capacityFullText(2, 0)).toBe('Subagent execution capacity is full (2 running, 0 queued)');
    expect(runningSlots(slots)).toEqual(['a', 'b']);
    expect(slots.queued).toEqual([]);
    expect(slots.counters).toMatchObject({ granted: 2, queued: 0, rejected: 1 });
  });

  it('refuses a waiter beyond a full queue the same way', () => {
    const { slots, heard } = semaphore({ max_running: 1, max_queued: 1 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    heard();
    slots.acquire(req('c'), T0);
    expect(heard()).toEqual([
      {
        owner: 'owner-c',
        answer: {
          slot: 'c',
          outcome: 'refused',
          error: 'Subagent execution capacity is full (1 running, 1 queued)',
        },
      },
    ]);
    expect(queuedSlots(slots)).toEqual(['b']);
    expect(slots.counters).toMatchObject({ queued: 1, rejected: 1 });
  });

  it('behaves as `reject` under `queue` when max_queued is 0', () => {
    const { slots, heard } = semaphore({ max_running: 1, max_queued: 0 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    expect(heard()).toEqual([
      { owner: 'owner-a', answer: { slot: 'a', outcome: 'granted' } },
      {
        owner: 'owner-b',
        answer: { slot: 'b', outcome: 'refused', error: capacityFullText(1, 0) },
      },
    ]);
    expect(slots.queued).toEqual([]);
  });
});

describe('Slots: fairness between keys', () => {
  it('interleaves a later key with one that flooded the queue', () => {
    const { slots, told } = semaphore({ max_running: 1 });
    const a = Array.from({ length: 20 }, (_, i) => `A${i + 1}`);
    const b = ['B1', 'B2'];
    for (const slot of a) slots.acquire(req(slot, { fairness_key: 'run-A' }), T0);
    for (const slot of b) slots.acquire(req(slot, { fairness_key: 'run-B' }), T0 + 1);
    let now = T0 + 1000;
    while (slots.running.length > 0) slots.release(slots.running[0].slot, (now += 1000));

    const order = granted(told);
    expect(order).toHaveLength(22);
    expect(new Set(order)).toEqual(new Set([...a, ...b]));
    const lastB = Math.max(...b.map((slot) => order.indexOf(slot)));
    const firstOfLast15A = Math.min(...a.slice(-15).map((slot) => order.indexOf(slot)));
    expect(lastB).toBeLessThan(firstOfLast15A);
    // Rotation: A1 took the free slot at once; then the keys alternate while both wait.
    expect(order.slice(0, 6)).toEqual(['A1', 'A2', 'B1', 'A3', 'B2', 'A4']);
    // Each key's own requests keep their arrival order.
    expect(order.filter((slot) => slot.startsWith('A'))).toEqual(a);
  });
});

describe('Slots: queue timeout', () => {
  it('refuses the waiters older than queue_timeout_seconds, with the exact timeout text', () => {
    const { slots, heard } = semaphore({ max_running: 1, queue_timeout_seconds: 5 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    slots.acquire(req('c', { fairness_key: 'run-2' }), T0 + 1000);
    heard();
    expect(slots.nextDeadline(T0)).toBe(T0 + 5000);

    slots.expire(T0 + 4999);
    expect(heard()).toEqual([]);
    expect(queuedSlots(slots)).toEqual(['b', 'c']);

    slots.expire(T0 + 5000);
    expect(heard()).toEqual([
      {
        owner: 'owner-b',
        answer: {
          slot: 'b',
          outcome: 'refused',
          error: 'Timed out after 5 s waiting for a subagent execution slot',
        },
      },
    ]);
    expect(queueTimeoutText(5)).toBe('Timed out after 5 s waiting for a subagent execution slot');
    expect(queuedSlots(slots)).toEqual(['c']);
    expect(slots.rotation).toEqual(['run-2']);
    expect(runningSlots(slots)).toEqual(['a']);
    expect(slots.counters.timed_out).toBe(1);
    expect(slots.nextDeadline(T0 + 5000)).toBe(T0 + 6000);

    slots.expire(T0 + 60_000);
    expect(heard().map(({ answer }) => answer)).toEqual([
      { slot: 'c', outcome: 'refused', error: queueTimeoutText(5) },
    ]);
    expect(slots.nextDeadline(T0 + 60_000)).toBeUndefined();
    // The holder is never timed out: the timeout is for waiting only.
    expect(runningSlots(slots)).toEqual(['a']);
  });

  it('has no deadline while nothing waits', () => {
    const { slots } = semaphore();
    expect(slots.nextDeadline(T0)).toBeUndefined();
    slots.acquire(req('a'), T0);
    expect(slots.nextDeadline(T0)).toBeUndefined();
  });
});

describe('Slots: release and repeated requests', () => {
  it('withdraws a queued request that is released before it was granted', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    slots.acquire(req('c'), T0);
    heard();
    slots.release('b', T0 + 10);
    expect(heard()).toEqual([]);
    expect(queuedSlots(slots)).toEqual(['c']);
    expect(runningSlots(slots)).toEqual(['a']);
    expect(slots.counters.released).toBe(0);
    // The withdrawn request is never granted later.
    slots.release('a', T0 + 20);
    slots.release('c', T0 + 30);
    expect(granted(heard())).toEqual(['c']);
    expect(slots.running).toEqual([]);
  });

  it('changes nothing when an unknown slot is released (release is idempotent)', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    slots.release('a', T0 + 10);
    heard();
    const before = structuredClone(slots.state());
    slots.release('nope', T0 + 20);
    slots.release('a', T0 + 30);
    expect(heard()).toEqual([]);
    expect(slots.state()).toEqual(before);
  });

  it('answers `granted` again to a repeated request for a held slot, without taking a second slot', () => {
    const { slots, heard } = semaphore({ max_running: 2 });
    slots.acquire(req('a'), T0);
    heard();
    slots.acquire(req('a'), T0 + 10);
    expect(heard()).toEqual([{ owner: 'owner-a', answer: { slot: 'a', outcome: 'granted' } }]);
    expect(runningSlots(slots)).toEqual(['a']);
    expect(slots.counters.granted).toBe(1);
    // The second slot is still free.
    slots.acquire(req('b'), T0 + 20);
    expect(granted(heard())).toEqual(['b']);
  });

  it('answers a repeated request for a queued slot with its place, queueing nothing twice', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    heard();
    slots.acquire(req('b'), T0 + 10);
    expect(heard()).toEqual([
      { owner: 'owner-b', answer: { slot: 'b', outcome: 'queued', running: 1, queued: 1 } },
    ]);
    expect(slots.queued).toEqual([{ ...req('b'), queued_at: iso(T0) }]);
    expect(slots.counters.queued).toBe(1);
  });
});

describe('Slots: repeated requests once answers are batched (quietRepeats)', () => {
  it('does not answer a repeat of a held or queued slot: its first answer is on its way', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    slots.quietRepeats = true;
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    heard();
    slots.acquire(req('a'), T0 + 10);
    slots.acquire(req('b'), T0 + 10);
    expect(heard()).toEqual([]);
    expect(runningSlots(slots)).toEqual(['a']);
    expect(queuedSlots(slots)).toEqual(['b']);
    expect(slots.counters).toMatchObject({ granted: 1, queued: 1 });
  });

  it('answers a request asked `again` (after a silence) with where its slot stands, keeping no flag', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    slots.quietRepeats = true;
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    heard();
    slots.acquire(req('a', { again: true }), T0 + 10);
    slots.acquire(req('b', { again: true }), T0 + 10);
    expect(heard()).toEqual([
      { owner: 'owner-a', answer: { slot: 'a', outcome: 'granted' } },
      { owner: 'owner-b', answer: { slot: 'b', outcome: 'queued', running: 1, queued: 1 } },
    ]);
    // A slot it does not know (a reset admission workflow) is asked for as new.
    slots.acquire(req('c', { again: true }), T0 + 20);
    expect(heard()).toEqual([
      { owner: 'owner-c', answer: { slot: 'c', outcome: 'queued', running: 1, queued: 2 } },
    ]);
    expect(slots.queued.map((waiting) => 'again' in waiting)).toEqual([false, false]);
  });
});

describe('Slots: reclaiming the slots of closed owners', () => {
  it('lists every owner holding a slot once (a queued one is found when its grant cannot reach it)', () => {
    const { slots } = semaphore({ max_running: 2 });
    slots.acquire(req('a', { owner: 'X' }), T0);
    slots.acquire(req('b', { owner: 'X' }), T0);
    slots.acquire(req('c', { owner: 'Y' }), T0);
    expect(slots.owners(T0 + 9_999)).toEqual([]);
    expect(slots.owners(T0 + 10_000).sort()).toEqual(['X']);
  });

  it('frees every slot and queue place of a closed owner and grants the next waiter', () => {
    const { slots, heard } = semaphore({ max_running: 2 });
    slots.acquire(req('x1', { owner: 'ownerX' }), T0);
    slots.acquire(req('x2', { owner: 'ownerX' }), T0);
    slots.acquire(req('y1', { owner: 'ownerY' }), T0);
    slots.acquire(req('y2', { owner: 'ownerY' }), T0);
    heard();
    slots.reclaim(['ownerX'], T0 + 10_000);
    expect(heard()).toEqual([
      { owner: 'ownerY', answer: { slot: 'y1', outcome: 'granted' } },
      { owner: 'ownerY', answer: { slot: 'y2', outcome: 'granted' } },
    ]);
    expect(runningSlots(slots)).toEqual(['y1', 'y2']);
    expect(slots.queued).toEqual([]);
    expect(slots.owners(T0 + 20_000)).toEqual(['ownerY']);
    expect(slots.counters).toMatchObject({ reclaimed: 2, released: 0 });
  });

  it('checks at most a batch of owners a sweep, those checked longest ago first', () => {
    const { slots } = semaphore({ max_running: 40 });
    for (let i = 0; i < 40; i++) slots.acquire(req(`s${i}`, { owner: `o${i}` }), T0 + i);
    const first = slots.owners(T0 + 20_000);
    expect(first).toEqual(Array.from({ length: ADMISSION_SWEEP_BATCH }, (_, i) => `o${i}`));
    slots.checkedOpen(first, T0 + 20_000);
    // The next sweep goes on where this one stopped; the owners just found open wait their turn.
    expect(slots.owners(T0 + 30_000)).toEqual(
      Array.from({ length: ADMISSION_SWEEP_BATCH }, (_, i) => `o${i + ADMISSION_SWEEP_BATCH}`),
    );
  });

  it('leaves the slots of owners still open alone', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    slots.acquire(req('a', { owner: 'ownerY' }), T0);
    slots.acquire(req('b', { owner: 'ownerZ' }), T0);
    heard();
    const before = structuredClone(slots.state());
    slots.reclaim(['ownerX'], T0 + 10_000);
    slots.reclaim([], T0 + 10_000);
    expect(heard()).toEqual([]);
    expect(slots.state()).toEqual(before);
  });

  it('never grants a freed slot to a waiting request of the owner being reclaimed', () => {
    const { slots, heard } = semaphore({ max_running: 2 });
    slots.acquire(req('x1', { owner: 'ownerX', fairness_key: 'run-X' }), T0);
    slots.acquire(req('y1', { owner: 'ownerY', fairness_key: 'run-Y' }), T0);
    slots.acquire(req('x2', { owner: 'ownerX', fairness_key: 'run-X' }), T0 + 1);
    slots.acquire(req('y2', { owner: 'ownerY', fairness_key: 'run-Y' }), T0 + 2);
    heard();
    slots.reclaim(['ownerX'], T0 + 10_000);
    expect(heard()).toEqual([{ owner: 'ownerY', answer: { slot: 'y2', outcome: 'granted' } }]);
    expect(runningSlots(slots)).toEqual(['y1', 'y2']);
    expect(slots.queued).toEqual([]);
    expect(slots.owners(T0 + 20_000)).toEqual(['ownerY']);
    expect(slots.counters.reclaimed).toBe(1);
  });
});

describe('Slots: start rate', () => {
  it('holds a second request back until the rate allows it, then grants it', () => {
    const { slots, heard } = semaphore({ max_running: 4, max_starts_per_second: 2 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    expect(heard()).toEqual([
      { owner: 'owner-a', answer: { slot: 'a', outcome: 'granted' } },
      { owner: 'owner-b', answer: { slot: 'b', outcome: 'queued', running: 1, queued: 1 } },
    ]);
    expect(slots.nextDeadline(T0)).toBe(T0 + 500);
    expect(slots.nextDeadline(T0 + 200)).toBe(T0 + 500);

    slots.grantWhatFits(T0 + 499);
    expect(heard()).toEqual([]);
    slots.grantWhatFits(T0 + 500);
    expect(heard()).toEqual([{ owner: 'owner-b', answer: { slot: 'b', outcome: 'granted' } }]);
    expect(slots.running).toEqual([
      { ...req('a'), since: iso(T0) },
      { ...req('b'), since: iso(T0 + 500) },
    ]);
    expect(slots.nextDeadline(T0 + 500)).toBeUndefined();
  });

  it('paces a free slot even under `reject` and with no room in the queue (a short wait, not a refusal)', () => {
    const { slots, heard } = semaphore({
      max_running: 4,
      max_queued: 0,
      admission_policy: 'reject',
      max_starts_per_second: 2,
    });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0 + 100);
    expect(heard().map(({ answer }) => answer.outcome)).toEqual(['granted', 'queued']);
    slots.grantWhatFits(T0 + 500);
    expect(granted(heard())).toEqual(['b']);
  });

  it('reports the queue timeout, not the rate, as the deadline when no slot is free', () => {
    const { slots } = semaphore({ max_running: 1, max_starts_per_second: 2, queue_timeout_seconds: 30 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    expect(slots.nextDeadline(T0)).toBe(T0 + 30_000);
  });
});

describe('Slots: worker declarations', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    // `log` only works inside a workflow; Slots logs when a declaration replaces the settings.
    warn = jest.spyOn(log, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  const declaration = (
    identity: string,
    settings: Partial<AdmissionSettings>,
    at: number,
    left?: true,
  ): WorkerDeclaration => ({
    identity,
    settings: { ...SETTINGS, ...settings },
    at: iso(at),
    ...(left && { left }),
  });

  it('grants queued requests at once when a worker declares a larger max_running', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    for (const slot of ['a', 'b', 'c', 'd']) slots.acquire(req(slot), T0);
    heard();
    slots.declare(declaration('worker-2', { max_running: 3 }, T0 + 10), T0 + 10);
    expect(granted(heard())).toEqual(['b', 'c']);
    expect(runningSlots(slots)).toEqual(['a', 'b', 'c']);
    expect(queuedSlots(slots)).toEqual(['d']);
    expect(slots.state().settings.max_running).toBe(3);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('lets the running finish when max_running is lowered', () => {
    const { slots, heard } = semaphore({ max_running: 3 });
    for (const slot of ['a', 'b', 'c', 'd']) slots.acquire(req(slot), T0);
    heard();
    slots.declare(declaration('worker-2', { max_running: 1 }, T0 + 10), T0 + 10);
    expect(runningSlots(slots)).toEqual(['a', 'b', 'c']);
    slots.release('a', T0 + 20);
    slots.release('b', T0 + 30);
    expect(heard()).toEqual([]);
    slots.release('c', T0 + 40);
    expect(granted(heard())).toEqual(['d']);
  });

  it('keeps the settings in force when a worker declares that it left', () => {
    const { slots, heard } = semaphore({ max_running: 1 });
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    heard();
    slots.declare(declaration('worker-1', { max_running: 5 }, T0 + 10, true), T0 + 10);
    expect(slots.state().settings).toEqual({ ...SETTINGS, max_running: 1 });
    expect(heard()).toEqual([]);
    expect(queuedSlots(slots)).toEqual(['b']);
    expect(slots.workers).toEqual([declaration('worker-1', { max_running: 5 }, T0 + 10, true)]);
    expect(warn).not.toHaveBeenCalled();
  });

  it('keeps the newest declaration per worker identity, the newest last', () => {
    const { slots } = semaphore();
    const w1 = declaration('worker-1', { max_running: 2 }, T0);
    const w2 = declaration('worker-2', { max_running: 4 }, T0 + 1);
    const w1again = declaration('worker-1', { max_running: 6 }, T0 + 2);
    const w2left = declaration('worker-2', { max_running: 4 }, T0 + 3, true);
    slots.declare(w1, T0);
    slots.declare(w2, T0 + 1);
    slots.declare(w1again, T0 + 2);
    expect(slots.state().workers).toEqual([w2, w1again]);
    expect(slots.state().settings.max_running).toBe(6);
    slots.declare(w2left, T0 + 3);
    expect(slots.state().workers).toEqual([w1again, w2left]);
    expect(slots.state().settings.max_running).toBe(6);
  });

  it('does not warn when a declaration repeats the settings in force', () => {
    const { slots } = semaphore();
    slots.declare(declaration('worker-1', {}, T0), T0);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('Slots: continue-as-new', () => {
  /** The same operations on two semaphores give the same answers. */
  function drive(slots: Slots, now: number): void {
    slots.release(slots.running[0].slot, now);
    slots.acquire(req('late', { fairness_key: 'run-C' }), now + 1);
    slots.release(slots.running[0].slot, now + 600);
    slots.release(slots.running[0].slot, now + 1200);
    slots.expire(now + 300_000);
  }

  it('keeps the holders, the queue, the rotation, the counters, the workers and the start rate', () => {
    const settings = { max_running: 2, max_starts_per_second: 2 };
    const first = semaphore(settings);
    const { slots } = first;
    slots.acquire(req('a1', { fairness_key: 'run-A' }), T0);
    for (const slot of ['a2', 'a3', 'a4']) slots.acquire(req(slot, { fairness_key: 'run-A' }), T0 + 1000);
    for (const slot of ['b1', 'b2']) slots.acquire(req(slot, { fairness_key: 'run-B' }), T0 + 1000);
    slots.release('a1', T0 + 2000);
    slots.acquire(req('a5', { fairness_key: 'run-A' }), T0 + 2000);
    // The same settings again: no warning (`log` only works inside a workflow).
    slots.declare({ identity: 'worker-1', settings: { ...slots.settings }, at: iso(T0) }, T0 + 2000);
    expect(granted(first.heard())).toEqual(['a1', 'a2', 'a3']);
    // run-A was just served: run-B is next, although run-A's a4 has waited longer than b1.
    expect(slots.rotation).toEqual(['run-B', 'run-A']);

    // What continueAsNew sends: its input goes through the payload converter (JSON).
    const input = JSON.parse(JSON.stringify({ settings: slots.settings, carry: slots.carry() }));
    const second = semaphore(input.settings, input.carry);
    expect(second.slots.state()).toEqual(slots.state());
    expect(second.slots.state().workers).toHaveLength(1);
    expect(second.slots.state().counters).toMatchObject({ granted: 3, queued: 5 });
    expect(second.slots.rotation).toEqual(slots.rotation);
    expect(second.slots.lastGrantMs).toBe(T0 + 2000);
    expect(second.slots.nextDeadline(T0 + 2000)).toBe(slots.nextDeadline(T0 + 2000));

    drive(slots, T0 + 2100);
    drive(second.slots, T0 + 2100);
    const continued = second.heard();
    expect(continued).toEqual(first.heard());
    // The rotation carried on (b1 before a4) and so did the start rate (nothing granted at T0 + 2100).
    expect(granted(continued)).toEqual(['b1', 'a4']);
    expect(second.slots.state()).toEqual(slots.state());
  });

  it('carries nothing optional it does not have', () => {
    const { slots } = semaphore();
    expect(slots.carry()).toEqual({
      running: [],
      queued: [],
      rotation: [],
      counters: { granted: 0, queued: 0, rejected: 0, timed_out: 0, released: 0, reclaimed: 0 },
      workers: [],
    });
  });
});

describe('Slots: leases of spare slots', () => {
  const report = (fields: Partial<LeaseReport> & { seq: number }): LeaseReport => ({
    lease: 'w1/subagents/abc',
    identity: 'w1',
    ack: fields.seq - 1,
    assigned: [],
    want: 4,
    ...fields,
  });

  it('lends spare slots that count against max_running, and turns a reported grant into a held slot', () => {
    const { slots, heard } = semaphore({ max_running: 5 });
    const first = slots.report(report({ seq: 1 }), T0);
    expect(first.spare).toHaveLength(4);
    // One slot is left: a request by signal gets it, the next one waits.
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    expect(heard().map(({ answer }) => answer.outcome)).toEqual(['granted', 'queued']);
    // The worker granted one of its spare slots to `c`: it is held like any other.
    const second = slots.report(
      report({ seq: 2, assigned: [{ token: first.spare[0], request: req('c') }] }),
      T0,
    );
    expect(runningSlots(slots)).toEqual(['a', 'c']);
    // A request waits: the lease lends nothing and takes back its spare slots, free once acknowledged.
    expect(second.spare).toEqual([]);
    expect(queuedSlots(slots)).toEqual(['b']);
    slots.report(report({ seq: 3, ack: 2 }), T0);
    expect(granted(heard())).toEqual(['b']);
    expect(runningSlots(slots)).toEqual(['a', 'c', 'b']);
  });

  it('keeps a slot taken back until the worker acknowledges the reply, and honours grants made meanwhile', () => {
    const { slots, heard } = semaphore({ max_running: 4 });
    const lent = slots.report(report({ seq: 1, want: 3 }), T0).spare;
    slots.acquire(req('a'), T0);
    slots.acquire(req('b'), T0);
    expect(heard().map(({ answer }) => answer.outcome)).toEqual(['granted', 'queued']);
    // The reply to report 2 takes the spare back; the worker had not applied it and granted one meanwhile
    // (reported with ack 1): only the two left are freed, at the report that acknowledges reply 2.
    expect(slots.report(report({ seq: 2, ack: 1 }), T0).spare).toEqual([]);
    expect(granted(heard())).toEqual([]);
    slots.report(report({ seq: 3, ack: 1, assigned: [{ token: lent[0], request: req('c') }] }), T0);
    expect(granted(heard())).toEqual([]);
    expect(runningSlots(slots)).toEqual(['a', 'c']);
    // Freed, they go to the queue first; the one slot left is lent again, as a new token.
    const last = slots.report(report({ seq: 4, ack: 3 }), T0).spare;
    expect(granted(heard())).toEqual(['b']);
    expect(last).toHaveLength(1);
    expect(lent).not.toContain(last[0]);
    expect(slots.leases[0].tokens).toEqual(last);
  });

  it('takes nothing twice: a slot granted twice (a retried task) holds one slot, the second token freed', () => {
    const { slots } = semaphore({ max_running: 8 });
    const [t1, t2] = slots.report(report({ seq: 1 }), T0).spare;
    const reply = slots.report(
      report({
        seq: 2,
        assigned: [
          { token: t1, request: req('a') },
          { token: t2, request: req('a') },
        ],
      }),
      T0,
    );
    expect(runningSlots(slots)).toEqual(['a']);
    // Topped up again to what it wants, within max_running: 1 held + 4 spare.
    expect(reply.spare).toHaveLength(4);
    expect(slots.state().leases?.[0].tokens).toHaveLength(4);
  });

  it('gives the spare slots of a lease not renewed within its TTL to the queue', () => {
    // `log` only works inside a workflow; Slots logs a lease it gives up.
    const warn = jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    const { slots, heard } = semaphore({ max_running: 3 });
    slots.report(report({ seq: 1, want: 3 }), T0);
    slots.acquire(req('a'), T0);
    expect(heard().map(({ answer }) => answer.outcome)).toEqual(['queued']);
    expect(slots.nextDeadline(T0)).toBe(T0 + LEASE_TTL_MS);
    slots.expireLeases(T0 + LEASE_TTL_MS - 1);
    expect(granted(heard())).toEqual([]);
    slots.expireLeases(T0 + LEASE_TTL_MS);
    expect(granted(heard())).toEqual(['a']);
    expect(slots.leases).toEqual([]);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  it('lends nothing under the reject policy or a start rate, and forgets a lease that wants none', () => {
    for (const settings of [{ admission_policy: 'reject' as const }, { max_starts_per_second: 5 }]) {
      const { slots } = semaphore({ max_running: 8, ...settings });
      expect(slots.report(report({ seq: 1 }), T0).spare).toEqual([]);
    }
    const { slots } = semaphore({ max_running: 8 });
    slots.report(report({ seq: 1 }), T0);
    slots.report(report({ seq: 2, want: 0 }), T0);
    slots.report(report({ seq: 3, want: 0 }), T0);
    expect(slots.leases).toEqual([]);
  });

  it('carries its leases over continue-as-new', () => {
    const { slots } = semaphore({ max_running: 8 });
    const spare = slots.report(report({ seq: 1 }), T0).spare;
    const next = semaphore({ max_running: 8 }, slots.carry());
    next.slots.report(report({ seq: 2, assigned: [{ token: spare[0], request: req('a') }] }), T0);
    expect(runningSlots(next.slots)).toEqual(['a']);
    expect(next.slots.leases[0].tokens).toHaveLength(4);
  });
});

describe('validLeaseReport', () => {
  it('accepts a report a worker sends and refuses one it cannot read', () => {
    const good: LeaseReport = {
      lease: 'w1/runs/abc',
      identity: 'w1',
      seq: 2,
      ack: 1,
      assigned: [{ token: 'w1/runs/abc#1', request: req('a') }],
      released: ['b'],
      want: 4,
    };
    expect(() => validLeaseReport(good)).not.toThrow();
    for (const bad of [
      { ...good, want: -1 },
      { ...good, seq: 1.5 },
      { ...good, assigned: [{ token: 't' }] },
      { ...good, released: [3] },
      { ...good, lease: '' },
      null,
    ]) {
      expect(() => validLeaseReport(bad as unknown as LeaseReport)).toThrow('a lease report it cannot read');
    }
  });
});
