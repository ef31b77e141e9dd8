import type { BatchCarry, BatchInput, BatchLimits } from '../../../contracts/batch';
import { BatchScheduler, type LiveStep } from '../../../workflows/batch/scheduler';

const T0 = Date.parse('2025-01-01T00:00:00.000Z');
const BATCH_ID = 'batch-1';
const ASK_AGAIN_MS = 60_000;

const LIMITS: BatchLimits = {
  max_running_items: 2,
  max_live_items: 3,
  max_attempts: 2,
  retry_backoff_seconds: 5,
};

function scheduler(count: number, limits: Partial<BatchLimits> = {}, carry?: BatchCarry) {
  const input: Pick<BatchInput, 'items' | 'limits' | 'carry' | 'description' | 'subagent_type'> = {
    items: Array.from({ length: count }, (_, i) => ({ key: `k${i}`, prompt: `item ${i}` })),
    limits: { ...LIMITS, ...limits },
    description: 'a batch',
    subagent_type: 'general-purpose',
    ...(carry && { carry }),
  };
  return new BatchScheduler(input, {
    batchId: BATCH_ID,
    startedAt: new Date(T0).toISOString(),
    askAgainMs: ASK_AGAIN_MS,
  });
}

/** Every slot asked for now, as the workflow asks: while there is room. */
function askAll(batch: BatchScheduler, now = T0): string[] {
  const slots: string[] = [];
  for (let next = batch.askNext(now); next; next = batch.askNext(now)) slots.push(next.slot);
  return slots;
}

/** The steps as the workflow takes them: each `run` starts its child before the next step is decided. */
function takeSteps(batch: BatchScheduler, now = T0): LiveStep[] {
  const taken: LiveStep[] = [];
  for (const step of batch.steps(now)) {
    if (step.kind === 'run') batch.start(step.entry);
    taken.push(step);
  }
  return taken;
}

function grant(batch: BatchScheduler, slot: string, now = T0): void {
  batch.answered({ slot, outcome: 'granted' }, now);
}

/** The first item asked for, granted and started; its slot. */
function startFirst(batch: BatchScheduler, now = T0): string {
  const [slot] = askAll(batch, now);
  grant(batch, slot, now);
  takeSteps(batch, now);
  return slot;
}

/** Runs item `i`'s live attempt to its end with `status`. */
function endAttempt(batch: BatchScheduler, i: number, status: 'completed' | 'failed', now = T0): void {
  const entry = batch.live.get(i)!;
  batch.childClosed(i, entry);
  batch.settle(i, entry.attempt, { status, ...(status === 'failed' && { error: 'it broke' }) }, now);
}

describe('BatchScheduler', () => {
  it('keeps at most max_live_items live, in item order, each slot named for its attempt', () => {
    const batch = scheduler(5);
    expect(askAll(batch)).toEqual(['batch-1/item/k0/1', 'batch-1/item/k1/1', 'batch-1/item/k2/1']);
    expect(batch.live.size).toBe(3);
    expect(batch.status().counts).toMatchObject({ pending: 2, waiting: 3 });
  });

  it('runs at most max_running_items granted items at once', () => {
    const batch = scheduler(5);
    for (const slot of askAll(batch)) grant(batch, slot);
    const steps = takeSteps(batch);
    expect(steps.map((step) => step.kind)).toEqual(['run', 'run']);
    expect(batch.running).toBe(2);
    expect(batch.counters.attempts).toBe(2);
    // An attempt whose child closed frees its slot while its answer is checked: the third may run.
    batch.childClosed(0, batch.live.get(0)!);
    expect(takeSteps(batch).map((step) => step.kind)).toEqual(['run']);
  });

  it('puts a refused item back without spending an attempt, and asks again after the backoff', () => {
    const batch = scheduler(1);
    const [slot] = askAll(batch);
    batch.answered({ slot, outcome: 'refused', error: 'capacity full' }, T0);
    expect(batch.live.size).toBe(0);
    expect(batch.counters).toMatchObject({ requeued: 1, attempts: 0 });
    expect(batch.records[0]).toMatchObject({
      state: 'pending',
      attempts: 0,
      refusals: 1,
      not_before: T0 + 5000,
    });
    expect(batch.nextDeadline(T0)).toEqual({ at: T0 + 5000, what: 'backoff: item k0' });
    batch.releaseDue(T0 + 4999);
    expect(askAll(batch, T0 + 4999)).toEqual([]);
    batch.releaseDue(T0 + 5000);
    // The same attempt's slot: a refusal spent nothing.
    expect(askAll(batch, T0 + 5000)).toEqual(['batch-1/item/k0/1']);
  });

  it('treats an admission it could not reach as a refusal', () => {
    const batch = scheduler(1);
    askAll(batch);
    batch.unavailable(0, T0);
    expect(batch.counters.requeued).toBe(1);
    expect(batch.records[0]).toMatchObject({ attempts: 0, not_before: T0 + 5000 });
  });

  it('retries a failed attempt after a doubling backoff, never while the attempt is live, and fails it at max_attempts', () => {
    const batch = scheduler(1, { max_attempts: 3 });
    let at = T0;
    for (let attempt = 1; attempt <= 3; attempt++) {
      batch.releaseDue(at);
      const [slot] = askAll(batch, at);
      expect(slot).toBe(`batch-1/item/k0/${attempt}`);
      grant(batch, slot, at);
      takeSteps(batch, at);
      batch.childClosed(0, batch.live.get(0)!);
      // Checking its answer: still live, so no second attempt can be asked for.
      expect(askAll(batch, at)).toEqual([]);
      batch.settle(0, attempt, { status: 'failed', error: 'it broke' }, at);
      if (attempt < 3) {
        expect(batch.records[0].not_before).toBe(at + 5000 * 2 ** (attempt - 1));
        at = batch.records[0].not_before!;
      }
    }
    expect(batch.records[0]).toMatchObject({ state: 'failed', attempts: 3, error: 'it broke' });
    expect(batch.counters).toMatchObject({ failed: 1, attempts: 3 });
    expect(batch.done).toBe(true);
  });

  it('records a completed item without the error of an earlier attempt', () => {
    const batch = scheduler(1);
    startFirst(batch);
    endAttempt(batch, 0, 'failed');
    batch.releaseDue(T0 + 5000);
    startFirst(batch, T0 + 5000);
    endAttempt(batch, 0, 'completed', T0 + 5000);
    expect(batch.records[0]).toEqual({
      state: 'completed',
      attempts: 2,
      not_before: undefined,
      error: undefined,
    });
    expect(batch.result('completed').counts).toMatchObject({ completed: 1, failed: 0 });
  });

  it('fails an item whose answer did not meet its criteria, and keeps a long error brief', () => {
    const batch = scheduler(1, { max_attempts: 1 });
    startFirst(batch);
    batch.childClosed(0, batch.live.get(0)!);
    batch.settle(0, 1, { status: 'completed', accepted: false, error: 'x'.repeat(400) }, T0);
    expect(batch.records[0]).toMatchObject({ state: 'failed', accepted: false });
    expect(batch.records[0].error).toHaveLength(300);
  });

  it('ignores a second grant for an attempt that has started', () => {
    const batch = scheduler(1);
    const slot = startFirst(batch);
    batch.changed = false;
    grant(batch, slot);
    expect(batch.changed).toBe(false);
    expect(takeSteps(batch)).toEqual([]);
    expect(batch.counters.attempts).toBe(1);
  });

  it('asks again for a request queued without an answer for askAgainMs', () => {
    const batch = scheduler(1);
    const [slot] = askAll(batch);
    batch.sent(0);
    expect(batch.nextDeadline(T0)).toEqual({
      at: T0 + ASK_AGAIN_MS,
      what: 'admission: ask again for item k0',
    });
    expect(takeSteps(batch, T0 + ASK_AGAIN_MS - 1)).toEqual([]);
    expect(takeSteps(batch, T0 + ASK_AGAIN_MS)).toEqual([{ kind: 'ask_again', item: 0, slot }]);
    expect(batch.nextDeadline(T0 + ASK_AGAIN_MS)?.at).toBe(T0 + 2 * ASK_AGAIN_MS);
  });

  it('drains before continuing as new: waiting slots go back, running attempts finish, nothing new starts', () => {
    const batch = scheduler(4);
    const [s0, s1] = askAll(batch);
    grant(batch, s0);
    takeSteps(batch);
    grant(batch, s1);
    // k2's request was sent and waits in the queue; k3 has no room.
    batch.sent(2);
    batch.draining = true;
    expect(askAll(batch)).toEqual([]);
    expect(takeSteps(batch)).toEqual([
      { kind: 'give_back', slot: s1 },
      { kind: 'give_back', slot: 'batch-1/item/k2/1' },
    ]);
    expect(batch.drained).toBe(false);
    endAttempt(batch, 0, 'completed');
    expect(batch.drained).toBe(true);
    const carry = batch.carry(1);
    expect(carry.records.map((record) => record.state)).toEqual([
      'completed',
      'pending',
      'pending',
      'pending',
    ]);
    expect(carry).toMatchObject({ continued: 1, started_at: new Date(T0).toISOString() });

    // The next execution asks for the items given back first, then the rest, in order.
    const next = scheduler(4, {}, carry);
    expect(next.terminal).toBe(1);
    expect(askAll(next)).toEqual(['batch-1/item/k1/1', 'batch-1/item/k2/1', 'batch-1/item/k3/1']);
  });

  it('carries a backing-off item across continue-as-new with its deadline', () => {
    const batch = scheduler(2);
    const [slot] = askAll(batch);
    batch.answered({ slot, outcome: 'refused', error: 'full' }, T0);
    const next = scheduler(2, {}, batch.carry(1));
    expect(askAll(next)).toEqual(['batch-1/item/k1/1']);
    expect(next.nextDeadline(T0)?.at).toBe(T0 + 5000);
    next.releaseDue(T0 + 5000);
    expect(askAll(next, T0 + 5000)).toEqual(['batch-1/item/k0/1']);
  });

  it('cancels the items never started and counts them', () => {
    const batch = scheduler(3);
    startFirst(batch);
    batch.childClosed(0, batch.live.get(0)!);
    batch.cancel(0, 'Batch cancelled');
    for (const [i] of [...batch.live]) batch.leave(i);
    batch.cancelPending();
    expect(batch.records.map((record) => record.state)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(batch.counters.cancelled).toBe(3);
    expect(batch.done).toBe(true);
  });

  it('answers the status query by pages, live items shown waiting or running', () => {
    const batch = scheduler(5);
    startFirst(batch);
    const status = batch.status({ offset: 0, limit: 2 });
    expect(status).toMatchObject({
      batch_id: BATCH_ID,
      status: 'running',
      total: 5,
      counts: { pending: 2, waiting: 2, running: 1, completed: 0 },
    });
    expect(status.items).toEqual([
      { key: 'k0', state: 'running', attempts: 1, workflow_id: 'batch-1/item/k0/1' },
      { key: 'k1', state: 'waiting', attempts: 0 },
    ]);
    batch.ended = 'completed';
    expect(batch.status({ offset: 4 }).items.map((item) => item.key)).toEqual(['k4']);
    expect(batch.status().status).toBe('completed');
  });

  it('says where the batch stands in one line', () => {
    const batch = scheduler(4);
    startFirst(batch);
    expect(batch.progressLine()).toBe(
      '**general-purpose** batch: 0 of 4 done (0 completed, 0 failed) · 1 running · 2 waiting · 1 pending · ' +
        '1 attempts, 0 requeued',
    );
  });
});
