/**
 * `memoryWorkflow`: one user's memory (workflow id `memory/<user_id>`), an entity workflow. Its facts live in
 * workflow state (encrypted at rest as every payload is); changes arrive as Updates (`memory_change`), each
 * applied once however often it is sent (its `op_id` is remembered, across continue-as-new); reads are a query
 * (`memory_facts`). In `middleware` mode a run that ends queues its conversation (a `remember` change); once no
 * run has ended for `debounce_seconds` (a durable timer here, not in any process) one extraction activity reads
 * every queued conversation and its answer is applied here, once: a worker lost during the extraction is a retried
 * activity, whose result history records once. It continues as new every few hundred changes, so its history
 * stays small however long the user keeps it. It never ends on its own.
 */
import {
  ActivityFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { ProjectActivities } from '../../activities';
import { MEMORY_PENDING_MAX, type MemoryExtraction } from '../../contracts/memory-extraction';
import {
  boundedConfidence,
  contentKey,
  MEMORY_CHANGES_PER_EXECUTION,
  MEMORY_RECENT_CHANGES,
  memoryChangeUpdate,
  memoryFactsQuery,
  type MemoryChange,
  type MemoryChangeResult,
  type MemoryExtractionSettings,
  type MemoryFact,
  type MemoryWorkflowInput,
  type PendingConversation,
} from '../../contracts/memory';
import { historyWantsContinueAsNew } from '../continue-as-new';
import { HEARTBEAT_TIMEOUT } from '../tool-calls';

const { extractMemory } = proxyActivities<ProjectActivities>({
  // One model call; a worker lost during it is noticed by its heartbeats, and the call is made again.
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: HEARTBEAT_TIMEOUT,
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
  },
});

/** A user's facts and the changes already made to them: plain data, carried across continue-as-new. */
export class MemoryStore {
  facts: MemoryFact[];
  lastFact: number;
  readonly recent: Map<string, MemoryChangeResult>;
  /** `middleware`: the conversations queued for the next extraction, and its settings (the latest run's). */
  pending: PendingConversation[];
  extraction: MemoryExtractionSettings | undefined;
  /** Conversations queued in this execution: a new one restarts the debounce. */
  queued = 0;

  constructor(input: MemoryWorkflowInput) {
    this.facts = input.facts ?? [];
    this.lastFact = input.last_fact ?? 0;
    this.recent = new Map(input.recent ?? []);
    this.pending = input.pending ?? [];
    this.extraction = input.extraction;
  }

  /** Applies `change` once: a change heard before is answered as it was then. */
  apply(change: MemoryChange, maxFacts: number): MemoryChangeResult {
    const before = this.recent.get(change.op_id);
    if (before) return before;
    const result = this.change(change, maxFacts);
    this.recent.set(change.op_id, result);
    while (this.recent.size > MEMORY_RECENT_CHANGES) {
      this.recent.delete(this.recent.keys().next().value as string);
    }
    return result;
  }

  private change({ op, source_run: sourceRun, at }: MemoryChange, maxFacts: number): MemoryChangeResult {
    switch (op.kind) {
      case 'remember': {
        // A run's conversation once (DeerFlow's queue keeps one per thread): its latest replaces an earlier one.
        this.pending = this.pending.filter((c) => c.run_id !== sourceRun);
        this.pending.push({ run_id: sourceRun, messages: op.messages, at });
        this.extraction = op.extraction;
        this.queued += 1;
        return { status: 'queued', pending: this.pending.length };
      }
      case 'add': {
        const key = contentKey(op.content);
        if (key === '') return { error: 'empty content' };
        if (this.facts.some((fact) => contentKey(fact.content) === key)) return { error: 'Duplicate fact' };
        this.lastFact += 1;
        const fact: MemoryFact = {
          id: `fact_${this.lastFact}`,
          content: op.content.trim(),
          category: op.category.trim() || 'context',
          confidence: boundedConfidence(op.confidence, 0.7),
          source_run: sourceRun,
          created_at: at,
          updated_at: at,
        };
        this.facts.push(fact);
        this.evict(maxFacts);
        if (!this.facts.includes(fact)) {
          return {
            error: 'Fact was not stored because the configured memory.max_facts capacity policy evicted it',
          };
        }
        return { status: 'added', fact_id: fact.id };
      }
      case 'update': {
        const fact = this.facts.find((f) => f.id === op.fact_id);
        if (!fact) return { error: `Fact not found: ${op.fact_id}` };
        if (op.content !== undefined) {
          if (op.content.trim() === '') return { error: 'empty content' };
          fact.content = op.content.trim();
        }
        if (op.category !== undefined) fact.category = op.category.trim() || 'context';
        if (op.confidence !== undefined) fact.confidence = boundedConfidence(op.confidence);
        fact.source_run = sourceRun;
        fact.updated_at = at;
        return { status: 'updated', fact_id: fact.id };
      }
      case 'delete': {
        const index = this.facts.findIndex((f) => f.id === op.fact_id);
        if (index < 0) return { error: `Fact not found: ${op.fact_id}` };
        this.facts.splice(index, 1);
        return { status: 'deleted', fact_id: op.fact_id };
      }
      case 'clear': {
        const count = this.facts.length;
        this.facts = [];
        return { status: 'cleared', count };
      }
    }
  }

  /** Past `maxFacts`, the least confident go (the oldest first among equals): DeerFlow's confidence eviction. */
  private evict(maxFacts: number): void {
    if (this.facts.length <= maxFacts) return;
    const kept = [...this.facts]
      .sort((a, b) => b.confidence - a.confidence || b.created_at.localeCompare(a.created_at))
      .slice(0, maxFacts);
    const keep = new Set(kept);
    this.facts = this.facts.filter((fact) => keep.has(fact));
  }

  /**
   * An extraction's answer over the first `count` queued conversations: its removals, then its new facts (a
   * fact already kept is not added again), each from the latest of those runs; then those conversations leave
   * the queue.
   */
  applyExtraction(
    extraction: Pick<MemoryExtraction, 'add' | 'remove'>,
    count: number,
    maxFacts: number,
    at: string,
  ) {
    const taken = this.pending.slice(0, count);
    const sourceRun = taken.at(-1)?.run_id ?? 'memory';
    let added = 0;
    for (const factId of extraction.remove) {
      this.change(
        { op_id: '', op: { kind: 'delete', fact_id: factId }, source_run: sourceRun, at },
        maxFacts,
      );
    }
    for (const fact of extraction.add) {
      const result = this.change(
        { op_id: '', op: { kind: 'add', ...fact }, source_run: sourceRun, at },
        maxFacts,
      );
      if ('status' in result) added += 1;
    }
    this.pending = this.pending.slice(count);
    return { added, removed: extraction.remove.length };
  }

  carry(input: MemoryWorkflowInput): MemoryWorkflowInput {
    return {
      user_id: input.user_id,
      max_facts: input.max_facts,
      facts: this.facts,
      last_fact: this.lastFact,
      recent: [...this.recent.entries()],
      ...(this.pending.length > 0 && { pending: this.pending }),
      ...(this.extraction && { extraction: this.extraction }),
    };
  }
}

/**
 * Waits until no conversation has been queued for the extraction's `debounce_seconds` (DeerFlow's queue resets
 * its timer on each one), or enough are queued not to wait for more, or the history wants a new execution.
 * A durable timer: a worker restart does not restart the wait.
 */
async function debounced(store: MemoryStore, wantsNewExecution: () => boolean): Promise<void> {
  const waitMs = (store.extraction?.debounce_seconds ?? 0) * 1000;
  for (;;) {
    if (store.pending.length >= MEMORY_PENDING_MAX || wantsNewExecution() || waitMs <= 0) return;
    const seen = store.queued;
    const more = await condition(() => store.queued !== seen || wantsNewExecution(), waitMs);
    if (!more) return;
  }
}

/** One extraction over the queued conversations, applied here; one that fails for good is logged and dropped. */
async function extractQueued(store: MemoryStore, input: MemoryWorkflowInput): Promise<void> {
  const settings = store.extraction;
  const count = store.pending.length;
  if (!settings || count === 0) return;
  try {
    const extraction = await extractMemory({
      user_id: input.user_id,
      settings,
      facts: store.facts,
      conversations: store.pending,
    });
    const at = new Date().toISOString();
    if ('error' in extraction) {
      log.warn(`memory extraction of ${count} conversation(s) dropped: ${extraction.error}`);
      store.pending = store.pending.slice(count);
      return;
    }
    const done = store.applyExtraction(extraction, count, input.max_facts, at);
    log.info(`memory extraction over ${count} conversation(s): ${done.added} added, ${done.removed} removed`);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    // DeerFlow's `log_and_drop`: a provider that stays down loses this extraction, not the facts kept.
    log.warn(`memory extraction of ${count} conversation(s) dropped: ${err.cause?.message ?? err.message}`);
    store.pending = store.pending.slice(count);
  }
}

export async function memoryWorkflow(input: MemoryWorkflowInput): Promise<never> {
  const store = new MemoryStore(input);
  let changes = 0;
  setHandler(memoryFactsQuery, () => store.facts);
  setHandler(
    memoryChangeUpdate,
    (change) => {
      changes += 1;
      return store.apply(change, change.max_facts ?? input.max_facts);
    },
    {
      validator: (change) => {
        if (typeof change?.op_id !== 'string' || typeof change.op?.kind !== 'string') {
          throw new Error('a memory change needs op_id and op');
        }
      },
    },
  );
  const wantsNewExecution = () =>
    changes >= MEMORY_CHANGES_PER_EXECUTION || historyWantsContinueAsNew(workflowInfo());
  // Histories from before `middleware` never queue a conversation: they wait on this one condition as they did.
  for (;;) {
    await condition(() => store.pending.length > 0 || wantsNewExecution());
    if (store.pending.length === 0) break;
    await debounced(store, wantsNewExecution);
    if (wantsNewExecution()) break;
    await extractQueued(store, input);
  }
  // Every change accepted so far is answered before the next execution takes the facts over.
  await condition(allHandlersFinished);
  return continueAsNew<typeof memoryWorkflow>(store.carry(input));
}
