/**
 * `admissionWorkflow`: the one semaphore of a task queue and pool (id `subagents-admission/<task queue>` for
 * subagents, `subagents-run-admission/<task queue>` for lead runs). Subagents, or leads, ask it for a slot as
 * their first step and give it back when they end (signals both ways). It holds the
 * deployment's slots: at most `max_running` granted at once, at most `max_queued` requests waiting, each for at
 * most `queue_timeout_seconds`; `reject` refuses instead of queueing. Requests wait in one FIFO per fairness key
 * and slots rotate between keys, so a run that floods the queue cannot starve another. A slot comes back when
 * its owner releases it, when an answer cannot reach its owner, or when a sweep finds the owner closed
 * (terminated from the UI, say). The settings are the newest worker's (`declareWorkerSignal`).
 *
 * Decisions happen in the handlers, in the activation the request arrives in; the answers go out from the loop,
 * many at a time in one activity (no outbound command or promise per request, bounded work per task).
 * Otherwise the loop only wakes for deadlines: queue timeouts, the start rate, the sweep. Its history stays
 * bounded by continue-as-new.
 */
import {
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  patched,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import type { AdmissionActivities } from '../activities/admission';
import {
  ADMISSION_ANSWERS_PER_DELIVERY,
  ADMISSION_WORKFLOW_TASK_TIMEOUT,
  acquireSlotSignal,
  admissionAnswerSignal,
  admissionStateQuery,
  capacityFullText,
  declareWorkerSignal,
  LEASE_TTL_MS,
  leaseReportUpdate,
  queueTimeoutText,
  releaseSlotSignal,
  sameAdmissionSettings,
  type AdmissionAnswer,
  type AdmissionCounters,
  type AdmissionDelivery,
  type AdmissionPool,
  type AdmissionSettings,
  type AdmissionState,
  type LeaseHold,
  type LeaseReply,
  type LeaseReport,
  type QueuedRequest,
  type SlotHolder,
  type SlotRequest,
  type WorkerDeclaration,
} from '../contracts/admission';

/** How often the owners of held slots are checked, while any are held. */
export const ADMISSION_SWEEP_INTERVAL_MS = 10_000;

/**
 * Owners a sweep describes at most (one describe each), those checked longest ago first: with hundreds of
 * slots held, describing every holder every 10 s was a load of its own on the server (bench/load.ts).
 */
export const ADMISSION_SWEEP_BATCH = 16;

/** Executions recorded before the batch described every holder at each sweep, and replay so. */
const BOUNDED_SWEEP_PATCH = 'admission-bounded-sweep';
/**
 * Histories recorded before a draining execution kept its new answers for the next one: it sent them, and
 * under steady traffic the answers in flight never all arrived, so it never continued as new.
 */
const DEFERRED_ANSWERS_PATCH = 'admission-deferred-answers';

/**
 * Histories recorded before answers went out many at a time through a local activity (one signal command per
 * answer, each its own promise) and before a repeated request went unanswered.
 */
const BATCHED_ANSWERS_PATCH = 'admission-batched-answers';

/**
 * The loop waits on timers it never cancels. Before, each wait was `condition(predicate, timeout)`, whose timer
 * is cancelled when a signal wakes the loop first: a timer that fired in the same workflow task as the signal
 * that cancelled it, with that task lost to a killed worker and retried, wedged the workflow in a
 * non-determinism error ("Timer fired event did not have expected timer id") and every request waited forever.
 * Now at most one timer per deadline is started and each is left to fire; one that is no longer the earliest
 * wakes the loop to find nothing due.
 */
const UNCANCELLED_TIMERS_PATCH = 'admission-uncancelled-timers';

/**
 * The answers go out through a regular activity, and every version decision is made here, at the start of an
 * execution. Before, they went out through a local activity inside the workflow task: with signals arriving
 * while it ran and tasks lost to killed workers, such tasks did not always replay ("Missing associated machine
 * for LocalActivity", and a patch first checked after it: "Non-deprecated patch marker encountered"), and the
 * semaphore, with every request of its queue, was stuck. An activity is a command: its events replay the same
 * whatever became of the task that scheduled it. This patch implies every one above.
 */
const ACTIVITY_ANSWERS_PATCH = 'admission-activity-answers';

/** After a delivery that failed every attempt: the pause before its answers are sent again. */
const DELIVERY_RETRY_MS = 5_000;

/** Declarations kept for the state query (the newest last). */
const MAX_WORKER_DECLARATIONS = 16;

/** Events before the semaphore continues as new: it lives as long as the deployment, so keep replays short. */
export const ADMISSION_HISTORY_EVENTS = 2_000;

export interface AdmissionWorkflowInput {
  settings: AdmissionSettings;
  /** What it bounds (absent: `subagents`): only its refusal texts differ. */
  pool?: AdmissionPool;
  /** Continue as new past this many events (default ADMISSION_HISTORY_EVENTS; lower in tests). */
  history_events?: number;
  /** Set when the workflow continues as new. */
  carry?: AdmissionCarry;
}

export interface AdmissionCarry {
  running: SlotHolder[];
  queued: QueuedRequest[];
  /** Fairness keys with queued requests, the next one to be served first. */
  rotation: string[];
  counters: AdmissionCounters;
  workers: WorkerDeclaration[];
  last_grant_ms?: number;
  /** Spare slots leased to workers. */
  leases?: LeaseHold[];
  /** Answers decided but not yet sent by the previous execution, sent by this one first. */
  answers?: AdmissionDelivery[];
}

const { admissionClosedOwners } = proxyActivities<AdmissionActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 2 },
});

// One activity for many answers. It beats after each group of signals: an attempt lost with its worker is
// given up within the heartbeat timeout (not the start-to-close one), and the next resumes where it was. An
// attempt that fails (the server unreachable) is tried again a few times before its answers wait (`deliver`).
const { sendAdmissionAnswers } = proxyActivities<AdmissionActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

// Executions recorded before: the same delivery as a local activity, inside the workflow task.
const { deliverAdmissionAnswers } = proxyLocalActivities<AdmissionActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

const ZERO_COUNTERS: AdmissionCounters = {
  granted: 0,
  queued: 0,
  rejected: 0,
  timed_out: 0,
  released: 0,
  reclaimed: 0,
};

/** The semaphore's state and its decisions, without the workflow around them (pure but for `answer`). */
export class Slots {
  settings: AdmissionSettings;
  running: SlotHolder[];
  queued: QueuedRequest[];
  rotation: string[];
  counters: AdmissionCounters;
  workers: WorkerDeclaration[];
  lastGrantMs?: number;
  leases: LeaseHold[];
  readonly pool: AdmissionPool;

  constructor(
    input: AdmissionWorkflowInput,
    private readonly answer: (owner: string, answer: AdmissionAnswer) => void,
  ) {
    const carry = input.carry;
    this.settings = input.settings;
    this.pool = input.pool ?? 'subagents';
    this.running = carry?.running ?? [];
    this.queued = carry?.queued ?? [];
    this.rotation = carry?.rotation ?? [];
    this.counters = carry?.counters ?? { ...ZERO_COUNTERS };
    this.workers = carry?.workers ?? [];
    this.lastGrantMs = carry?.last_grant_ms;
    this.leases = carry?.leases ?? [];
  }

  carry(): AdmissionCarry {
    return {
      running: this.running,
      queued: this.queued,
      rotation: this.rotation,
      counters: this.counters,
      workers: this.workers,
      ...(this.lastGrantMs !== undefined && { last_grant_ms: this.lastGrantMs }),
      ...(this.leases.length > 0 && { leases: this.leases }),
    };
  }

  state(): AdmissionState {
    return {
      settings: this.settings,
      running: this.running,
      queued: this.queued,
      counters: this.counters,
      workers: this.workers,
      ...(this.leases.length > 0 && { leases: this.leases }),
    };
  }

  /** When the start rate next allows a grant (undefined: no rate, or allowed now). */
  private pacedUntil(now: number): number | undefined {
    const rate = this.settings.max_starts_per_second;
    if (rate === undefined || this.lastGrantMs === undefined) return undefined;
    const next = this.lastGrantMs + 1000 / rate;
    return next > now ? next : undefined;
  }

  /** Slots taken: granted, and spare in leases (those being taken back included). */
  private taken(): number {
    return this.running.length + this.leases.reduce((sum, hold) => sum + hold.tokens.length, 0);
  }

  private hasFreeSlot(): boolean {
    return this.taken() < this.settings.max_running;
  }

  /**
   * When set, a repeated request for a slot it knows gets no answer unless it says `again` (the requester's
   * own task was retried: the first answer is on its way). Histories recorded before answered every repeat.
   */
  quietRepeats = false;

  /**
   * A request's immediate answer (signalled back at once): granted, queued, or refused. Asked again for a slot
   * it knows, it answers with where that slot stands, taking nothing twice (or, with `quietRepeats`, not at all
   * unless the request says `again`).
   */
  acquire(request: SlotRequest, now: number): AdmissionAnswer | undefined {
    const { slot } = request;
    const repeat = this.quietRepeats && request.again !== true;
    if (this.running.some((holder) => holder.slot === slot)) {
      return repeat ? undefined : { slot, outcome: 'granted' };
    }
    const waiting = this.queued.findIndex((entry) => entry.slot === slot);
    if (waiting >= 0) {
      if (repeat) return undefined;
      return { slot, outcome: 'queued', running: this.running.length, queued: waiting + 1 };
    }
    if (this.hasFreeSlot() && this.queued.length === 0 && this.pacedUntil(now) === undefined) {
      this.take(request, now);
      return { slot, outcome: 'granted' };
    }
    // A free slot held back only by the start rate is a short wait, whatever the policy.
    const mustWait = !this.hasFreeSlot();
    if (
      mustWait &&
      (this.settings.admission_policy === 'reject' || this.queued.length >= this.settings.max_queued)
    ) {
      this.counters.rejected += 1;
      return {
        slot,
        outcome: 'refused',
        error: capacityFullText(this.running.length, this.queued.length, this.pool),
      };
    }
    const { again: _again, ...asked } = request;
    this.queued.push({ ...asked, queued_at: new Date(now).toISOString() });
    if (!this.rotation.includes(request.fairness_key)) this.rotation.push(request.fairness_key);
    this.counters.queued += 1;
    return { slot, outcome: 'queued', running: this.running.length, queued: this.queued.length };
  }

  /** Gives a slot back or withdraws a request; then grants what now fits. Unknown slots are ignored. */
  release(slot: string, now: number, reclaimed = false): void {
    const held = this.running.findIndex((holder) => holder.slot === slot);
    if (held >= 0) {
      this.running.splice(held, 1);
      if (reclaimed) this.counters.reclaimed += 1;
      else this.counters.released += 1;
    } else {
      this.dequeue(slot);
    }
    this.grantWhatFits(now);
  }

  /** Refuses the requests that waited past the queue timeout. */
  expire(now: number): void {
    const limitMs = this.settings.queue_timeout_seconds * 1000;
    for (const waiting of [...this.queued]) {
      if (now - Date.parse(waiting.queued_at) < limitMs) continue;
      this.dequeue(waiting.slot);
      this.counters.timed_out += 1;
      this.answer(waiting.owner, {
        slot: waiting.slot,
        outcome: 'refused',
        error: queueTimeoutText(this.settings.queue_timeout_seconds, this.pool),
      });
    }
  }

  /** Grants queued requests while slots are free, rotating between fairness keys. */
  grantWhatFits(now: number): void {
    while (this.hasFreeSlot() && this.queued.length > 0 && this.pacedUntil(now) === undefined) {
      const key = this.rotation.shift();
      const index = this.queued.findIndex((waiting) => waiting.fairness_key === key);
      if (key === undefined || index < 0) {
        // Cannot happen while rotation and queue agree; rebuild the rotation rather than stall.
        this.rotation = [...new Set(this.queued.map((waiting) => waiting.fairness_key))];
        continue;
      }
      const [next] = this.queued.splice(index, 1);
      if (this.queued.some((waiting) => waiting.fairness_key === key)) this.rotation.push(key);
      const { queued_at: _queuedAt, ...request } = next;
      this.grant(request, now);
    }
  }

  /**
   * A worker's lease report: the slots it granted become held like any other (a slot already held, or a token
   * no longer its lease's, takes nothing twice); the slots given back through it are released; spare slots it
   * dropped after an earlier reply are free; queued requests are served first; then, while none waits (and no
   * start rate paces grants), the lease is topped up towards what it wants. The reply lists the spare slots it
   * may grant: while requests wait, none.
   */
  report(report: LeaseReport, now: number): LeaseReply {
    let hold = this.leases.find((lease) => lease.lease === report.lease);
    if (!hold) {
      hold = {
        lease: report.lease,
        identity: report.identity,
        tokens: [],
        revoking: [],
        renewed_at: '',
        made: 0,
      };
      this.leases.push(hold);
    }
    hold.renewed_at = new Date(now).toISOString();
    for (const { token, request } of report.assigned) {
      hold.tokens = hold.tokens.filter((held) => held !== token);
      hold.revoking = hold.revoking.filter((taking) => taking.token !== token);
      if (this.running.some((holder) => holder.slot === request.slot)) continue;
      this.dequeue(request.slot);
      this.take(request, now);
    }
    for (const slot of report.released ?? []) this.release(slot, now);
    // Taken back by a reply the worker has since applied: it grants them no more.
    const done = new Set(
      hold.revoking.filter((taking) => taking.seq <= report.ack).map((taking) => taking.token),
    );
    hold.revoking = hold.revoking.filter((taking) => !done.has(taking.token));
    hold.tokens = hold.tokens.filter((token) => !done.has(token));
    this.grantWhatFits(now);
    const revoking = new Set(hold.revoking.map((taking) => taking.token));
    const spare = hold.tokens.filter((token) => !revoking.has(token));
    const lend =
      this.queued.length === 0 &&
      this.settings.admission_policy === 'queue' &&
      this.settings.max_starts_per_second === undefined;
    if (!lend || report.want < spare.length) {
      // Taken back: counted until the worker acknowledges this reply (its next report).
      const kept = lend ? report.want : 0;
      for (const token of spare.slice(kept)) hold.revoking.push({ token, seq: report.seq });
      spare.splice(kept);
    } else {
      const lent = Math.min(report.want - spare.length, this.settings.max_running - this.taken());
      for (let i = 0; i < lent; i += 1) {
        hold.made += 1;
        const token = `${report.lease}#${hold.made}`;
        hold.tokens.push(token);
        spare.push(token);
      }
    }
    if (hold.tokens.length === 0 && report.want === 0) {
      this.leases = this.leases.filter((lease) => lease !== hold);
    }
    return { seq: report.seq, spare };
  }

  /** Leases not renewed within LEASE_TTL_MS: their workers are gone, their spare slots free again. */
  expireLeases(now: number): void {
    const live = this.leases.filter((hold) => now - Date.parse(hold.renewed_at) < LEASE_TTL_MS);
    if (live.length === this.leases.length) return;
    for (const hold of this.leases.filter((lease) => !live.includes(lease))) {
      log.warn('admission lease given up: its worker stopped reporting', {
        lease: hold.lease,
        identity: hold.identity,
        spare: hold.tokens.length,
      });
    }
    this.leases = live;
    this.grantWhatFits(now);
  }

  declare(declaration: WorkerDeclaration, now: number): void {
    if (!declaration.left) this.adopt(declaration);
    this.workers = [
      ...this.workers.filter((worker) => worker.identity !== declaration.identity),
      declaration,
    ].slice(-MAX_WORKER_DECLARATIONS);
    // A higher max_running may free slots at once; a lower one lets the running finish.
    this.grantWhatFits(now);
  }

  private adopt(declaration: WorkerDeclaration): void {
    const changed = !sameAdmissionSettings(this.settings, declaration.settings);
    if (changed) {
      log.warn('admission settings replaced by a starting worker', {
        identity: declaration.identity,
        before: this.settings,
        after: declaration.settings,
      });
    }
    this.settings = declaration.settings;
  }

  /** When each owner's slot was last found open by a sweep (not carried: after continue-as-new, its grant). */
  private readonly checked = new Map<string, number>();

  /**
   * The owners a sweep checks: those holding a slot for a sweep interval or more, the ones checked longest ago
   * first, at most ADMISSION_SWEEP_BATCH. A queued owner that closed is found when its grant cannot reach it,
   * or its request times out.
   */
  owners(now: number): string[] {
    const since = new Map<string, number>();
    for (const holder of this.running) {
      const at = this.checked.get(holder.owner) ?? Date.parse(holder.since);
      since.set(holder.owner, Math.min(since.get(holder.owner) ?? Infinity, at));
    }
    return [...since]
      .filter(([, at]) => now - at >= ADMISSION_SWEEP_INTERVAL_MS)
      .sort((a, b) => a[1] - b[1])
      .slice(0, ADMISSION_SWEEP_BATCH)
      .map(([owner]) => owner);
  }

  /** Every owner holding a slot: what a sweep described before ADMISSION_SWEEP_BATCH (histories recorded then). */
  allOwners(): string[] {
    return [...new Set(this.running.map((holder) => holder.owner))];
  }

  /** After a sweep: these owners were found open now. */
  checkedOpen(owners: readonly string[], now: number): void {
    for (const owner of owners) this.checked.set(owner, now);
    const holding = new Set(this.running.map((holder) => holder.owner));
    for (const owner of [...this.checked.keys()]) if (!holding.has(owner)) this.checked.delete(owner);
  }

  /** Gives back every slot and request of owners that have closed, then grants what now fits. */
  reclaim(closedOwners: readonly string[], now: number): void {
    const closed = new Set(closedOwners);
    // Their requests leave the queue first: a freed slot must not go to an owner that is gone.
    for (const waiting of this.queued.filter((entry) => closed.has(entry.owner))) this.dequeue(waiting.slot);
    const kept = this.running.filter((holder) => !closed.has(holder.owner));
    this.counters.reclaimed += this.running.length - kept.length;
    this.running = kept;
    this.grantWhatFits(now);
  }

  /** When the loop must next wake: the first queue timeout, the start rate's next grant. */
  nextDeadline(now: number): number | undefined {
    const deadlines: number[] = this.queued.map(
      (waiting) => Date.parse(waiting.queued_at) + this.settings.queue_timeout_seconds * 1000,
    );
    const paced = this.pacedUntil(now);
    if (paced !== undefined && this.queued.length > 0 && this.hasFreeSlot()) deadlines.push(paced);
    for (const hold of this.leases) {
      if (hold.tokens.length > 0) deadlines.push(Date.parse(hold.renewed_at) + LEASE_TTL_MS);
    }
    return deadlines.length === 0 ? undefined : Math.min(...deadlines);
  }

  private take(request: SlotRequest, now: number): void {
    const { again: _again, ...asked } = request;
    this.running.push({ ...asked, since: new Date(now).toISOString() });
    this.counters.granted += 1;
    this.lastGrantMs = now;
  }

  /** A queued request's slot: taken, and its owner told. */
  private grant(request: SlotRequest, now: number): void {
    this.take(request, now);
    this.answer(request.owner, { slot: request.slot, outcome: 'granted' });
  }

  private dequeue(slot: string): void {
    const index = this.queued.findIndex((waiting) => waiting.slot === slot);
    if (index < 0) return;
    const [gone] = this.queued.splice(index, 1);
    if (!this.queued.some((waiting) => waiting.fairness_key === gone.fairness_key)) {
      this.rotation = this.rotation.filter((key) => key !== gone.fairness_key);
    }
  }
}

export async function admissionWorkflow(input: AdmissionWorkflowInput): Promise<never> {
  // Every decision between versions, made first thing (see ACTIVITY_ANSWERS_PATCH); executions recorded before
  // it make theirs where they did.
  const current = patched(ACTIVITY_ANSWERS_PATCH);
  const batched = current || patched(BATCHED_ANSWERS_PATCH);
  /** When the loop is set to wake (Infinity: only for a handler). */
  let armed = Infinity;
  let wake = false;
  let sweepAt: number | undefined;
  const deadline = (now: number): number => {
    const busy = slots.running.length > 0;
    const sweepDue = busy ? (sweepAt ?? now + ADMISSION_SWEEP_INTERVAL_MS) : Infinity;
    return Math.min(slots.nextDeadline(now) ?? Infinity, sweepDue);
  };
  // Handlers decide at once; the loop is woken only when one of them made its next deadline earlier.
  const changed = () => {
    if (deadline(Date.now()) < armed) wake = true;
  };
  // Answers decided and not yet sent, by slot: the loop sends them many at a time (one local activity), so an
  // activation does no outbound work per request. A newer answer for a slot replaces one not yet sent (a grant
  // supersedes "queued").
  const outbox = new Map<string, AdmissionDelivery>();
  // Histories recorded before: one signal command per answer, each its own promise.
  const sending = new Set<Promise<void>>();
  // While it drains to continue as new: the answers decided meanwhile, sent by the next execution (the slots'
  // state already holds them), so that the answers in flight can all arrive even under steady traffic.
  let deferred: AdmissionDelivery[] | undefined;
  const tell = (owner: string, answer: AdmissionAnswer): void => {
    if (batched) {
      outbox.delete(answer.slot);
      outbox.set(answer.slot, { owner, answer });
      return;
    }
    if (deferred) {
      deferred.push({ owner, answer });
      return;
    }
    const sent = getExternalWorkflowHandle(owner)
      .signal(admissionAnswerSignal, answer)
      .catch(() => {
        // An owner that cannot be told has closed: its slot, or its place in the queue, goes back.
        if (answer.outcome === 'refused') return;
        slots.release(answer.slot, Date.now(), answer.outcome === 'granted');
        changed();
      })
      .finally(() => sending.delete(sent));
    sending.add(sent);
  };
  const slots: Slots = new Slots(input, tell);
  const uncancelled = current || patched(UNCANCELLED_TIMERS_PATCH);
  // With uncancelled timers: the earliest deadline a timer is running for, and whether one has fired since the
  // loop last looked.
  let timerAt = Infinity;
  let timerFired = false;
  const armTimer = (at: number, now: number): void => {
    if (at === Infinity || at >= timerAt) return;
    timerAt = at;
    void sleep(Math.max(1, at - now)).then(() => {
      if (timerAt === at) timerAt = Infinity;
      timerFired = true;
    });
  };
  slots.quietRepeats = batched;
  for (const { owner, answer } of input.carry?.answers ?? []) tell(owner, answer);
  setHandler(admissionStateQuery, () => slots.state());
  setHandler(acquireSlotSignal, (request) => {
    const answer = slots.acquire(request, Date.now());
    if (answer) tell(request.owner, answer);
    changed();
  });
  setHandler(releaseSlotSignal, ({ slot }) => {
    slots.release(slot, Date.now());
    changed();
  });
  setHandler(declareWorkerSignal, (declaration) => {
    slots.declare(declaration, Date.now());
    changed();
  });
  setHandler(
    leaseReportUpdate,
    (report) => {
      const reply = slots.report(report, Date.now());
      changed();
      return reply;
    },
    // A report it cannot read (a worker of another version) is refused before it is accepted: no history,
    // and nothing thrown inside the workflow's task.
    { validator: validLeaseReport },
  );

  for (;;) {
    const now = Date.now();
    slots.expire(now);
    slots.expireLeases(now);
    slots.grantWhatFits(now);
    // Each delivery is a round trip through the task queue, and under steady traffic answers wait at every
    // turn: the next execution sends them (the carry's `answers`), or this one would never continue as new.
    if (current && wantsContinueAsNew(input.history_events)) break;
    if (outbox.size > 0) {
      await deliver(slots, outbox, current);
      continue;
    }
    const busy = slots.running.length > 0;
    if (!busy) sweepAt = undefined;
    else if (sweepAt === undefined) sweepAt = now + ADMISSION_SWEEP_INTERVAL_MS;
    else if (now >= sweepAt) {
      await sweep(slots, current);
      sweepAt = Date.now() + ADMISSION_SWEEP_INTERVAL_MS;
      continue;
    }
    if (wantsContinueAsNew(input.history_events)) break;
    armed = deadline(now);
    wake = false;
    if (uncancelled) {
      timerFired = false;
      armTimer(armed, now);
      await condition(
        () => wake || timerFired || outbox.size > 0 || wantsContinueAsNew(input.history_events),
      );
      continue;
    }
    const predicate = () => wake || outbox.size > 0 || wantsContinueAsNew(input.history_events);
    if (armed === Infinity) await condition(predicate);
    else await condition(predicate, Math.max(1, armed - now));
  }
  if (!batched) {
    if (patched(DEFERRED_ANSWERS_PATCH)) deferred = [];
    await condition(() => sending.size === 0 && allHandlersFinished());
  }
  // Answers decided since the last delivery go out from the next execution, first thing.
  const unsent = batched ? [...outbox.values()] : (deferred ?? []);
  const continueAsNew = makeContinueAsNewFunc<typeof admissionWorkflow>({
    workflowTaskTimeout: ADMISSION_WORKFLOW_TASK_TIMEOUT,
  });
  return await continueAsNew({
    settings: slots.settings,
    ...(input.pool && { pool: input.pool }),
    carry: { ...slots.carry(), ...(unsent.length > 0 && { answers: unsent }) },
    ...(input.history_events !== undefined && { history_events: input.history_events }),
  });
}

/**
 * Sends the oldest answers waiting (at most ADMISSION_ANSWERS_PER_DELIVERY) in one activity (`current`; before,
 * a local activity). An answer
 * whose owner has closed gives its slot, or its place in the queue, back. A delivery that keeps failing (the
 * server unreachable) puts its answers back, behind any newer answer for the same slot, and waits a little: some
 * of them may have arrived, so no slot is given back on a guess.
 */
async function deliver(
  slots: Slots,
  outbox: Map<string, AdmissionDelivery>,
  current: boolean,
): Promise<void> {
  const batch = [...outbox.values()].slice(0, ADMISSION_ANSWERS_PER_DELIVERY);
  for (const { answer } of batch) outbox.delete(answer.slot);
  let undelivered: string[];
  try {
    undelivered = await (current ? sendAdmissionAnswers(batch) : deliverAdmissionAnswers(batch));
  } catch (err) {
    log.warn('admission answers could not be delivered; trying again', {
      answers: batch.length,
      error: err instanceof Error ? err.message : String(err),
    });
    const newer = new Map(outbox);
    outbox.clear();
    for (const delivery of batch) outbox.set(delivery.answer.slot, delivery);
    for (const [slot, delivery] of newer) {
      outbox.delete(slot);
      outbox.set(slot, delivery);
    }
    await sleep(DELIVERY_RETRY_MS);
    return;
  }
  const now = Date.now();
  const lost = new Set(undelivered);
  for (const { answer } of batch) {
    if (!lost.has(answer.slot) || answer.outcome === 'refused') continue;
    slots.release(answer.slot, now, answer.outcome === 'granted');
  }
}

/** Throws unless `report` has the shape `Slots.report` reads. */
export function validLeaseReport(report: LeaseReport): void {
  const text = (value: unknown) => typeof value === 'string' && value.length > 0;
  const count = (value: unknown) => typeof value === 'number' && Number.isInteger(value) && value >= 0;
  const readable =
    typeof report === 'object' &&
    report !== null &&
    text(report.lease) &&
    typeof report.identity === 'string' &&
    count(report.seq) &&
    count(report.ack) &&
    count(report.want) &&
    Array.isArray(report.assigned) &&
    report.assigned.every(
      (grant) =>
        typeof grant === 'object' &&
        grant !== null &&
        text(grant.token) &&
        typeof grant.request === 'object' &&
        grant.request !== null &&
        text(grant.request.slot) &&
        text(grant.request.owner) &&
        typeof grant.request.fairness_key === 'string',
    ) &&
    (report.released === undefined || (Array.isArray(report.released) && report.released.every(text)));
  if (!readable) throw new Error('admission: a lease report it cannot read');
}

function wantsContinueAsNew(historyEvents = ADMISSION_HISTORY_EVENTS): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= historyEvents;
}

async function sweep(slots: Slots, current: boolean): Promise<void> {
  const bounded = current || patched(BOUNDED_SWEEP_PATCH);
  const owners = bounded ? slots.owners(Date.now()) : slots.allOwners();
  if (owners.length === 0) return;
  try {
    const closed = await admissionClosedOwners(owners);
    const now = Date.now();
    slots.reclaim(closed, now);
    slots.checkedOpen(owners, now);
  } catch (err) {
    // The next sweep tries again; nothing is given back on a guess.
    log.warn('admission sweep failed', { error: err instanceof Error ? err.message : String(err) });
  }
}
