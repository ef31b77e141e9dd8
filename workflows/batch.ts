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
 *
 * The rules above are `BatchScheduler`'s (batch/scheduler.ts, unit-tested without a server); this file wires
 * admission answers, children, acceptance checks, the one timer and continue-as-new to it.
 */
import {
  ApplicationFailure,
  CancellationScope,
  ChildWorkflowFailure,
  condition,
  continueAsNew,
  getCurrentDetails,
  isCancellation,
  patched,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  TerminatedFailure,
  TimeoutFailure,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/common';
import type { AcceptanceActivities } from '../activities/acceptance';
import { admissionAnswerSignal, subagentAdmissionSignal, type SlotRequest } from '../contracts/admission';
import { batchStatusQuery, type BatchInput, type BatchResult } from '../contracts/batch';
import { INVALID_INPUT_FAILURE_TYPE } from '../contracts/inputs';
import { guardrailNoticeSignal, subagentProgressSignal, workspaceNoticeSignal } from '../contracts/queries';
import { FAILED_ITEMS, runSearchAttributes } from '../contracts/search-attributes';
import { batchTreeBudget, type BatchBudget } from './budget/batch-root';
import { batchItemScope, scoped, type UnscopedInput } from '../contracts/run-scope';
import { userIdProblem } from '../contracts/user';
import {
  failedSubagentResult,
  SUBAGENT_TIMEOUT_GRACE_SECONDS,
  type SubagentInput,
  type SubagentResult,
} from '../contracts/subagent';
import { promptDetails, summaryLine } from '../contracts/text';
import { acquireSlot, ADMISSION_RESEND_MS, releaseSlot } from './admission-client';
import { BatchScheduler, type LiveItem } from './batch/scheduler';
import { decidedBatchItemsProblems } from './batch-validation';
import { CRITERIA_NOT_MET } from './item-acceptance';
import { recordDelegationEnd } from './metrics';
import { closeWith, reportOutcome, reportsOutcome } from './outcome';
import type { subagentWorkflow } from './subagent';
import { WorkspaceRoute, workspaceKey } from './workspace-route';

/**
 * Histories recorded before an item checked its own criteria: the batch checked them after the item completed
 * (and the item closed Completed whatever the check said).
 */
const ITEM_ACCEPTANCE_PATCH = 'batch-item-acceptance';

/** Histories recorded before a batch with failed items reported them (it reported `completed`). */
const FAILED_ITEMS_PATCH = 'batch-failed-items';

/** Events past which the batch continues as new (when the server has not suggested it sooner). */
export const BATCH_HISTORY_EVENTS = 10_000;

// Where the workspace is (workflows/workspace-route.ts): the route adds its queue and retries to these.
const ACCEPTANCE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
};
const { checkAcceptance } = proxyActivities<AcceptanceActivities>(ACCEPTANCE_OPTIONS);

/** `started`: its run's settings in `scope`, or (recorded before the scope) at its top level. */
export async function batchWorkflow(started: BatchInput | UnscopedInput<BatchInput>): Promise<BatchResult> {
  const input = scoped<BatchInput>(started);
  refuseInvalid(input);
  const info = workflowInfo();
  const batch = new BatchScheduler(input, {
    batchId: info.workflowId,
    startedAt: info.startTime.toISOString(),
    askAgainMs: ADMISSION_RESEND_MS,
  });
  const { scope } = input;
  const route = new WorkspaceRoute(scope.workspace_placement, scope.workspace, workspaceKey(scope));
  const runner = new ItemRunner(input, batch, info.workflowId, route);
  // On its own (no lead run above it), a batch with a tree budget is its tree's root: its items share it.
  const budget =
    scope.tree_budget && input.run_id === undefined
      ? batchTreeBudget(scope.tree_budget, input.carry?.tree_budget)
      : undefined;

  setHandler(admissionAnswerSignal, (answer) => batch.answered(answer, Date.now()));
  // The items' own notices to their parent: the batch follows them by their results alone.
  setHandler(subagentProgressSignal, () => undefined);
  setHandler(guardrailNoticeSignal, () => undefined);
  setHandler(workspaceNoticeSignal, () => undefined);
  setHandler(subagentAdmissionSignal, () => undefined);
  setHandler(batchStatusQuery, (page = {}) => batch.status(page));

  try {
    while (!batch.done) {
      const now = Date.now();
      batch.releaseDue(now);
      if (!batch.draining && wantsContinue(input)) batch.draining = true;
      // The budget stopped the tree: what has not started never does (a retry of a capped item neither).
      const budgetStop = budget?.stopped();
      if (budgetStop) batch.cancelPending(`not started: the batch's tree budget stopped it (${budgetStop})`);
      for (let next = batch.askNext(now); next; next = batch.askNext(now)) runner.ask(next.item, next.slot);
      for (const step of batch.steps(now)) {
        if (step.kind === 'run') runner.start(step.item, step.entry);
        // Continuing as new: a slot asked for or granted goes back, the item with it.
        else if (step.kind === 'give_back') await releaseSlot(step.slot);
        else
          void acquireSlot({ ...runner.request(step.item, step.slot), again: true }).catch(() => undefined);
      }
      if (batch.drained) break;
      batch.changed = false;
      const next = batch.nextDeadline(now);
      if (next) runner.setAlarm(next.at, now, next.what);
      // The Web UI's "Current Details" (in memory, no history event): the counts as the batch stands.
      const line = batch.progressLine();
      if (line !== getCurrentDetails()) setCurrentDetails(line);
      await condition(() => batch.changed);
    }
  } catch (err) {
    if (!isCancellation(err)) throw err;
    runner.cancelled = true;
  }

  if (runner.cancelled) {
    await CancellationScope.nonCancellable(async () => {
      // Running attempts end cancelled (their children were cancelled with the batch); the rest never run.
      await Promise.allSettled([...runner.inFlight]);
      for (const [i, entry] of [...batch.live]) {
        batch.leave(i);
        await releaseSlot(entry.slot);
      }
      batch.cancelPending();
    });
    batch.ended = 'cancelled';
    reportOutcome({ status: 'cancelled' });
    return close(input, batch, 'cancelled', budget);
  }
  if (!batch.done) {
    const carry = {
      ...batch.carry((input.carry?.continued ?? 0) + 1),
      ...(budget && { tree_budget: budget.state() }),
    };
    return await continueAsNew<typeof batchWorkflow>({
      ...input,
      scope: { ...input.scope, ...route.inputField() },
      carry,
    });
  }
  batch.ended = 'completed';
  reportBatchEnd(batch.result('completed').counts.failed);
  return close(input, batch, 'completed', budget);
}

/**
 * A batch whose items all ran reports `completed`; one with failed items reports `failed` and how many
 * (`FailedItems`), so `SubagentStatus="failed"` finds it. It stays Completed in Temporal: it ran every item, and
 * the lead that started it reads its results.
 */
function reportBatchEnd(failedItems: number): void {
  if (failedItems === 0 || !reportsOutcome() || !patched(FAILED_ITEMS_PATCH)) {
    reportOutcome({ status: 'completed' });
    return;
  }
  reportOutcome({ status: 'failed' });
  upsertSearchAttributes([{ key: FAILED_ITEMS, value: failedItems }]);
}

/** Refuses an input no batch can run, before anything is asked or started. */
function refuseInvalid(input: BatchInput): void {
  const { items, limits } = input;
  const problems = input.carry ? [] : decidedBatchItemsProblems(items);
  if (limits.max_running_items > limits.max_live_items) {
    problems.push(
      `limits.max_running_items: ${limits.max_running_items} is above max_live_items (${limits.max_live_items})`,
    );
  }
  const userId = input.scope.user_id;
  const userProblem = userId === undefined ? undefined : userIdProblem(userId);
  if (userProblem !== undefined) problems.push(`user_id: ${JSON.stringify(userId)} ${userProblem}`);
  if (problems.length > 0) {
    throw ApplicationFailure.nonRetryable(
      `The batch input is refused:\n  ${problems.join('\n  ')}`,
      INVALID_INPUT_FAILURE_TYPE,
    );
  }
}

function wantsContinue(input: BatchInput): boolean {
  const info = workflowInfo();
  // The server's suggestion, or this batch's own bound (lower in tests).
  return info.continueAsNewSuggested || info.historyLength >= (input.history_events ?? BATCH_HISTORY_EVENTS);
}

/**
 * The batch's hands: it asks admission for the items' slots, runs each attempt's child and checks its answer,
 * and keeps the one timer for the next deadline. What to do, and when, is the scheduler's to say.
 */
class ItemRunner {
  /** The batch was cancelled: what ends from now on ends cancelled. */
  cancelled = false;
  readonly inFlight = new Set<Promise<void>>();
  private readonly runId: string;
  private alarmAt = Infinity;
  private alarm: CancellationScope | undefined;

  constructor(
    private readonly input: BatchInput,
    private readonly batch: BatchScheduler,
    private readonly batchId: string,
    private readonly route: WorkspaceRoute,
  ) {
    this.runId = input.run_id ?? batchId;
  }

  request(i: number, slot: string): SlotRequest {
    const { input } = this;
    return {
      slot,
      owner: this.batchId,
      fairness_key: input.scope.fairness_key ?? this.runId,
      label: `${input.subagent_type}: ${input.description} [${input.items[i].key}]`,
    };
  }

  /** Asks for item i's slot (a local activity); the answer comes by signal. */
  ask(i: number, slot: string): void {
    void acquireSlot(this.request(i, slot)).then(
      () => this.batch.sent(i),
      (err: unknown) => {
        if (this.cancelled || isCancellation(err)) return;
        this.batch.unavailable(i, Date.now());
      },
    );
  }

  /** Starts item i's attempt in its granted slot; it runs on while the batch goes on. */
  start(i: number, entry: LiveItem): void {
    const attempt = this.run(i, entry);
    this.inFlight.add(attempt);
    void attempt.finally(() => this.inFlight.delete(attempt));
  }

  /**
   * One timer for the next deadline (a backoff's end, a request to ask again), set only when a deadline comes
   * sooner than the one set: the timers a batch starts follow its deadlines, not how often the loop wakes.
   */
  setAlarm(at: number, now: number, summary: string): void {
    if (!Number.isFinite(at) || at >= this.alarmAt) return;
    this.alarm?.cancel();
    const scope = new CancellationScope();
    this.alarm = scope;
    this.alarmAt = at;
    scope
      // Named for the Web UI's timeline: what the batch waits for.
      .run(() => sleep(Math.max(1, at - now), { summary }))
      .then(
        () => {
          if (this.alarm !== scope) return;
          this.alarm = undefined;
          this.alarmAt = Infinity;
          this.batch.touch();
        },
        () => undefined,
      );
  }

  /** Runs item i's attempt to the end: its record says how it went. */
  private async run(i: number, entry: LiveItem): Promise<void> {
    const { batch, input } = this;
    batch.start(entry);
    const item = input.items[i];
    const { agent } = input;
    // The item checks its own criteria: an attempt that fails them is Failed where an operator looks.
    const itemChecks = item.acceptance_criteria?.length ? patched(ITEM_ACCEPTANCE_PATCH) : false;
    const child = childInput(input, this.runId, i, entry, itemChecks, this.route);
    let result: SubagentResult;
    try {
      const handle = await startChild<typeof subagentWorkflow>('subagentWorkflow', {
        workflowId: entry.slot,
        args: [child],
        workflowExecutionTimeout: `${agent.timeout_seconds + SUBAGENT_TIMEOUT_GRACE_SECONDS} seconds`,
        staticSummary: summaryLine(`${input.subagent_type}: ${item.key} (attempt ${entry.attempt})`),
        staticDetails: promptDetails(item.prompt),
        memo: { batch_id: this.batchId, key: item.key, attempt: entry.attempt, model: agent.model.name },
        typedSearchAttributes: runSearchAttributes(
          this.runId,
          input.subagent_type,
          input.depth,
          input.scope.user_id,
        ),
      });
      result = await handle.result();
    } catch (err) {
      const failed = failedSubagentResult(err);
      result = failed ?? closedWithout(err, agent.timeout_seconds);
      // A child that ran none of its own code at the end kept its slot: give it back. (One that failed with its
      // result gave its slot back itself.)
      if (!failed && result.status !== 'cancelled') await releaseSlot(entry.slot);
    }
    recordDelegationEnd(result, input.subagent_type);
    batch.childClosed(i, entry);
    if (result.status === 'cancelled' || this.cancelled) {
      batch.cancel(i, result.error ?? 'Batch cancelled');
      return;
    }
    let accepted: boolean | undefined;
    let error = result.error;
    if (itemChecks) accepted = result.status === 'completed' ? true : notAccepted(result);
    else if (result.status === 'completed' && item.acceptance_criteria?.length) {
      try {
        // By an activity, even for the answer-only forms: a user's regex must not run in the workflow.
        const criteria = item.acceptance_criteria;
        const verdict = await this.route.run(
          (place) =>
            checkAcceptance.executeWithOptions({ ...ACCEPTANCE_OPTIONS, ...place.home }, [
              {
                criteria,
                answer: result.result ?? '',
                workspace: input.scope.workspace,
                placement: place.placement,
              },
            ]),
          true,
        );
        accepted = verdict.passed;
        if (!verdict.passed) {
          const failed = verdict.checks.filter((check) => !check.passed).map((check) => check.criterion);
          error = `acceptance criteria not met: ${failed.join('; ')}`;
        }
      } catch (err) {
        if (isCancellation(err) || this.cancelled) {
          batch.cancel(i, 'Batch cancelled');
          return;
        }
        accepted = false;
        error = `acceptance check failed: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    const { status, stop_reason } = result;
    batch.settle(i, entry.attempt, { status, stop_reason, error, accepted }, Date.now());
  }
}

/** Item i's child input for this attempt, its slot already granted. */
function childInput(
  input: BatchInput,
  runId: string,
  i: number,
  entry: LiveItem,
  itemChecks: boolean,
  route: WorkspaceRoute,
): SubagentInput {
  const item = input.items[i];
  const { agent } = input;
  return {
    run_id: runId,
    task_id: `${item.key}/${entry.attempt}`,
    description: `${input.description} [${item.key}]`,
    prompt: item.prompt,
    subagent_type: input.subagent_type,
    agent,
    // Nobody waits on a batch's item: no questions, and an `ask` is decided by `unattended` at once.
    scope: batchItemScope(input.scope, runId, route.inputField()),
    depth: input.depth,
    // Progress reports would fill the batch's history: the batch follows its items by their results.
    first_report_at: new Date(
      Date.now() + (agent.timeout_seconds + SUBAGENT_TIMEOUT_GRACE_SECONDS) * 1000,
    ).toISOString(),
    admitted_at: entry.grantedAt ?? new Date().toISOString(),
    honest_close: true,
    ...(itemChecks && { acceptance_criteria: item.acceptance_criteria }),
  };
}

/** An attempt that checked its own criteria and failed: `false` when the criteria failed it, else unknown. */
function notAccepted(result: SubagentResult): false | undefined {
  return result.error?.startsWith(CRITERIA_NOT_MET) ? false : undefined;
}

/**
 * The batch's ending as Temporal shows it (contracts/closing.ts), its final counts in its details: a cancelled
 * batch ends Canceled, its result in its memo.
 */
function close(
  input: BatchInput,
  batch: BatchScheduler,
  status: 'completed' | 'cancelled',
  budget: BatchBudget | undefined,
): BatchResult {
  const end = { ...batch.result(status), ...(budget && { tree_budget: budget.report() }) };
  const { completed, failed, cancelled } = end.counts;
  const { attempts, requeued } = batch.counters;
  return closeWith(end, {
    agent: `${input.subagent_type} batch`,
    declared: input.honest_close === true,
    status: end.status,
    extra:
      `${input.items.length} items: ${completed} completed, ${failed} failed, ${cancelled} cancelled · ` +
      `${attempts} attempts, ${requeued} requeued`,
    ...(end.status === 'cancelled' && { error: 'Batch cancelled' }),
  });
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
