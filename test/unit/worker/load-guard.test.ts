import { GuardedSlotSupplier } from '../../../worker/load-guard';

/** A loop whose busy state the test sets. */
function loop(initiallyBusy = false) {
  const state = { busy: initiallyBusy };
  return { state, reading: { busy: () => state.busy } };
}

const ctx = {} as never;

describe('GuardedSlotSupplier', () => {
  it('hands out slots up to the maximum while the event loop keeps up', async () => {
    const { reading } = loop();
    const slots = new GuardedSlotSupplier(reading, { minimum: 1, maximum: 3 });
    for (let i = 0; i < 3; i += 1) await slots.reserveSlot(ctx, new AbortController().signal);
    expect(slots.inUse).toBe(3);
    expect(slots.tryReserveSlot()).toBeNull();
  });

  it('past the minimum, holds new slots back while the loop is busy, and hands them out once it is not', async () => {
    const { state, reading } = loop(true);
    const slots = new GuardedSlotSupplier(reading, { minimum: 2, maximum: 10 });
    await slots.reserveSlot(ctx, new AbortController().signal);
    await slots.reserveSlot(ctx, new AbortController().signal);
    expect(slots.tryReserveSlot()).toBeNull();
    let third = false;
    const waiting = slots.reserveSlot(ctx, new AbortController().signal).then(() => (third = true));
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(third).toBe(false);
    state.busy = false;
    await waiting;
    expect(slots.inUse).toBe(3);
  });

  it('wakes a waiting reservation when a slot is released below the minimum', async () => {
    const { reading } = loop(true);
    const slots = new GuardedSlotSupplier(reading, { minimum: 1, maximum: 10 });
    await slots.reserveSlot(ctx, new AbortController().signal);
    const waiting = slots.reserveSlot(ctx, new AbortController().signal);
    slots.releaseSlot();
    await waiting;
    expect(slots.inUse).toBe(1);
  });

  it('rejects an aborted reservation with the signal’s reason (as the SDK expects) and takes no slot', async () => {
    const { reading } = loop(true);
    const slots = new GuardedSlotSupplier(reading, { minimum: 0, maximum: 10 });
    const abort = new AbortController();
    const waiting = slots.reserveSlot(ctx, abort.signal);
    const reason = new Error('no longer needed');
    abort.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(slots.inUse).toBe(0);
  });
});
