/**
 * The one client of the task queue's admission workflow in the workflow floor: a subagent's first step (and a
 * lead run's, from its own pool) waits here for its execution slot (`admit`); a batch asks for its items' slots
 * itself (`acquireSlot`, the answers by signal to its own handler); every owner gives a slot back with
 * `releaseSlot`, and a parent whose child closed without running its own code with `releaseForClosedChild`.
 * A request is a local activity, within the workflow's task: granted there from the worker's lease of spare slots
 * when it holds one (activities/admission-lease.ts), else sent by signal, the answer coming by signal. A queued request waits as workflow state (no worker slot, no thread) and tells the
 * parent, if any, it is queued, then admitted.
 */
import { recordAdmissionWait } from './metrics';
import { timedWait } from './timed-wait';
import {
  CancellationScope,
  ChildWorkflowFailure,
  getExternalWorkflowHandle,
  patched,
  setHandler,
  TerminatedFailure,
  TimeoutFailure,
  workflowInfo,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import { localActivities } from './local-activities';
import type { AdmissionActivities } from '../activities/admission';
import {
  admissionAnswerSignal,
  admissionWorkflowId,
  releaseSlotSignal,
  subagentAdmissionSignal,
  type AdmissionAnswer,
  type AdmissionPool,
  type SlotRequest,
  type SubagentAdmissionUpdate,
} from '../contracts/admission';

/**
 * A queued request that heard nothing for this long asks again (the admission workflow may have been reset):
 * a subagent's, a lead's and a batch item's alike.
 */
export const ADMISSION_RESEND_MS = 60_000;

/** Asking and giving back are quick signals from this worker: a short timeout, a few quick retries. */
const ADMISSION_LOCAL_ACTIVITY_OPTIONS: LocalActivityOptions = {
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 5, initialInterval: '200 milliseconds' },
};

const { acquireSlot: acquireSlotActivity, releaseSlot: releaseSlotActivity } =
  localActivities<AdmissionActivities>(ADMISSION_LOCAL_ACTIVITY_OPTIONS);

/**
 * Sends a slot request (again, with `again`: idempotent) and returns once it is sent; the answer comes by
 * `admissionAnswerSignal` to the owner's handler. For an owner that follows many requests itself (a batch).
 */
export async function acquireSlot(request: SlotRequest): Promise<void> {
  await acquireSlotActivity(request);
}

/** `queued`: the request had to wait for its slot. */
export type Admission = { admitted: true; queued: boolean } | { admitted: false; error: string };

/** While a request waits in the queue: where it stood when it joined (it included), and since when. */
export interface QueuedAt {
  running: number;
  queued: number;
  /** ISO 8601. */
  since: string;
}

/** Tells the parent (when there is one) about the slot; a parent that has finished cannot take it. */
function tellParent(update: SubagentAdmissionUpdate): void {
  const parent = workflowInfo().parent;
  if (!parent) return;
  void getExternalWorkflowHandle(parent.workflowId, parent.runId)
    .signal(subagentAdmissionSignal, update)
    .catch(() => undefined);
}

/**
 * Waits for a slot. Refused (capacity full, queue timeout, no admission to be had) it says why; cancelled while
 * waiting, the request is withdrawn and the cancellation goes on up. `onQueued` hears when it has to wait and
 * when the wait ends (undefined); a subagent's parent hears it too (`taskId`). `uncancelled`: the re-ask's timer
 * is left to fire, never cancelled by the answer (`timedWait`; the run's input says so, see `uncancelled_timers`).
 */
export async function admit(
  request: SlotRequest,
  { taskId, uncancelled = false }: { taskId?: string; uncancelled?: boolean },
  onQueued?: (queued: QueuedAt | undefined) => void,
): Promise<Admission> {
  let heard: AdmissionAnswer | undefined;
  setHandler(admissionAnswerSignal, (answer) => {
    if (answer.slot !== request.slot) return;
    // A `queued` that comes after the grant or refusal (a slow delivery attempt's, given up and sent again)
    // must not hide it: the request would wait for the re-ask, a minute, holding a slot it does not use.
    const superseded = answer.outcome === 'queued' && heard !== undefined && heard.outcome !== 'queued';
    if (superseded && patched(FINAL_ANSWER_PATCH)) return;
    heard = answer;
  });
  /** Sent: undefined, or the grant of a slot this worker leases; unavailable: why. */
  const ask = async (again = false): Promise<{ granted?: true } | { unavailable: string }> => {
    try {
      // A first request may be granted at once from this worker's lease; asked again, it goes by signal.
      const grant = again
        ? await acquireSlotActivity({ ...request, again: true })
        : await acquireSlotActivity(request, { lease: true });
      return grant?.outcome === 'granted' ? { granted: true } : {};
    } catch (err) {
      if (isCancelled()) throw err;
      const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err);
      return { unavailable: `Subagent admission is unavailable: ${cause}` };
    }
  };
  const askedAt = Date.now();
  const pool = request.pool ?? 'subagents';
  try {
    const first = await ask();
    if ('unavailable' in first) return { admitted: false, error: first.unavailable };
    if (first.granted) {
      recordAdmissionWait(pool, 'granted', Date.now() - askedAt);
      return { admitted: true, queued: false };
    }
    let queued = false;
    for (;;) {
      // The answer comes by signal: at once (granted, queued, refused), and again for a queued request.
      const answered = await timedWait(
        () => heard !== undefined && (heard.outcome !== 'queued' || !queued),
        ADMISSION_RESEND_MS,
        uncancelled,
        'admission: waiting for a slot (asks again after a minute of silence)',
      );
      if (!answered) {
        // Nothing for a minute: ask again (idempotent), in case the admission workflow was reset meanwhile.
        const again = await ask(true);
        if ('unavailable' in again) return { admitted: false, error: again.unavailable };
        continue;
      }
      const answer = heard!;
      if (answer.outcome === 'queued') {
        queued = true;
        onQueued?.({ running: answer.running, queued: answer.queued, since: new Date().toISOString() });
        if (taskId !== undefined) {
          tellParent({ task_id: taskId, state: 'queued', running: answer.running, queued: answer.queued });
        }
        continue;
      }
      onQueued?.(undefined);
      if (answer.outcome === 'refused') {
        recordAdmissionWait(pool, 'refused', Date.now() - askedAt);
        return { admitted: false, error: answer.error };
      }
      if (queued && taskId !== undefined) tellParent({ task_id: taskId, state: 'admitted' });
      recordAdmissionWait(pool, 'granted', Date.now() - askedAt);
      return { admitted: true, queued };
    }
  } catch (err) {
    // Cancelled while waiting: the request must not keep a place in the queue.
    await releaseSlot(request.slot, request.pool);
    throw err;
  }
}

function isCancelled(): boolean {
  return CancellationScope.current().consideredCancelled;
}

/** Gives the slot back (or withdraws the request); runs even when cancelled, never fails. */
export async function releaseSlot(slot: string, pool?: AdmissionPool): Promise<void> {
  // A subagent's release keeps its one argument (as in the histories recorded before there were pools).
  const release = () =>
    pool === undefined || pool === 'subagents' ? releaseSlotActivity(slot) : releaseSlotActivity(slot, pool);
  await CancellationScope.nonCancellable(() => release().catch(() => undefined));
}

/**
 * A child terminated (from the UI) or cut by its hard backstop ran none of its own code at the end: its slot is
 * given back here at once rather than by the admission workflow's sweep. Awaited: the server drops the signals
 * of a workflow that has closed, and this one may be about to.
 */
export async function releaseForClosedChild(err: unknown, slot: string): Promise<void> {
  const closed =
    err instanceof ChildWorkflowFailure &&
    (err.cause instanceof TerminatedFailure || err.cause instanceof TimeoutFailure);
  if (!closed || !patched(CLOSED_CHILD_RELEASE_PATCH)) return;
  await CancellationScope.nonCancellable(() =>
    getExternalWorkflowHandle(admissionWorkflowId(workflowInfo().taskQueue))
      .signal(releaseSlotSignal, { slot })
      .catch(() => undefined),
  );
}

/** Histories recorded before admission sent no release for a terminated child. */
const CLOSED_CHILD_RELEASE_PATCH = 'admission-release-closed-child';
/** A late `queued` answer no longer overwrites the grant (or refusal) heard before it. */
const FINAL_ANSWER_PATCH = 'admission-final-answer';
