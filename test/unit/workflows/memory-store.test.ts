import { MemoryStore } from '../../../workflows/memory/memory';
import type { MemoryChange, MemoryOp } from '../../../contracts/memory';

let n = 0;
const change = (op: MemoryOp, opId = `op-${++n}`): MemoryChange => ({
  op_id: opId,
  op,
  source_run: 'run-1',
  at: '2026-12-07T00:00:00.000Z',
});
const add = (content: string, confidence = 0.8): MemoryOp => ({
  kind: 'add',
  content,
  category: 'context',
  confidence,
});

describe("a user's memory (the memory workflow's state)", () => {
  it('adds, updates and deletes facts, each with its id, source run and times', () => {
    const store = new MemoryStore({ user_id: 'alice', max_facts: 10 });
    expect(store.apply(change(add('Likes tea')), 10)).toEqual({ status: 'added', fact_id: 'fact_1' });
    expect(store.apply(change({ kind: 'update', fact_id: 'fact_1', confidence: 0.9 }), 10)).toEqual({
      status: 'updated',
      fact_id: 'fact_1',
    });
    expect(store.facts[0]).toMatchObject({ content: 'Likes tea', confidence: 0.9, source_run: 'run-1' });
    expect(store.apply(change({ kind: 'delete', fact_id: 'fact_1' }), 10)).toEqual({
      status: 'deleted',
      fact_id: 'fact_1',
    });
    expect(store.apply(change({ kind: 'delete', fact_id: 'fact_1' }), 10)).toEqual({
      error: 'Fact not found: fact_1',
    });
  });

  it('refuses a duplicate, and applies a change sent twice once, across continue-as-new', () => {
    const store = new MemoryStore({ user_id: 'alice', max_facts: 10 });
    const once = change(add('Likes tea'), 'same');
    store.apply(once, 10);
    expect(store.apply(change(add(' likes TEA ')), 10)).toEqual({ error: 'Duplicate fact' });
    const next = new MemoryStore(
      JSON.parse(JSON.stringify(store.carry({ user_id: 'alice', max_facts: 10 }))),
    );
    expect(next.apply(once, 10)).toEqual({ status: 'added', fact_id: 'fact_1' });
    expect(next.facts).toHaveLength(1);
    expect(next.apply(change(add('Likes coffee')), 10)).toEqual({ status: 'added', fact_id: 'fact_2' });
  });

  it('keeps at most max_facts, the least confident going first', () => {
    const store = new MemoryStore({ user_id: 'alice', max_facts: 2 });
    store.apply(change(add('a', 0.9)), 2);
    store.apply(change(add('b', 0.5)), 2);
    store.apply(change(add('c', 0.7)), 2);
    expect(store.facts.map((f) => f.content)).toEqual(['a', 'c']);
    expect(store.apply(change(add('d', 0.1)), 2)).toEqual({
      error: 'Fact was not stored because the configured memory.max_facts capacity policy evicted it',
    });
    expect(store.apply(change({ kind: 'clear' }), 2)).toEqual({ status: 'cleared', count: 2 });
  });
});

describe('middleware mode: conversations queued for the extraction', () => {
  const extraction = {
    model: { name: 'm', provider: 'scripted', model: 'm' },
    fact_confidence_threshold: 0.7,
    debounce_seconds: 30,
  } as unknown as Extract<MemoryOp, { kind: 'remember' }>['extraction'];
  const remember = (runId: string, text: string): MemoryChange => ({
    ...change({ kind: 'remember', messages: [{ role: 'user', content: text }], extraction }),
    source_run: runId,
  });

  it('queues one conversation per run (a run again replaces its own) and carries the queue over', () => {
    const store = new MemoryStore({ user_id: 'alice', max_facts: 10 });
    expect(store.apply(remember('run-1', 'a'), 10)).toEqual({ status: 'queued', pending: 1 });
    expect(store.apply(remember('run-2', 'b'), 10)).toEqual({ status: 'queued', pending: 2 });
    expect(store.apply(remember('run-1', 'c'), 10)).toEqual({ status: 'queued', pending: 2 });
    expect(store.pending.map((c) => [c.run_id, c.messages[0].content])).toEqual([
      ['run-2', 'b'],
      ['run-1', 'c'],
    ]);
    const next = new MemoryStore(store.carry({ user_id: 'alice', max_facts: 10 }));
    expect(next.pending).toEqual(store.pending);
    expect(next.extraction).toEqual(extraction);
  });

  it("applies an extraction's removals and new facts (no duplicate), then drops the conversations it read", () => {
    const store = new MemoryStore({ user_id: 'alice', max_facts: 10 });
    store.apply(change(add('Likes tea')), 10);
    store.apply(change(add('Works on billing')), 10);
    store.apply(remember('run-1', 'a'), 10);
    store.apply(remember('run-2', 'b'), 10);
    store.apply(remember('run-3', 'late'), 10);
    const done = store.applyExtraction(
      {
        add: [
          { content: 'likes TEA', category: 'preference', confidence: 0.9 },
          { content: 'Lives in Lyon', category: 'context', confidence: 0.9 },
        ],
        remove: ['fact_2'],
      },
      2,
      10,
      '2026-12-07T01:00:00.000Z',
    );
    expect(done).toEqual({ added: 1, removed: 1 });
    expect(store.facts.map((f) => [f.id, f.content, f.source_run])).toEqual([
      ['fact_1', 'Likes tea', 'run-1'],
      ['fact_3', 'Lives in Lyon', 'run-2'],
    ]);
    // A conversation queued while the extraction ran waits for the next one.
    expect(store.pending.map((c) => c.run_id)).toEqual(['run-3']);
  });
});
