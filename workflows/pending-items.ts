/**
 * What an agent holds for a person to act on (`PendingItems`): clarification questions (workflows/clarification.ts)
 * and tool calls held for approval (workflows/approvals.ts) alike. It keeps the agent's own items, open and
 * closed, and its subagents' still open (heard from their notices), lists what waits for `status`, and finds the
 * item an Update names. What an item says and how a refusal reads stay with each kind; the lookup is this one.
 * Pure: no history, so a unit test drives it without a server.
 */
import { ApplicationFailure } from '@temporalio/workflow';

/** What every item waiting for a person says of itself. */
export interface PendingItem {
  /** `<task id>/…/<id>` from the lead (its first part: the delegation it came through), or the id alone. */
  ref: string;
  /** `a1`, `q2`: the prefix, then the count of items the agent held. */
  id: string;
  /** The workflow that holds it, the one an Update must reach. */
  workflow_id: string;
  asked_at: string;
}

/** One of the agent's own items: `pending` until it closes one way or another. */
export interface OwnItem extends PendingItem {
  state: string;
}

/** The item an Update names, or why there is none to act on. */
export type Lookup<R> =
  | { kind: 'found'; record: R }
  /** No id named, and more than one open. */
  | { kind: 'ambiguous'; open: R[] }
  /** No id named, and none open. */
  | { kind: 'not_waiting' }
  /** An id this agent gave out before it continued as new: closed then (its record did not come along). */
  | { kind: 'closed_before' }
  /** An id it never gave out; `known`: those of this execution. */
  | { kind: 'unknown'; known: string[] };

export interface PendingItemsOptions<R, P> {
  /** The ids' prefix: `a` (calls held for approval), `q` (questions). */
  prefix: string;
  /** Items held before this execution (continue-as-new): ids up to this one are known, their records gone. */
  heldBefore: number;
  /** Whether the agent's delegation `taskId` has ended (its subagents' items are then gone). */
  delegationEnded?: (taskId: string) => boolean;
  /** An own record as the pending item `status` lists. */
  pendingOf: (record: R) => P;
}

/** The workflow clock (deterministic on replay), as a wire timestamp. */
export function nowIso(): string {
  return new Date().toISOString();
}

/** An Update's refusal: its type says which, its message what would be accepted. */
export function refusal(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}

export class PendingItems<R extends OwnItem, P extends PendingItem> {
  /** This execution's own items, open and closed, the oldest first. */
  readonly own: R[] = [];
  /** Items of this agent's subagents (at any depth) still open, by `<workflow id>#<id>`. */
  private readonly children = new Map<string, P>();

  constructor(private readonly options: PendingItemsOptions<R, P>) {}

  add(record: R): void {
    this.own.push(record);
  }

  /** The agent's own items still waiting. */
  open(): R[] {
    return this.own.filter((record) => record.state === 'pending');
  }

  /** Its subagents' items still waiting, of delegations that have not ended, oldest first. */
  pendingChildren(): P[] {
    const ended = this.options.delegationEnded;
    return [...this.children.values()]
      .filter((item) => ended === undefined || !ended(item.ref.split('/')[0]))
      .sort(byAskedAt);
  }

  /** Every item of the agent and its subagents waiting, oldest first. */
  pending(): P[] {
    return [...this.open().map(this.options.pendingOf), ...this.pendingChildren()].sort(byAskedAt);
  }

  /** The item `id` names (absent: the one open, if only one is); closed or not, the caller decides. */
  lookup(id: string | undefined): Lookup<R> {
    if (id === undefined) {
      const open = this.open();
      if (open.length === 1) return { kind: 'found', record: open[0] };
      return open.length > 1 ? { kind: 'ambiguous', open } : { kind: 'not_waiting' };
    }
    const record = this.own.find((r) => r.id === id);
    if (record !== undefined) return { kind: 'found', record };
    const count = new RegExp(`^${this.options.prefix}(\\d+)$`).exec(id)?.[1];
    if (count !== undefined && Number(count) >= 1 && Number(count) <= this.options.heldBefore) {
      return { kind: 'closed_before' };
    }
    return { kind: 'unknown', known: this.own.map((r) => r.id) };
  }

  /** A subagent's item opened (its notice). */
  childAsked(item: P): void {
    this.children.set(`${item.workflow_id}#${item.id}`, item);
  }

  /** A subagent's item closed (its notice): the item as it was heard, if it was. */
  childClosed(workflowId: string, id: string): P | undefined {
    const key = `${workflowId}#${id}`;
    const item = this.children.get(key);
    this.children.delete(key);
    return item;
  }
}

function byAskedAt(a: PendingItem, b: PendingItem): number {
  return a.asked_at.localeCompare(b.asked_at);
}
