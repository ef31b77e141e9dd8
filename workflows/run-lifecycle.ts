/**
 * One run's lifecycle, the same for a lead run and every subagent: its execution slot first (before any model
 * call; a continued execution holds it already), then the agent's run, then either the next execution
 * (continue-as-new, the slot still held) or the end: the outcome from how the run ended, the slot given back,
 * the outcome in search attributes, and the workflow closed as its result says. Each workflow keeps only its
 * own queries and the words of its result; the order of the commands the two issue is fixed here, once.
 */
import {
  continueAsNew,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
  type QueryDefinition,
} from '@temporalio/workflow';
import type { SlotRequest } from '../contracts/admission';
import type { RunScope } from '../contracts/run-scope';
import type { LoopCarry } from '../contracts/loop-carry';
import type { TokenUsage } from '../contracts/messages';
import { unfinishedAnswer, type ModelErrorFallback } from '../contracts/model';
import { safetyStopText } from '../contracts/safety-finish-reason';
import { DELEGATION_LIMIT_STOP_REASON, type SubagentStopReason } from '../contracts/status';
import { summaryLine } from '../contracts/text';
import { loopCarry, type AgentLoopState } from './agent-loop';
import type { AgentRunEnd } from './agent-run';
import type { Clarifications } from './clarification';
import { closeWith, reportOutcome, reportState, type Closing } from './outcome';
import { admit, releaseSlot, type QueuedAt } from './admission-client';

/** The longest slot label: the admission workflow's state and the Web UI show it on one line. */
export const SLOT_LABEL_MAX_CHARS = 120;

/** The slot's label in the admission workflow's state: `general-purpose: Count the files`, cut to fit. */
export function slotLabel(agent: string, task: string): string {
  return summaryLine(`${agent}: ${task}`, SLOT_LABEL_MAX_CHARS);
}

/** How a run's execution ended (continue-as-new aside), in the terms both workflows word their results from. */
export interface RunOutcome {
  status: 'completed' | 'failed' | 'timed_out' | 'cancelled';
  /** A guard's cap: every agent's result names it. */
  stopReason?: SubagentStopReason;
  /**
   * A stop no guard made, named by the lead's result only (a subagent's stop reasons are the guards', as the
   * status contract says): the delegation limit, or an answer cut off at the model's output limit.
   */
  runStopReason?: typeof DELEGATION_LIMIT_STOP_REASON | 'model_length_capped';
  error?: string;
  /** A provider error retrying could not fix, or retries that ran out: the seeds' error fallback. */
  errorFallback?: ModelErrorFallback;
}

/** How a run's end reads, whichever agent ran: `cancelled` is the workflow's own words for a cancel. */
export function runOutcome(
  end: Exclude<AgentRunEnd, { kind: 'continue_as_new' }>,
  cancelled: string,
): RunOutcome {
  switch (end.kind) {
    case 'answered': {
      // Cut off at the output limit or refused: failed, whatever text there is kept as the partial output.
      const unfinished = unfinishedAnswer(end.finishReason);
      if (!unfinished) return { status: 'completed' };
      return {
        status: 'failed',
        error: unfinished.error,
        ...(unfinished.cause === 'cut_off' && { runStopReason: 'model_length_capped' as const }),
      };
    }
    case 'guard_stopped':
      return { status: 'completed', stopReason: end.stopReason };
    case 'delegation_capped':
      // Not a guard's cap: the agent finished with what its children returned, and its text carries the
      // limit note.
      return { status: 'completed', runStopReason: DELEGATION_LIMIT_STOP_REASON };
    case 'error_fallback':
      return { status: 'failed', error: end.error.message, errorFallback: end.error };
    case 'acceptance_failed':
      return { status: 'failed', error: end.error };
    case 'safety_stopped':
      return { status: 'failed', error: safetyStopText(end.finishReason, end.droppedTools) };
    case 'activity_failed':
      // The model activity ran out of retries (a provider that kept answering 429/5xx, or never answered).
      return { status: 'failed', error: end.message, errorFallback: { message: end.message } };
    case 'remote_ended':
      // The remote side's end and reason, never its partial output as a success.
      return { status: end.status, error: end.error };
    case 'timed_out':
      return { status: 'timed_out' };
    case 'cancelled':
      return { status: 'cancelled', error: cancelled };
  }
}

/** Why a run ended without its slot: refused at admission, or cancelled while it waited. */
export interface SlotRefusal {
  status: 'failed' | 'cancelled';
  error: string;
  /** Refused by its own `admit` (the user's daily budget) before it asked for a slot, not by admission. */
  beforeSlot?: true;
}

/** Where a run stands, for its status query: kept by the lifecycle, worded by each workflow's query. */
export interface RunStanding {
  /** Its slot is asked for and not granted (yet). */
  awaitingSlot: boolean;
  /** While its request waits in the queue: where it stood when it joined, and since when. */
  queuedAt?: QueuedAt;
  /** The run has ended: its result is being reported and closed with. */
  finished: boolean;
}

/** What the lead's and a subagent's inputs both say about the lifecycle. */
export interface LifecycleInput {
  asks_slot?: true;
  uncancelled_timers?: true;
  admitted_at?: string;
  honest_close?: true;
  /** The run's settings (contracts/run-scope.ts): its questions' count goes on across executions. */
  scope: Pick<RunScope, 'clarification'>;
  carry?: { continued: number };
}

/** How the agent's run of this execution ended, and what the next execution would start from. */
export interface ExecutionEnd<I> {
  end: AgentRunEnd;
  /** The next execution's input from the loop's carry; the lifecycle adds the questions asked and the slot. */
  next(carry: LoopCarry): I;
  /** Its questions (`ask_clarification`): how many were asked counts on across executions. */
  clarifications: Pick<Clarifications, 'asked'>;
}

/** What a lead run's and a subagent's results both say: the closing line and the search attributes read it. */
export interface RunResult {
  status: string;
  stop_reason?: string;
  error?: string;
  turns: number;
}

/** One workflow's part in the lifecycle: its slot, its status query, its run, and the words of its result. */
export interface Lifecycle<I extends LifecycleInput, R extends RunResult, S> {
  input: I;
  state: AgentLoopState;
  /** `lead` or the subagent's type: the closing line's name. */
  agent: string;
  slot: {
    /** Histories recorded before this kind of run took a slot start the loop at once. */
    patch: string;
    request: Pick<SlotRequest, 'fairness_key' | 'label' | 'pool'>;
    /** A subagent's task id: its parent hears when it is queued and admitted. */
    taskId?: string;
    /**
     * A slot granted at once starts the wall clock at the server's start, as a subagent's hard backstop
     * counts (a wait for a worker counts against both alike); else, as for a lead run that has no backstop,
     * at the grant. A run that waited in the queue counts from the grant either way.
     */
    clockFromStart: boolean;
  };
  status: { query: QueryDefinition<S>; answer(standing: RunStanding): S };
  /** Before its slot is asked (the lead's user's daily budget): an error refuses the run, as `refused` words it. */
  admit?(): Promise<string | undefined>;
  /** Runs the agent, its wall clock counted from `admittedAt` (absent: the server's start). */
  run(admittedAt: string | undefined): Promise<ExecutionEnd<I>>;
  /** The workflow's words: for a cancel, for a run that got no slot, for a run that ended. */
  cancelled: string;
  refused(refusal: SlotRefusal): R;
  ended(outcome: RunOutcome): R;
  /** The tokens the result counts (the lead's: its own and its children's). */
  tokens(result: R): TokenUsage | undefined;
  /**
   * What it reports outside (the lead's spend, to its user's daily ledger): before each continue-as-new, and
   * once it ends (with its `result`: the lead's memory hears of it then), its result made and its slot given
   * back, before it closes.
   */
  settle?(result?: R): Promise<void>;
  /** What those tokens cost in USD, when any call was priced (`TotalCostUsd`, the final line). */
  costUsd?(result: R): number | undefined;
  /** Lead-only metrics plug in here: called once the outcome is reported, before the workflow closes. */
  onEnd?(result: R): void;
  /** A failed and a timed-out ending's failure type and message prefix (contracts/closing.ts). */
  failures: { failed: Closing['failure']; timedOut: Closing['failure'] };
  /** How a history from before `honest-close` closed (default: it returned the result). */
  closedBefore?(result: R): R;
}

/** Runs one execution of a lead run or a subagent, from its slot to its close or its next execution. */
export async function runLifecycle<I extends LifecycleInput, R extends RunResult, S>(
  life: Lifecycle<I, R, S>,
): Promise<R> {
  const { input } = life;
  // The input says whether the run holds a slot (the patch, checked only for inputs from before, would cost a
  // marker and an upsert).
  const holdsSlot = input.asks_slot === true || input.admitted_at !== undefined || patched(life.slot.patch);
  let admittedAt = input.admitted_at;
  const standing: RunStanding = { awaitingSlot: holdsSlot && admittedAt === undefined, finished: false };
  setHandler(life.status.query, () => life.status.answer(standing));
  const refusal = await life.admit?.();
  if (refusal !== undefined) {
    standing.finished = true;
    return close(life, life.refused({ status: 'failed', error: refusal, beforeSlot: true }));
  }
  if (standing.awaitingSlot) {
    const slot = await takeSlot(life, standing);
    if ('error' in slot) {
      standing.finished = true;
      return close(life, life.refused(slot));
    }
    admittedAt = slot.admittedAt;
    standing.awaitingSlot = false;
  }
  const { end, next, clarifications } = await life.run(admittedAt);
  if (end.kind === 'continue_as_new') {
    await life.settle?.();
    const following = next(loopCarry(life.state, (input.carry?.continued ?? 0) + 1));
    const { clarification } = input.scope;
    return await continueAsNew<(input: I) => Promise<R>>({
      ...following,
      ...(clarification && {
        scope: {
          ...following.scope,
          clarification: { ...clarification, questions_asked: clarifications.asked },
        },
      }),
      // The slot stays held across executions.
      ...(admittedAt !== undefined && { admitted_at: admittedAt }),
    });
  }
  const outcome = runOutcome(end, life.cancelled);
  standing.finished = true;
  if (holdsSlot) await releaseSlot(workflowInfo().workflowId, life.slot.request.pool);
  const result = life.ended(outcome);
  await life.settle?.(result);
  return close(life, result);
}

/** The run's slot: when it was granted (the wall clock's start), or why the run ends without one. */
async function takeSlot<I extends LifecycleInput, R extends RunResult, S>(
  life: Lifecycle<I, R, S>,
  standing: RunStanding,
): Promise<{ admittedAt: string } | SlotRefusal> {
  const { workflowId } = workflowInfo();
  const request: SlotRequest = { slot: workflowId, owner: workflowId, ...life.slot.request };
  try {
    const admission = await admit(
      request,
      { taskId: life.slot.taskId, uncancelled: life.input.uncancelled_timers === true },
      (queued) => {
        standing.queuedAt = queued;
        reportState(queued ? 'queued' : 'running');
      },
    );
    // Refused before any model call: the result says so, so a batch can tell it from a failed run.
    if (!admission.admitted) return { status: 'failed', error: admission.error };
    const granted = admission.queued || !life.slot.clockFromStart ? new Date() : workflowInfo().startTime;
    return { admittedAt: granted.toISOString() };
  } catch (err) {
    if (!isCancellation(err)) throw err;
    return { status: 'cancelled', error: life.cancelled };
  }
}

/**
 * The run's last acts: its outcome in search attributes, then its ending as Temporal shows it
 * (contracts/closing.ts): a failed or timed-out run fails its workflow, its result in the failure's details;
 * a cancelled one ends Canceled, its result in its memo.
 */
function close<I extends LifecycleInput, R extends RunResult, S>(life: Lifecycle<I, R, S>, result: R): R {
  const tokens = life.tokens(result);
  const costUsd = life.costUsd?.(result);
  const reading = {
    status: result.status,
    ...(result.stop_reason && { stopReason: result.stop_reason }),
    ...(result.error !== undefined && { error: result.error }),
    turns: result.turns,
    ...(tokens && { tokens }),
    ...(costUsd !== undefined && { costUsd }),
  };
  reportOutcome(reading);
  life.onEnd?.(result);
  const { closedBefore } = life;
  return closeWith(
    result,
    {
      agent: life.agent,
      declared: life.input.honest_close === true,
      ...reading,
      failure: reading.status === 'timed_out' ? life.failures.timedOut : life.failures.failed,
    },
    closedBefore && (() => closedBefore(result)),
  );
}
