/**
 * `batchWorkflow`: many independent items, each run by its own `subagentWorkflow` child with the id
 * `<batch id>/item/<key>/<attempt>` (contracts/batch.ts). The batch asks the task queue's admission workflow
 * for each item's slot itself (the owner of the request), and starts the child holding the granted slot
 * (`admitted_at` in its input: the child does not ask again, and gives the slot back when it ends). So at most
 * `max_running_items` children execute, and at most `max_live_items` items are started or waiting for a slot.
 * A refusal at admission puts the item back without spending an attempt; an attempt that failed (or failed its
 * acceptance criteria) is retried after backoff, and only after its child has closed: two attempts of one item
 * never overlap. The history holds a bounded window of items in flight; the batch continues as new when the
 * server suggests it (after its items in flight are done), carrying one compact record per item.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  getCurrentDetails,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  TerminatedFailure,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { AcceptanceActivities } from '../activities/acceptance';
import type { AdmissionActivities } from '../activities/admission';
import {
  admissionAnswerSignal,
  subagentAdmissionSignal,
  type AdmissionAnswer,
  type SlotRequest,
} from '../contracts/admission';
import {
  BATCH_STATUS_PAGE_MAX,
  batchItemWorkflowId,
  batchStatusQuery,
  type BatchCarry,
  type BatchCounters,
  type BatchInput,
  type BatchItemRecord,
  type BatchItemState,
  type BatchItemView,
  type BatchResult,
  type BatchStatus,
} from '../contracts/batch';
import { INVALID_INPUT_FAILURE_TYPE } from '../contracts/inputs';
import { subagentProgressSignal } from '../contracts/queries';
import { runSearchAttributes } from '../contracts/search-attributes';
import {
  failedSubagentResult,
  SUBAGENT_TIMEOUT_GRACE_SECONDS,
  type SubagentInput,
  type SubagentResult,
} from '../contracts/subagent';
import { decidedBatchItemsProblems } from './batch-validation';
import type { subagentWorkflow } from './subagent';
import { closeWith, reportOutcome } from './outcome';
import { recordDelegationEnd } from './metrics';
import { promptDetails, summaryLine } from '../contracts/text';

/** Events past which the batch continues as new (when the server has not suggested it sooner). */
export const BATCH_HISTORY_EVENTS = 10_000;

/** A request queued at admission that heard nothing for this long asks again (the admission workflow may be new). */
const ASK_AGAIN_MS = 60_000;

/** The longest error kept in an item's record. */
const RECORD_ERROR_CHARS = 300;

const { acquireSlot, releaseSlot } = proxyLocalActivities<AdmissionActivities>({
  startToCloseTimeout: '20 seconds',
  retry: { maximumAttempts: 5, initialInterval: '200 milliseconds' },
});

const { checkAcceptance } = proxyActivities<AcceptanceActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

/** An item in flight: its slot asked for (`asking`, `queued`), granted (`granted`), or its child running. */
interface Live {
  attempt: number;
  slot: string;
  phase: 'asking' | 'queued' | 'granted' | 'running' | 'checking';
  /** Since when it has waited without an answer (ask again past ASK_AGAIN_MS). */
  askedAt: number;
  grantedAt?: string;
}

const ZERO_COUNTERS: BatchCounters = { completed: 0, failed: 0, cancelled: 0, attempts: 0, requeued: 0 };

function brief(text: string): string {
  return text.length > RECORD_ERROR_CHARS ? `${text.slice(0, RECORD_ERROR_CHARS - 1)}…` : text;
}

export async function batchWorkflow(input: BatchInput): Promise<BatchResult> {
  const { items, limits } = input;
  const problems = input.carry ? [] : decidedBatchItemsProblems(items);
  if (limits.max_running_items > limits.max_live_items) {
    problems.push(
      `limits.max_running_items: ${limits.max_running_items} is above max_live_items (${limits.max_live_items})`,
    );
  }
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `The batch input is refused:\n  ${problems.join('\n  ')}`,
      INVALID_INPUT_FAILURE_TYPE,
    );
  }
  const batchId = workflowInfo().workflowId;
  const runId = input.run_id ?? batchId;
  const records: BatchItemRecord[] =
    input.carry?.records ?? items.map(() => ({ state: 'pending', attempts: 0 }) as BatchItemRecord);
  const counters: BatchCounters = input.carry?.counters ?? { ...ZERO_COUNTERS };
  const startedAt = input.carry?.started_at ?? workflowInfo().startTime.toISOString();
  const live = new Map<number, Live>();
  const bySlot = new Map<string, number>();
  // Items to ask for, in item order; those backing off wait in `later` until their time.
  const ready: number[] = [];
  const later: number[] = [];
  records.forEach((record, i) => {
    if (record.state !== 'pending') return;
    (record.not_before === undefined ? ready : later).push(i);
  });
  let running = 0;
  let cancelled = false;
  let draining = false;
  let changed = false;
  let finishedStatus: 'completed' | 'cancelled' | undefined;
  const touch = () => (changed = true);

  const record = (i: number): BatchItemRecord => records[i];
  const finish = (
    i: number,
    state: 'completed' | 'failed' | 'cancelled',
    patch: Partial<BatchItemRecord>,
  ) => {
    records[i] = { ...record(i), ...patch, state, not_before: undefined };
    counters[state] += 1;
  };
  const backOff = (i: number, ms: number) => {
    records[i] = { ...record(i), not_before: Date.now() + ms };
    later.push(i);
  };
  const leave = (i: number) => {
    const entry = live.get(i);
    if (!entry) return;
    if (entry.phase === 'running') running -= 1;
    live.delete(i);
    bySlot.delete(entry.slot);
    touch();
  };
  const request = (i: number, slot: string): SlotRequest => ({
    slot,
    owner: batchId,
    fairness_key: input.fairness_key ?? runId,
    label: `${input.subagent_type}: ${input.description} [${items[i].key}]`,
  });

  setHandler(admissionAnswerSignal, (answer: AdmissionAnswer) => {
    const i = bySlot.get(answer.slot);
    const entry = i === undefined ? undefined : live.get(i);
    // Only a request still waiting hears its answer: a second grant (the answer to asking again) must not
    // start an attempt that has started, or has already ended.
    if (i === undefined || !entry || (entry.phase !== 'asking' && entry.phase !== 'queued')) return;
    if (answer.outcome === 'granted') {
      entry.phase = 'granted';
      entry.grantedAt = new Date().toISOString();
    } else if (answer.outcome === 'queued') {
      entry.phase = 'queued';
    } else {
      // Refused (capacity full, queue timeout): back in the queue, no attempt spent.
      leave(i);
      records[i] = { ...record(i), refusals: (record(i).refusals ?? 0) + 1 };
      counters.requeued += 1;
      backOff(i, limits.retry_backoff_seconds * 1000);
    }
    touch();
  });
  // The items' own notices to their parent: the batch follows them by their results alone.
  setHandler(subagentProgressSignal, () => undefined);
  setHandler(subagentAdmissionSignal, () => undefined);

  setHandler(batchStatusQuery, (page = {}) => {
    const offset = Math.max(0, page.offset ?? 0);
    const limit = Math.min(BATCH_STATUS_PAGE_MAX, Math.max(0, page.limit ?? 50));
    const counts: Record<BatchItemState, number> = {
      pending: 0,
      waiting: 0,
      running: 0,
      completed: 0,
      failed: 0,
      cancelled: 0,
    };
    const view = (i: number): BatchItemView => {
      const entry = live.get(i);
      const { state, attempts, stop_reason, error, accepted } = record(i);
      const started = entry?.phase === 'running' || entry?.phase === 'checking';
      const shown: BatchItemState = entry ? (started ? 'running' : 'waiting') : state;
      const attempt = started ? entry.attempt : attempts;
      return {
        key: items[i].key,
        state: shown,
        attempts: attempt,
        ...(attempt > 0 && { workflow_id: batchItemWorkflowId(batchId, items[i].key, attempt) }),
        ...(stop_reason && { stop_reason }),
        ...(error !== undefined && { error }),
        ...(accepted !== undefined && { accepted }),
      };
    };
    records.forEach((_, i) => (counts[view(i).state] += 1));
    const status: BatchStatus = {
      batch_id: batchId,
      status: finishedStatus ?? 'running',
      description: input.description,
      subagent_type: input.subagent_type,
      total: items.length,
      counts,
      counters,
      limits,
      started_at: startedAt,
      items: items.slice(offset, offset + limit).map((_, j) => view(offset + j)),
    };
    return status;
  });

  /** Asks for item i's slot (a local activity); the answer comes by signal. */
  const ask = (i: number) => {
    const attempt = record(i).attempts + 1;
    const slot = batchItemWorkflowId(batchId, items[i].key, attempt);
    live.set(i, { attempt, slot, phase: 'asking', askedAt: Date.now() });
    bySlot.set(slot, i);
    void acquireSlot(request(i, slot)).then(
      () => {
        // No wake-up for this: how a replay groups local activities' results into activations differs from
        // the original's, so the loop's iterations must not depend on them.
        const entry = live.get(i);
        if (entry?.phase === 'asking') entry.phase = 'queued';
      },
      (err: unknown) => {
        if (cancelled || isCancellation(err)) return;
        // No admission to be had just now: as a refusal, without spending an attempt.
        leave(i);
        counters.requeued += 1;
        backOff(i, limits.retry_backoff_seconds * 1000);
      },
    );
  };

  /** Runs item i's attempt in its granted slot, to the end: its record says how it went. */
  const run = async (i: number, entry: Live): Promise<void> => {
    entry.phase = 'running';
    running += 1;
    counters.attempts += 1;
    const item = items[i];
    const { agent } = input;
    const child: SubagentInput = {
      run_id: runId,
      task_id: `${item.key}/${entry.attempt}`,
      description: `${input.description} [${item.key}]`,
      prompt: item.prompt,
      subagent_type: input.subagent_type,
      agent,
      loop_detection: input.loop_detection,
      workspace: input.workspace,
      sandbox: input.sandbox,
      depth: input.depth,
      ...(input.summarization && { summarization: input.summarization }),
      fairness_key: input.fairness_key ?? runId,
      // Progress reports would fill the batch's history: the batch follows its items by their results.
      first_report_after_ms: (agent.timeout_seconds + SUBAGENT_TIMEOUT_GRACE_SECONDS) * 1000,
      admitted_at: entry.grantedAt ?? new Date().toISOString(),
      honest_close: true,
    };
    let result: SubagentResult;
    try {
      const handle = await startChild<typeof subagentWorkflow>('subagentWorkflow', {
        workflowId: entry.slot,
        args: [child],
        workflowExecutionTimeout: `${agent.timeout_seconds + SUBAGENT_TIMEOUT_GRACE_SECONDS} seconds`,
        staticSummary: summaryLine(`${input.subagent_type}: ${item.key} (attempt ${entry.attempt})`),
        staticDetails: promptDetails(item.prompt),
        memo: { batch_id: batchId, key: item.key, attempt: entry.attempt, model: agent.model.name },
        typedSearchAttributes: runSearchAttributes(runId, input.subagent_type, input.depth),
      });
      result = await handle.result();
    } catch (err) {
      const failed = failedSubagentResult(err);
      result = failed ?? closedWithout(err, agent.timeout_seconds);
      // A child that ran none of its own code at the end kept its slot: give it back. (One that failed with its
      // result gave its slot back itself.)
      if (!failed && result.status !== 'cancelled') await giveBack(entry.slot);
    }
    recordDelegationEnd(result, input.subagent_type);
    // Its slot is free: the next item may run while this one's answer is checked.
    records[i] = { ...record(i), attempts: entry.attempt };
    entry.phase = 'checking';
    running -= 1;
    touch();
    if (result.status === 'cancelled' || cancelled) {
      leave(i);
      finish(i, 'cancelled', { error: result.error ?? 'Batch cancelled' });
      return;
    }
    let accepted: boolean | undefined;
    let error = result.error;
    if (result.status === 'completed' && item.acceptance_criteria?.length) {
      try {
        // By an activity, even for the answer-only forms: a user's regex must not run in the workflow.
        const verdict = await checkAcceptance({
          criteria: item.acceptance_criteria,
          answer: result.result ?? '',
          workspace: input.workspace,
        });
        accepted = verdict.passed;
        if (!verdict.passed) {
          const failed = verdict.checks.filter((check) => !check.passed).map((check) => check.criterion);
          error = `acceptance criteria not met: ${failed.join('; ')}`;
        }
      } catch (err) {
        if (isCancellation(err) || cancelled) {
          leave(i);
          finish(i, 'cancelled', { error: 'Batch cancelled' });
          return;
        }
        accepted = false;
        error = `acceptance check failed: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    leave(i);
    const succeeded = result.status === 'completed' && accepted !== false;
    const outcome = {
      ...(result.stop_reason && { stop_reason: result.stop_reason }),
      ...(error !== undefined && !succeeded && { error: brief(error) }),
      ...(accepted !== undefined && { accepted }),
    };
    if (succeeded) {
      records[i] = { ...record(i), error: undefined };
      finish(i, 'completed', outcome);
    } else if (entry.attempt < limits.max_attempts) {
      records[i] = { ...record(i), ...outcome };
      backOff(i, limits.retry_backoff_seconds * 1000 * 2 ** (entry.attempt - 1));
    } else {
      finish(i, 'failed', outcome);
    }
    touch();
  };

  // One timer for the next deadline (a backoff's end, a request to ask again), set only when a deadline comes
  // sooner than the one set: the timers a batch starts follow its deadlines, not how often the loop wakes.
  let alarmAt = Infinity;
  let alarm: CancellationScope | undefined;
  const setAlarm = (at: number, now: number, summary: string) => {
    if (!Number.isFinite(at) || at >= alarmAt) return;
    alarm?.cancel();
    const scope = new CancellationScope();
    alarm = scope;
    alarmAt = at;
    scope
      // Named for the Web UI's timeline: what the batch waits for.
      .run(() => sleep(Math.max(1, at - now), { summary }))
      .then(
        () => {
          if (alarm !== scope) return;
          alarm = undefined;
          alarmAt = Infinity;
          touch();
        },
        () => undefined,
      );
  };

  const terminal = () => counters.completed + counters.failed + counters.cancelled;
  // The Web UI's "Current Details" (in memory, no history event): the counts as the batch stands.
  const showProgress = () => {
    const waiting = [...live.values()].filter(
      (entry) => entry.phase !== 'running' && entry.phase !== 'checking',
    ).length;
    const pending = items.length - terminal() - live.size;
    const line =
      `**${input.subagent_type}** batch: ${terminal()} of ${items.length} done ` +
      `(${counters.completed} completed, ${counters.failed} failed) · ${running} running · ${waiting} waiting · ` +
      `${pending} pending · ${counters.attempts} attempts, ${counters.requeued} requeued`;
    if (line !== getCurrentDetails()) setCurrentDetails(line);
  };
  const inFlight = new Set<Promise<void>>();
  const wantsContinue = () => {
    const info = workflowInfo();
    // The server's suggestion, or this batch's own bound (lower in tests).
    return (
      info.continueAsNewSuggested || info.historyLength >= (input.history_events ?? BATCH_HISTORY_EVENTS)
    );
  };

  try {
    while (terminal() < items.length) {
      const now = Date.now();
      // Backed-off items whose time has come join the queue.
      for (let k = later.length - 1; k >= 0; k--) {
        const i = later[k];
        if ((record(i).not_before ?? 0) <= now) {
          later.splice(k, 1);
          records[i] = { ...record(i), not_before: undefined };
          ready.push(i);
        }
      }
      if (!draining && wantsContinue()) draining = true;
      if (!draining) {
        while (live.size < limits.max_live_items && ready.length > 0) ask(ready.shift()!);
      }
      for (const [i, entry] of live) {
        if (entry.phase === 'granted' && running < limits.max_running_items && !draining) {
          const attempt = run(i, entry);
          inFlight.add(attempt);
          void attempt.finally(() => inFlight.delete(attempt));
        } else if (draining && (entry.phase === 'queued' || entry.phase === 'granted')) {
          // Continuing as new: a slot asked for or granted goes back, the item with it.
          leave(i);
          ready.unshift(i);
          await giveBack(entry.slot);
        } else if (entry.phase === 'queued' && now - entry.askedAt >= ASK_AGAIN_MS) {
          entry.askedAt = now;
          void acquireSlot({ ...request(i, entry.slot), again: true }).catch(() => undefined);
        }
      }
      if (draining && live.size === 0) break;
      changed = false;
      const deadlines = [
        ...later.map((i) => ({ at: record(i).not_before ?? now, what: `backoff: item ${items[i].key}` })),
        ...[...live]
          .filter(([, entry]) => entry.phase === 'queued')
          .map(([i, entry]) => ({
            at: entry.askedAt + ASK_AGAIN_MS,
            what: `admission: ask again for item ${items[i].key}`,
          })),
      ];
      const next = deadlines.reduce<(typeof deadlines)[number] | undefined>(
        (soonest, deadline) => (soonest === undefined || deadline.at < soonest.at ? deadline : soonest),
        undefined,
      );
      if (next) setAlarm(next.at, now, next.what);
      showProgress();
      await condition(() => changed);
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    cancelled = true;
  }

  if (cancelled) {
    await CancellationScope.nonCancellable(async () => {
      // Running attempts end cancelled (their children were cancelled with the batch); the rest never run.
      await Promise.allSettled([...inFlight]);
      for (const [i, entry] of [...live]) {
        leave(i);
        await giveBack(entry.slot);
      }
      records.forEach(
        (item, i) => item.state === 'pending' && finish(i, 'cancelled', { error: 'Batch cancelled' }),
      );
    });
    finishedStatus = 'cancelled';
    reportOutcome({ status: 'cancelled' });
    return close(result('cancelled'));
  }
  if (terminal() < items.length) {
    const carry: BatchCarry = {
      records,
      counters,
      continued: (input.carry?.continued ?? 0) + 1,
      started_at: startedAt,
    };
    return await continueAsNew<typeof batchWorkflow>({ ...input, carry });
  }
  finishedStatus = 'completed';
  reportOutcome({ status: 'completed' });
  return close(result('completed'));

  /**
   * The batch's ending as Temporal shows it (contracts/closing.ts), its final counts in its details: a
   * cancelled batch ends Canceled, its result in its memo.
   */
  function close(end: BatchResult): BatchResult {
    const { completed, failed, cancelled: cancelledItems } = end.counts;
    return closeWith(end, {
      agent: `${input.subagent_type} batch`,
      declared: input.honest_close === true,
      status: end.status,
      extra:
        `${items.length} items: ${completed} completed, ${failed} failed, ${cancelledItems} cancelled · ` +
        `${counters.attempts} attempts, ${counters.requeued} requeued`,
      ...(end.status === 'cancelled' && { error: 'Batch cancelled' }),
    });
  }

  function result(status: 'completed' | 'cancelled'): BatchResult {
    const counts: Record<BatchItemState, number> = {
      pending: 0,
      waiting: 0,
      running: 0,
      completed: counters.completed,
      failed: counters.failed,
      cancelled: counters.cancelled,
    };
    return { batch_id: batchId, status, total: items.length, counts, counters };
  }
}

/** Gives a slot back (or withdraws its request); never fails, runs even when cancelled. */
async function giveBack(slot: string): Promise<void> {
  await CancellationScope.nonCancellable(() => releaseSlot(slot).catch(() => undefined));
}

/** An attempt whose child ended without returning its result: cancelled, cut by its backstop, terminated. */
function closedWithout(err: unknown, timeoutSeconds: number): SubagentResult {
  if (isCancellation(err)) return { status: 'cancelled', error: 'Batch cancelled', turns: 0 };
  if (err instanceof ChildWorkflowFailure && err.cause instanceof TimeoutFailure) {
    return { status: 'timed_out', error: `Execution timed out after ${timeoutSeconds} seconds`, turns: 0 };
  }
  if (err instanceof ChildWorkflowFailure && err.cause instanceof TerminatedFailure) {
    return { status: 'failed', error: 'The item was terminated', turns: 0 };
  }
  const message = err instanceof ChildWorkflowFailure && err.cause ? err.cause.message : String(err);
  return { status: 'failed', error: message, turns: 0 };
}
