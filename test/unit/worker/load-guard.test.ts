import type { SlotPermit } from '@temporalio/worker';
import { GuardedSlotSupplier } from '../../../worker/load-guard';

/** A loop whose busy state the test sets; `readings(n)` resolves once the supplier has asked `n` times in all. */
function loop(initiallyBusy = false) {
  const state = { busy: initiallyBusy };
  let asked = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const reading = {
    busy: () => {
      asked += 1;
      for (const waiter of waiters.filter((w) => asked >= w.n)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      return state.busy;
    },
  };
  const readings = (n: number) =>
    asked >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }));
  return { state, reading, asked: () => asked, readings };
}

const ctx = {} as never;
const signal = () => new AbortController().signal;

/** Reserves a slot and puts a task in it, as the SDK does when a poll brings one. */
async function take(slots: GuardedSlotSupplier<never>): Promise<SlotPermit> {
  const permit = await slots.reserveSlot(ctx, signal());
  slots.markSlotUsed({ permit } as never);
  return permit;
}

describe('GuardedSlotSupplier', () => {
  it('hands out slots up to the maximum while the event loop keeps up', async () => {
    const { reading } = loop();
    const slots = new GuardedSlotSupplier<never>(reading, { minimum: 1, maximum: 3 });
    for (let i = 0; i < 3; i += 1) await take(slots);
    expect(slots.inUse).toBe(3);
    expect(slots.tryReserveSlot()).toBeNull();
  });

  it('past the minimum of tasks at work, holds new slots back while the loop is busy, and hands them out once it is not', async () => {
    const { state, reading, asked, readings } = loop(true);
    const slots = new GuardedSlotSupplier<never>(reading, { minimum: 2, maximum: 10 });
    await take(slots);
    await take(slots);
    expect(slots.tryReserveSlot()).toBeNull();
    let third = false;
    const waiting = slots.reserveSlot(ctx, signal()).then(() => (third = true));
    // Not a wait of so many ms: the waiting reservation has looked at the busy loop twice more (on its own
    // timer) and still holds back, however slowly this host runs its timers (a slot handed out ends the wait).
    await Promise.race([readings(asked() + 2), waiting]);
    // Whatever that last look decided has then run its course (a slot handed out would have set `third`).
    await new Promise((resolve) => setImmediate(resolve));
    expect(third).toBe(false);
    state.busy = false;
    await waiting;
    expect(slots.inUse).toBe(3);
  });

  it('does not count idle pollers’ permits against the minimum: a busy loop still lets a task in', async () => {
    const { reading } = loop(true);
    const slots = new GuardedSlotSupplier<never>(reading, { minimum: 1, maximum: 10 });
    // Three pollers wait for work, each with its permit, none of them used.
    for (let i = 0; i < 3; i += 1) await slots.reserveSlot(ctx, signal());
    expect(slots.tryReserveSlot()).not.toBeNull();
  });

  it('wakes a waiting reservation when a task’s slot is released below the minimum', async () => {
    const { reading } = loop(true);
    const slots = new GuardedSlotSupplier<never>(reading, { minimum: 1, maximum: 10 });
    const permit = await take(slots);
    const waiting = slots.reserveSlot(ctx, signal());
    slots.releaseSlot({ permit } as never);
    await waiting;
    expect(slots.inUse).toBe(1);
  });

  it('rejects an aborted reservation with the signal’s reason (as the SDK expects) and takes no slot', async () => {
    const { reading } = loop(true);
    const slots = new GuardedSlotSupplier<never>(reading, { minimum: 0, maximum: 10 });
    const abort = new AbortController();
    const waiting = slots.reserveSlot(ctx, abort.signal);
    const reason = new Error('no longer needed');
    abort.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(slots.inUse).toBe(0);
  });
});
