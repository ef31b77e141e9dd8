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
 *
 * The state and the decisions live in classes beside it (admission/), each unit-tested without a server: `Slots`
 * (the semaphore) with its `Leases`, the `Outbox` of answers on their way, the `Alarm` that wakes the loop and the
 * `Sweep` of closed owners. This file makes every decision between versions and wires messages, activities and
 * timers to them.
 */
import {
  allHandlersFinished,
  condition,
  deprecatePatch,
  makeContinueAsNewFunc,
  patched,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { localActivities } from './local-activities';
import type { AdmissionActivities } from '../activities/admission';
import {
  ADMISSION_WORKFLOW_TASK_TIMEOUT,
  acquireSlotSignal,
  admissionAnswerSignal,
  admissionStateQuery,
  declareWorkerSignal,
  leaseReportUpdate,
  releaseSlotSignal,
} from '../contracts/admission';
import { Alarm } from './admission/alarm';
import type { AdmissionWorkflowInput } from './admission/input';
import { validLeaseReport } from './admission/leases';
import { Outbox } from './admission/outbox';
import { Slots } from './admission/slots';
import { Sweep } from './admission/sweep';

export type { AdmissionCarry, AdmissionWorkflowInput } from './admission/input';

/**
 * Deprecated (docs/patches.md): before it, each sweep described every holder; now always a batch. Every
 * execution recorded before it has closed (each continues as new within ADMISSION_HISTORY_EVENTS); those
 * recorded before ACTIVITY_ANSWERS_PATCH still mark the check where they made it.
 */
const BOUNDED_SWEEP_PATCH = 'admission-bounded-sweep';
/**
 * Deprecated (docs/patches.md): before it, a draining execution sent the answers decided meanwhile instead of
 * keeping them for the next one, and under steady traffic never continued as new. Every execution recorded
 * before it has closed; those recorded before BATCHED_ANSWERS_PATCH still mark the check where they made it.
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

/** Events before the semaphore continues as new: it lives as long as the deployment, so keep replays short. */
export const ADMISSION_HISTORY_EVENTS = 2_000;

const { admissionClosedOwners } = proxyActivities<AdmissionActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 2 },
});

// One activity for many answers. It beats after each group of signals: an attempt lost with its worker is
// given up within the heartbeat timeout (not the start-to-close one), and the next resumes where it was. An
// attempt that fails (the server unreachable) is tried again a few times before its answers wait
// (`Outbox.deliver`).
const { sendAdmissionAnswers } = proxyActivities<AdmissionActivities>({
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

// Executions recorded before: the same delivery as a local activity, inside the workflow task.
const { deliverAdmissionAnswers } = localActivities<AdmissionActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 5 },
});

export async function admissionWorkflow(input: AdmissionWorkflowInput): Promise<never> {
  // Every decision between versions, made first thing (see ACTIVITY_ANSWERS_PATCH); executions recorded before
  // it make theirs where they did.
  const current = patched(ACTIVITY_ANSWERS_PATCH);
  const batched = current || patched(BATCHED_ANSWERS_PATCH);
  const outbox = new Outbox(batched, {
    send: (batch) => (current ? sendAdmissionAnswers(batch) : deliverAdmissionAnswers(batch)),
    signal: (owner, answer) => getExternalWorkflowHandle(owner).signal(admissionAnswerSignal, answer),
    sleep,
    undelivered: (answer) => {
      slots.release(answer.slot, Date.now(), answer.outcome === 'granted');
      alarm.changed(Date.now());
    },
  });
  const slots: Slots = new Slots(input, (owner, answer) => outbox.tell(owner, answer));
  const alarm: Alarm = new Alarm(current || patched(UNCANCELLED_TIMERS_PATCH), {
    sleep,
    condition: (ready, timeoutMs) =>
      timeoutMs === undefined ? condition(ready) : condition(ready, timeoutMs),
    deadline: (now) => Math.min(slots.nextDeadline(now) ?? Infinity, sweep.dueAt(now)),
  });
  const sweep = new Sweep(slots, { closedOwners: (owners) => admissionClosedOwners(owners) });
  slots.quietRepeats = batched;
  for (const { owner, answer } of input.carry?.answers ?? []) outbox.tell(owner, answer);
  // Handlers decide at once; the loop is woken only when one of them made its next deadline earlier.
  setHandler(admissionStateQuery, () => slots.state());
  setHandler(acquireSlotSignal, (request) => {
    const answer = slots.acquire(request, Date.now());
    if (answer) outbox.tell(request.owner, answer);
    alarm.changed(Date.now());
  });
  setHandler(releaseSlotSignal, ({ slot }) => {
    slots.release(slot, Date.now());
    alarm.changed(Date.now());
  });
  setHandler(declareWorkerSignal, (declaration) => {
    slots.declare(declaration, Date.now());
    alarm.changed(Date.now());
  });
  setHandler(
    leaseReportUpdate,
    (report) => {
      const reply = slots.report(report, Date.now());
      alarm.changed(Date.now());
      return reply;
    },
    // A report it cannot read (a worker of another version) is refused before it is accepted: no history,
    // and nothing thrown inside the workflow's task.
    { validator: validLeaseReport },
  );

  const draining = () => wantsContinueAsNew(input.history_events);
  for (;;) {
    const now = Date.now();
    slots.expire(now);
    slots.expireLeases(now);
    slots.grantWhatFits(now);
    // Each delivery is a round trip through the task queue, and under steady traffic answers wait at every
    // turn: the next execution sends them (the carry's `answers`), or this one would never continue as new.
    if (current && draining()) break;
    if (outbox.size > 0) {
      await outbox.deliver();
      continue;
    }
    if (sweep.due(now)) {
      if (!current) deprecatePatch(BOUNDED_SWEEP_PATCH);
      await sweep.run();
      continue;
    }
    if (draining()) break;
    await alarm.wait(now, () => outbox.size > 0 || draining());
  }
  if (!batched) {
    deprecatePatch(DEFERRED_ANSWERS_PATCH);
    outbox.defer();
    await condition(() => outbox.settled && allHandlersFinished());
  }
  const continueAsNew = makeContinueAsNewFunc<typeof admissionWorkflow>({
    workflowTaskTimeout: ADMISSION_WORKFLOW_TASK_TIMEOUT,
  });
  return await continueAsNew(nextExecution(input, slots, outbox));
}

/**
 * What the next execution starts with: the settings in force, the semaphore's state and the answers decided
 * since the last delivery, which it sends first thing.
 */
function nextExecution(input: AdmissionWorkflowInput, slots: Slots, outbox: Outbox): AdmissionWorkflowInput {
  const unsent = outbox.unsent();
  return {
    settings: slots.settings,
    ...(input.pool && { pool: input.pool }),
    carry: { ...slots.carry(), ...(unsent.length > 0 && { answers: unsent }) },
    ...(input.history_events !== undefined && { history_events: input.history_events }),
  };
}

function wantsContinueAsNew(historyEvents = ADMISSION_HISTORY_EVENTS): boolean {
  const info = workflowInfo();
  return info.continueAsNewSuggested || info.historyLength >= historyEvents;
}
