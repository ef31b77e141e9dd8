import { Alarm } from '../../../workflows/admission/alarm';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');

/** Settles the promise callbacks queued so far (a fired timer's `.then`). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * An alarm whose timers and waits are recorded: `fire(i)` fires the i-th timer started; `ready()` says whether
 * the loop's last wait would end now; `deadline` is what the state says the next deadline is.
 */
function alarm(uncancelled = true) {
  const timers: { ms: number; fire: () => void }[] = [];
  const waits: { ready: () => boolean; timeoutMs?: number }[] = [];
  const state = { deadline: Infinity };
  const clock = new Alarm(uncancelled, {
    sleep: (ms) => new Promise<void>((resolve) => timers.push({ ms, fire: resolve })),
    condition: (ready, timeoutMs) => {
      waits.push({ ready, ...(timeoutMs !== undefined && { timeoutMs }) });
      return new Promise(() => undefined);
    },
    deadline: () => state.deadline,
  });
  const fire = async (index: number) => {
    timers[index].fire();
    await settle();
  };
  const ready = () => waits[waits.length - 1].ready();
  return { clock, timers, waits, state, fire, ready };
}

const nothingElse = () => false;

describe('Alarm: timers left to fire', () => {
  it('wakes the loop at its deadline, with one timer however often it waits for that deadline', async () => {
    const { clock, timers, state, fire, ready } = alarm();
    state.deadline = T0 + 5_000;
    void clock.wait(T0, nothingElse);
    void clock.wait(T0 + 1_000, nothingElse);
    expect(timers.map(({ ms }) => ms)).toEqual([5_000]);
    expect(ready()).toBe(false);
    await fire(0);
    expect(ready()).toBe(true);
    // Looked at, the fired timer wakes it no more; the next deadline gets a timer of its own.
    state.deadline = T0 + 9_000;
    void clock.wait(T0 + 5_000, nothingElse);
    expect(ready()).toBe(false);
    expect(timers.map(({ ms }) => ms)).toEqual([5_000, 4_000]);
  });

  it('starts an earlier timer when the deadline moves earlier, and none when it moves later', async () => {
    const { clock, timers, state, fire, ready } = alarm();
    state.deadline = T0 + 5_000;
    void clock.wait(T0, nothingElse);
    state.deadline = T0 + 2_000;
    void clock.wait(T0, nothingElse);
    state.deadline = T0 + 8_000;
    void clock.wait(T0, nothingElse);
    expect(timers.map(({ ms }) => ms)).toEqual([5_000, 2_000]);
    // The earlier timer fires and wakes the loop; the later deadline gets its timer then.
    await fire(1);
    expect(ready()).toBe(true);
    void clock.wait(T0 + 2_000, nothingElse);
    expect(timers.map(({ ms }) => ms)).toEqual([5_000, 2_000, 6_000]);
    // The timer for T0 + 5 s, no longer the earliest, still fires: it wakes the loop to find nothing due, and
    // the deadline it waits for keeps its one timer.
    await fire(0);
    expect(ready()).toBe(true);
    void clock.wait(T0 + 5_000, nothingElse);
    expect(timers).toHaveLength(3);
  });

  it('sets no timer while nothing is due, and wakes for what the loop waits on besides', () => {
    const { clock, timers, ready } = alarm();
    let answers = 0;
    void clock.wait(T0, () => answers > 0);
    expect(timers).toEqual([]);
    expect(ready()).toBe(false);
    answers = 1;
    expect(ready()).toBe(true);
  });

  it('is woken by a handler that makes the next deadline earlier, and only by such a handler', () => {
    const { clock, state, ready } = alarm();
    state.deadline = T0 + 5_000;
    void clock.wait(T0, nothingElse);
    state.deadline = T0 + 6_000;
    clock.changed(T0);
    expect(ready()).toBe(false);
    state.deadline = T0 + 1_000;
    clock.changed(T0);
    expect(ready()).toBe(true);
    // The next wait starts asleep again.
    void clock.wait(T0, nothingElse);
    expect(ready()).toBe(false);
  });
});

describe('Alarm: timers cancelled with their wait (histories recorded before)', () => {
  it("waits with condition's own timeout, none while nothing is due, and is woken the same way", () => {
    const { clock, timers, waits, state, ready } = alarm(false);
    void clock.wait(T0, nothingElse);
    expect(waits[0].timeoutMs).toBeUndefined();
    state.deadline = T0 + 5_000;
    void clock.wait(T0 + 4_999.5, nothingElse);
    expect(waits[1].timeoutMs).toBe(1);
    void clock.wait(T0, nothingElse);
    expect(waits[2].timeoutMs).toBe(5_000);
    expect(timers).toEqual([]);
    state.deadline = T0 + 1_000;
    clock.changed(T0);
    expect(ready()).toBe(true);
  });
});
