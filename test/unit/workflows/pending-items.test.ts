import { PendingItems, type OwnItem, type PendingItem } from '../../../workflows/pending-items';

interface Held extends OwnItem {
  tool: string;
}

const own = (id: string, askedAt: string, state = 'pending'): Held => ({
  ref: id,
  id,
  workflow_id: 'lead-1',
  asked_at: askedAt,
  state,
  tool: 'bash',
});

const child = (task: string, id: string, askedAt: string): PendingItem => ({
  ref: `${task}/${id}`,
  id,
  workflow_id: `lead-1/task/${task}`,
  asked_at: askedAt,
});

function holding(heldBefore = 0, ended: string[] = []) {
  return new PendingItems<Held, PendingItem>({
    prefix: 'a',
    heldBefore,
    delegationEnded: (taskId) => ended.includes(taskId),
    pendingOf: ({ state: _state, tool: _tool, ...item }) => item,
  });
}

describe('PendingItems: what an agent holds for a person', () => {
  it('finds the one open item when the Update names none, and says why when it cannot', () => {
    const items = holding();
    expect(items.lookup(undefined)).toEqual({ kind: 'not_waiting' });
    items.add(own('a1', '2026-01-01T00:00:01Z', 'approved'));
    // A closed item is not waiting: still nothing to act on.
    expect(items.lookup(undefined)).toEqual({ kind: 'not_waiting' });
    const a2 = own('a2', '2026-01-01T00:00:02Z');
    items.add(a2);
    expect(items.lookup(undefined)).toEqual({ kind: 'found', record: a2 });
    const a3 = own('a3', '2026-01-01T00:00:03Z');
    items.add(a3);
    expect(items.lookup(undefined)).toEqual({ kind: 'ambiguous', open: [a2, a3] });
  });

  it('finds a named item open or closed; an id of an earlier execution is closed, any other unknown', () => {
    const items = holding(2);
    const a3 = own('a3', '2026-01-01T00:00:03Z', 'denied');
    items.add(a3);
    expect(items.lookup('a3')).toEqual({ kind: 'found', record: a3 });
    expect(items.lookup('a1')).toEqual({ kind: 'closed_before' });
    expect(items.lookup('a2')).toEqual({ kind: 'closed_before' });
    expect(items.lookup('a4')).toEqual({ kind: 'unknown', known: ['a3'] });
    expect(items.lookup('a0')).toEqual({ kind: 'unknown', known: ['a3'] });
    // Another kind's id (a question's) is not one of these.
    expect(items.lookup('q1')).toEqual({ kind: 'unknown', known: ['a3'] });
  });

  it("lists its own open items and its subagents' oldest first, without those of ended delegations", () => {
    const ended: string[] = [];
    const items = holding(0, ended);
    items.add(own('a1', '2026-01-01T00:00:05Z'));
    items.add(own('a2', '2026-01-01T00:00:01Z', 'timed_out'));
    items.childAsked(child('t2', 'a1', '2026-01-01T00:00:03Z'));
    items.childAsked(child('t1', 'a1', '2026-01-01T00:00:02Z'));
    expect(items.pending().map((item) => item.ref)).toEqual(['t1/a1', 't2/a1', 'a1']);
    expect(items.pendingChildren().map((item) => item.ref)).toEqual(['t1/a1', 't2/a1']);
    // The pending list carries what the pending shape says, not the record's state.
    expect(items.pending()[2]).toEqual({
      ref: 'a1',
      id: 'a1',
      workflow_id: 'lead-1',
      asked_at: '2026-01-01T00:00:05Z',
    });
    ended.push('t2');
    expect(items.pending().map((item) => item.ref)).toEqual(['t1/a1', 'a1']);
  });

  it("forgets a subagent's item when its notice says it closed, and hands back what was heard", () => {
    const items = holding();
    const heard = child('t1', 'a1', '2026-01-01T00:00:02Z');
    items.childAsked(heard);
    expect(items.childClosed('lead-1/task/t1', 'a1')).toEqual(heard);
    expect(items.pendingChildren()).toEqual([]);
    expect(items.childClosed('lead-1/task/t1', 'a1')).toBeUndefined();
  });
});
