/**
 * A delegating workflow's side of admission: ask the task queue's admission workflow for a slot before a
 * child starts, wait for its answer as workflow state (a queued delegation holds no worker slot and no
 * thread), and give the slot back when the child has ended. The answers arrive as signals
 * (`admissionAnswerSignal`), routed here by the agent run.
 */
import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  proxyActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { AdmissionActivities } from '../../activities/admission';
import {
  acquireSlotSignal,
  admissionWorkflowId,
  releaseSlotSignal,
  type AdmissionAnswer,
  type SlotRequest,
} from '../../contracts/admission';

/** A request that heard nothing for this long is sent again (the admission workflow may have been reset). */
export const ADMISSION_RESEND_MS = 60_000;

const { restartAdmission } = proxyActivities<AdmissionActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

export type Admission = { admitted: true } | { admitted: false; error: string };

export class AdmissionGate {
  private readonly answers = new Map<string, AdmissionAnswer>();

  /** An answer from the admission workflow (a signal); answers for slots nobody waits on are dropped. */
  answer(answer: AdmissionAnswer): void {
    this.answers.set(answer.slot, answer);
  }

  /**
   * Waits for a slot. `onQueued` is called once if the request has to wait. Cancelled while waiting, the
   * request is withdrawn and the cancellation goes on up.
   */
  async acquire(
    request: SlotRequest,
    onQueued: (running: number, queued: number) => void,
  ): Promise<Admission> {
    const { slot } = request;
    this.answers.delete(slot);
    try {
      await send(request);
      let queued = false;
      for (;;) {
        const heard = await condition(() => {
          const outcome = this.answers.get(slot)?.outcome;
          return outcome !== undefined && (outcome !== 'queued' || !queued);
        }, ADMISSION_RESEND_MS);
        if (!heard) {
          await send(request);
          continue;
        }
        const answer = this.answers.get(slot);
        if (answer?.outcome === 'granted') return { admitted: true };
        if (answer?.outcome === 'refused') return { admitted: false, error: answer.error };
        if (answer?.outcome === 'queued' && !queued) {
          queued = true;
          onQueued(answer.running, answer.queued);
        }
      }
    } catch (err) {
      // Cancelled while waiting (or the answer could not be had): the request must not hold a place.
      await this.release(slot);
      if (err instanceof Error && err.name === 'AdmissionUnavailable') {
        return { admitted: false, error: err.message };
      }
      throw err;
    } finally {
      this.answers.delete(slot);
    }
  }

  /** Gives the slot back (or withdraws the request); never fails, and runs even when cancelled. */
  async release(slot: string): Promise<void> {
    await CancellationScope.nonCancellable(() =>
      admission()
        .signal(releaseSlotSignal, { slot })
        .catch(() => undefined),
    );
  }
}

function admission() {
  return getExternalWorkflowHandle(admissionWorkflowId(workflowInfo().taskQueue));
}

/** Sends the request; when the admission workflow is gone, starts it again (this worker's settings) first. */
async function send(request: SlotRequest): Promise<void> {
  try {
    await admission().signal(acquireSlotSignal, request);
    return;
  } catch {
    // No admission workflow: terminated by hand, or the server's data was reset under a running worker.
  }
  try {
    await restartAdmission();
    await admission().signal(acquireSlotSignal, request);
  } catch (err) {
    const unavailable = new Error(
      `Subagent admission is unavailable: ${err instanceof Error ? err.message : String(err)}`,
    );
    unavailable.name = 'AdmissionUnavailable';
    throw unavailable;
  }
}
