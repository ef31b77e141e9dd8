import { log } from '@temporalio/workflow';
import {
  ADMISSION_ANSWERS_PER_DELIVERY,
  type AdmissionAnswer,
  type AdmissionDelivery,
} from '../../../contracts/admission';
import { DELIVERY_RETRY_MS, Outbox } from '../../../workflows/admission/outbox';

const granted = (slot: string): AdmissionAnswer => ({ slot, outcome: 'granted' });
const queued = (slot: string): AdmissionAnswer => ({ slot, outcome: 'queued', running: 1, queued: 1 });
const refused = (slot: string): AdmissionAnswer => ({ slot, outcome: 'refused', error: 'full' });

/** Settles the promise callbacks queued so far (a signal's `.catch`, its `.finally`). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * An outbox whose effects are recorded: each delivery (`lost` names the slots whose owners cannot be told, or
 * `fail` makes it throw), each signal, each pause, each answer given back.
 */
function outbox(batched = true) {
  const deliveries: AdmissionDelivery[][] = [];
  const signals: AdmissionDelivery[] = [];
  const pauses: number[] = [];
  const givenBack: AdmissionAnswer[] = [];
  const plan = { lost: [] as string[], fail: false, unreachable: new Set<string>() };
  const box = new Outbox(batched, {
    send: async (batch) => {
      deliveries.push(batch);
      if (plan.fail) throw new Error('server unreachable');
      return plan.lost;
    },
    signal: async (owner, answer) => {
      signals.push({ owner, answer });
      if (plan.unreachable.has(owner)) throw new Error(`${owner} has closed`);
    },
    sleep: async (ms) => {
      pauses.push(ms);
    },
    undelivered: (answer) => givenBack.push(answer),
  });
  return { box, deliveries, signals, pauses, givenBack, plan };
}

describe('Outbox: answers sent many at a time', () => {
  it('delivers a grant once, in place of the `queued` answer not yet sent for its slot', async () => {
    const { box, deliveries } = outbox();
    box.tell('owner-a', queued('a'));
    box.tell('owner-b', granted('b'));
    box.tell('owner-a', granted('a'));
    expect(box.size).toBe(2);
    await box.deliver();
    // The newer answer for `a` went to the back: answers go out in the order they were last decided.
    expect(deliveries).toEqual([
      [
        { owner: 'owner-b', answer: granted('b') },
        { owner: 'owner-a', answer: granted('a') },
      ],
    ]);
    expect(box.size).toBe(0);
    expect(box.unsent()).toEqual([]);
  });

  it('sends at most ADMISSION_ANSWERS_PER_DELIVERY answers a delivery, the oldest first', async () => {
    const { box, deliveries } = outbox();
    const total = ADMISSION_ANSWERS_PER_DELIVERY + 3;
    for (let i = 0; i < total; i += 1) box.tell(`owner-${i}`, granted(`s${i}`));
    await box.deliver();
    expect(deliveries[0]).toHaveLength(ADMISSION_ANSWERS_PER_DELIVERY);
    expect(deliveries[0][0].answer.slot).toBe('s0');
    expect(box.size).toBe(3);
    await box.deliver();
    expect(deliveries[1].map(({ answer }) => answer.slot)).toEqual([
      `s${total - 3}`,
      `s${total - 2}`,
      `s${total - 1}`,
    ]);
  });

  it('gives back the slot or queue place of an owner that could not be told, never for a refusal', async () => {
    const { box, givenBack, plan } = outbox();
    box.tell('owner-a', granted('a'));
    box.tell('owner-b', queued('b'));
    box.tell('owner-c', refused('c'));
    box.tell('owner-d', granted('d'));
    plan.lost = ['a', 'b', 'c'];
    await box.deliver();
    expect(givenBack).toEqual([granted('a'), queued('b')]);
  });

  it('keeps the answers of a delivery that failed, behind newer ones for their slots, and pauses', async () => {
    const warn = jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    const { box, deliveries, pauses, givenBack, plan } = outbox();
    box.tell('owner-a', queued('a'));
    box.tell('owner-b', granted('b'));
    plan.fail = true;
    const delivering = box.deliver();
    // Decided while the delivery was in flight: newer than the `queued` answer being sent.
    box.tell('owner-a', granted('a'));
    await delivering;
    expect(pauses).toEqual([DELIVERY_RETRY_MS]);
    // Some answers may have arrived: nothing is given back on a guess.
    expect(givenBack).toEqual([]);
    plan.fail = false;
    await box.deliver();
    expect(deliveries[1]).toEqual([
      { owner: 'owner-b', answer: granted('b') },
      { owner: 'owner-a', answer: granted('a') },
    ]);
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
  });

  it('hands the answers not yet sent to the next execution', () => {
    const { box, deliveries } = outbox();
    box.tell('owner-a', queued('a'));
    box.tell('owner-a', granted('a'));
    expect(box.unsent()).toEqual([{ owner: 'owner-a', answer: granted('a') }]);
    expect(deliveries).toEqual([]);
  });
});

describe('Outbox: one signal per answer (histories recorded before batching)', () => {
  it('signals each answer at once and settles when every signal is done', async () => {
    const { box, signals, deliveries } = outbox(false);
    box.tell('owner-a', queued('a'));
    box.tell('owner-a', granted('a'));
    expect(signals.map(({ answer }) => answer.outcome)).toEqual(['queued', 'granted']);
    expect(box.size).toBe(0);
    expect(box.settled).toBe(false);
    await settle();
    expect(box.settled).toBe(true);
    expect(deliveries).toEqual([]);
  });

  it('gives back the slot of an owner a signal cannot reach, never for a refusal', async () => {
    const { box, givenBack, plan } = outbox(false);
    plan.unreachable.add('owner-gone');
    box.tell('owner-gone', granted('a'));
    box.tell('owner-gone', refused('b'));
    box.tell('owner-here', granted('c'));
    await settle();
    expect(givenBack).toEqual([granted('a')]);
    expect(box.settled).toBe(true);
  });

  it('keeps the answers decided while it drains for the next execution', () => {
    const { box, signals } = outbox(false);
    expect(box.unsent()).toEqual([]);
    box.defer();
    box.tell('owner-a', granted('a'));
    expect(signals).toEqual([]);
    expect(box.unsent()).toEqual([{ owner: 'owner-a', answer: granted('a') }]);
  });
});
