/**
 * The typed client API: start a lead run, await its result, read its ledger, events (`after_seq`) and status,
 * cancel it; inspect a run without a worker once it has closed. For services that start runs themselves; the
 * CLI is built on it.
 */
import { runStream, type RunStreamOptions } from './stream';
import type { StreamEntry } from '../contracts/stream';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  type Client,
  type WorkflowExecutionStatusName,
  type WorkflowHandle,
} from '@temporalio/client';
import {
  answerClarificationUpdate,
  answerProblem,
  ANSWER_REFUSALS,
  questionTarget,
  type AnswerRefusal,
  type PendingQuestion,
  type RecordedAnswer,
} from '../contracts/clarification';
import type { PendingApproval, RecordedDecision } from '../contracts/approvals';
import type { TaskEvent } from '../contracts/events';
import { assertLeadRunInput, InvalidInputError, systemFolderProblem } from '../contracts/inputs';
import {
  leadEventsQuery,
  leadLedgerQuery,
  leadStatusQuery,
  type LeadRunInput,
  type LeadRunResult,
  type LeadRunStatus,
  type LeadStatus,
} from '../contracts/lead';
import type { LedgerEntry } from '../contracts/ledger';
import { LEDGER_STATUSES, type RunStopReason } from '../contracts/status';
import { runSearchAttributes } from '../contracts/search-attributes';
import { scoped } from '../contracts/run-scope';
import { explainStartFailure } from './search-attribute-errors';
import { decide } from './approvals';
import { updateFailure } from './update-refusals';
import { workflowResult } from './results';
import { askWorker, type Asked } from './worker-liveness';
import { subagentSteps, subagentWorkflowId, type SubagentSteps } from './subagent-steps';
import { isDelegationKind, readDelegationStatus, type DelegationStatus } from './delegation-status';
import { heldCalls, waitingQuestions } from './held-calls';
import {
  forksOf,
  startFork,
  startSubagentFork,
  type ForkLink,
  type ForkOptions,
  type SubagentForkHandle,
} from './fork';
import { identify, kindText } from './id-kinds';
import { promptDetails, summaryLine } from '../contracts/text';
import type { PayloadKeyring } from '../payloads/encryption-codec';
import { processSecretsKeyring, sealSecrets } from '../payloads/secrets';
import type * as workflows from '../workflows';

/** The lead run's workflow type, by name: the client imports the workflow's type only, never its code. */
const LEAD_RUN_WORKFLOW = 'leadRunWorkflow' satisfies keyof typeof workflows;
type LeadRunWorkflow = typeof workflows.leadRunWorkflow;

/** A new run id: sortable by time, unique across machines. */
export function newRunId(now = new Date()): string {
  return `run-${now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z')}-${randomUUID().slice(0, 8)}`;
}

/** The Web UI page of a workflow. */
export function workflowUiUrl(
  uiBase: string | undefined,
  namespace: string,
  workflowId: string,
): string | undefined {
  if (!uiBase) return undefined;
  return `${uiBase.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

/** How a closed run ended, read from the server alone: no worker needed. */
export interface ClosedRun {
  open: false;
  /** Temporal's own status of the execution: COMPLETED, FAILED, TERMINATED, TIMED_OUT, CANCELLED. */
  execution_status: WorkflowExecutionStatusName;
  status: LeadRunStatus;
  stop_reason?: RunStopReason;
  error?: string;
  /**
   * The run's result, for every ending of the run itself: returned (completed, capped), in the failure's
   * details (failed, timed out) or in the memo (cancelled). Absent when the execution was terminated, hit its
   * hard timeout or failed outside the run's own code: then its ledger, turns and usage are not known without
   * a worker.
   */
  result?: LeadRunResult;
}

/** An open run: the queries answer only while a worker polls its task queue. */
export interface OpenRun {
  open: true;
  task_queue: string;
}

/** The lead run's status for an execution that closed without a result. */
const STATUS_OF_EXECUTION: Partial<Record<WorkflowExecutionStatusName, LeadRunStatus>> = {
  CANCELLED: 'cancelled',
  TIMED_OUT: 'timed_out',
};

/** The first line of a failure and its causes, as far as they add something. */
function failureText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause) {
    const line = e.message.split('\n')[0];
    if (line && !parts.includes(line)) parts.push(line);
  }
  return parts.join(': ') || String(err);
}

/** The delegations of a ledger by status, every status present. */
export function ledgerCounts(ledger: readonly LedgerEntry[]): LeadStatus['counts'] {
  const counts = Object.fromEntries(LEDGER_STATUSES.map((s) => [s, 0])) as LeadStatus['counts'];
  for (const entry of ledger) counts[entry.status] += 1;
  return counts;
}

/**
 * An answer the run refused, or could not be given: the message says why and what would be accepted. `kind`
 * tells a mistake in the request (invalid, unknown, ambiguous) from the run's state (not waiting, closed).
 */
export class AnswerRefusedError extends Error {
  override name = 'AnswerRefusedError';

  constructor(
    message: string,
    readonly kind: AnswerRefusal,
  ) {
    super(message);
  }

  /** A mistake the user can fix in the request itself. */
  get isUsageMistake(): boolean {
    return (
      this.kind === ANSWER_REFUSALS.invalid ||
      this.kind === ANSWER_REFUSALS.unknown ||
      this.kind === ANSWER_REFUSALS.ambiguous
    );
  }
}

const REFUSAL_KINDS: readonly string[] = Object.values(ANSWER_REFUSALS);

export interface AnswerOptions {
  /** The question (`q1`, or `<delegation id>/q1` for a subagent's); absent: the one the run waits on. */
  question?: string;
  /** Who answers, recorded with the answer (the CLI sends `$USER@host`). */
  by?: string;
}

export { ApprovalRefusedError } from './approvals';
export { subagentResult, subagentSteps, type SubagentSteps } from './subagent-steps';
export { type DelegationStatus } from './delegation-status';
export { heldCalls, waitingQuestions } from './held-calls';
export { ForkRefusedError, SubagentForkHandle, type ForkLink, type ForkOptions } from './fork';
export { runStream, type RunStreamOptions } from './stream';
export { eventsFromLedger } from './ledger-events';

export interface DecisionOptions {
  /** Who decides, as recorded in history and the step log (default: this client's identity). */
  by?: string;
}

export class RunHandle {
  constructor(
    readonly runId: string,
    private readonly handle: WorkflowHandle<LeadRunWorkflow>,
  ) {}

  /**
   * Whether the run is open (its queries need a worker) or closed, and then how it ended: its result, read
   * without a worker, or for an execution that returned none, its status and failure from the server.
   */
  async inspect(): Promise<OpenRun | ClosedRun> {
    const description = await this.handle.describe();
    const executionStatus = description.status.name;
    // The latest execution: continued as new only for the moment the next one starts.
    if (executionStatus === 'RUNNING' || executionStatus === 'CONTINUED_AS_NEW') {
      return { open: true, task_queue: description.taskQueue };
    }
    try {
      const result = await workflowResult(this.handle);
      return {
        open: false,
        execution_status: executionStatus,
        status: result.status,
        ...(result.stop_reason && { stop_reason: result.stop_reason }),
        ...(result.error && { error: result.error }),
        result,
      };
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      return {
        open: false,
        execution_status: executionStatus,
        status: STATUS_OF_EXECUTION[executionStatus] ?? 'failed',
        error: `${executionStatus.toLowerCase().replace('_', ' ')}: ${failureText(err.cause ?? err)}`,
      };
    }
  }

  /** The run's result, however it ended (a failed, timed-out or cancelled run's too). */
  result(): Promise<LeadRunResult> {
    return workflowResult(this.handle);
  }

  /** The runs forked or resumed from this one (`ForkedFrom`), newest first. */
  forks(): Promise<ForkLink[]> {
    return forksOf(this.handle.client, this.runId);
  }

  /**
   * A new run that keeps this run's first `turn` lead turns (read from its history, not asked again) and goes on
   * from there, `message` added before its first live turn; without `turn`, a resume at the last completed one
   * (docs/fork.md). Its files: this run's workspace snapshot at that turn, or `workspace`. A subagent forks with
   * `SubagentsClient.forkSubagent`.
   */
  async fork(options: Partial<ForkOptions> = {}): Promise<RunHandle> {
    if (options.workspace !== undefined) checkWorkspaceFolder(options.workspace);
    const runId = options.runId ?? newRunId();
    return new RunHandle(runId, await startFork(this.handle.client, this.runId, { ...options, runId }));
  }

  /**
   * `read` (this handle's queries) when a live worker polls `taskQueue` (the run's, from `inspect()`), within
   * `ms`: a query waits for a worker, so without this a run whose worker is gone answers only after the server
   * gives up. Says why there was no answer (client/worker-liveness.ts `askWorker`).
   */
  ask<T>(taskQueue: string, read: (run: this) => Promise<T>, ms?: number): Promise<Asked<T>> {
    const { client } = this.handle;
    return askWorker(client, client.options.namespace, taskQueue, () => read(this), { ms });
  }

  ledger(): Promise<LedgerEntry[]> {
    return this.handle.query(leadLedgerQuery);
  }

  /** Events with `seq > afterSeq`, oldest first. */
  events(afterSeq = 0): Promise<TaskEvent[]> {
    return this.handle.query(leadEventsQuery, afterSeq);
  }

  status(): Promise<LeadStatus> {
    return this.handle.query(leadStatusQuery);
  }

  /**
   * The steps (`seq > afterSeq`) of the subagent this run delegated task `taskId` to: from its queries while
   * it runs (a worker needed), rebuilt from its history once it has closed, the run's or not.
   */
  steps(taskId: string, afterSeq = 0): Promise<SubagentSteps> {
    return subagentSteps({ workflow: this.handle.client }, subagentWorkflowId(this.runId, taskId), afterSeq);
  }

  /** The questions (`ask_clarification`) the run and its subagents wait on; none once it has ended. */
  async questions(): Promise<PendingQuestion[]> {
    return (await this.status()).questions ?? [];
  }

  /**
   * Answers a question the run waits on (a Workflow Update to the workflow that asked: the lead, or one of
   * its subagents) and returns what it recorded. Without `question`, the one question waiting; refused
   * (AnswerRefusedError) when none or several wait, the question is unknown or closed, or the answer is empty
   * or too long. Needs a worker, as queries do.
   */
  async answer(answer: string, options: AnswerOptions = {}): Promise<RecordedAnswer> {
    const problem = answerProblem(answer);
    if (problem !== undefined) throw new AnswerRefusedError(problem, ANSWER_REFUSALS.invalid);
    const leadId = this.handle.workflowId;
    let target: { workflowId: string; id?: string } = { workflowId: leadId };
    if (options.question !== undefined) {
      const ref = options.question.trim();
      // `@` names an MCP task's workflow (`mcp@<turn>.<index>/q1`), which no delegation id has.
      if (!/^([A-Za-z0-9_.:@-]+\/)*[A-Za-z0-9_.:-]+$/.test(ref)) {
        throw new AnswerRefusedError(
          `--question ${JSON.stringify(options.question)} is not a question of a run (e.g. q1, or call_1/q1 ` +
            "for a subagent's)",
          ANSWER_REFUSALS.unknown,
        );
      }
      target = questionTarget(leadId, ref);
    } else {
      const waiting = await this.questions();
      if (waiting.length > 1) {
        throw new AnswerRefusedError(
          `run ${this.runId} waits on ${waiting.length} questions (${waiting.map((q) => q.ref).join(', ')}): ` +
            'name one with --question',
          ANSWER_REFUSALS.ambiguous,
        );
      }
      // None: the lead says it is not waiting, in its own words.
      if (waiting.length === 1) target = { workflowId: waiting[0].workflow_id, id: waiting[0].id };
    }
    const handle = this.handle.client.getHandle(target.workflowId);
    try {
      return await handle.executeUpdate(answerClarificationUpdate, {
        args: [
          {
            ...(target.id !== undefined && { question_id: target.id }),
            answer,
            ...(options.by !== undefined && options.by.trim() !== '' && { by: options.by }),
          },
        ],
      });
    } catch (err) {
      throw await this.answerFailure(err, target.workflowId, options.question);
    }
  }

  /** Why an answer did not land, in the user's terms. */
  private answerFailure(err: unknown, workflowId: string, question: string | undefined): Promise<Error> {
    return updateFailure(err, {
      client: this.handle.client,
      runId: this.runId,
      leadWorkflowId: this.handle.workflowId,
      workflowId,
      subagentName: `the subagent that asked ${question}`,
      ref: question,
      awaited: 'an answer',
      refusals: REFUSAL_KINDS,
      notWaiting: ANSWER_REFUSALS.notWaiting,
      unknown: ANSWER_REFUSALS.unknown,
      refused: (message, kind: AnswerRefusal) => new AnswerRefusedError(message, kind),
    });
  }

  /** Tool calls the run and its subagents hold for a person's decision (a guardrail's `ask`); none once it ended. */
  async pending(): Promise<PendingApproval[]> {
    return (await this.status()).approvals ?? [];
  }

  /**
   * Approves a held call (`ref`: `a1`, or `<delegation id>/a1` for a subagent's; absent: the one call waiting)
   * with an optional note: the call then runs. Returns what the run recorded; refused (ApprovalRefusedError)
   * when none or several wait, the call is unknown or already decided or timed out. Needs a worker.
   */
  approve(ref?: string, note?: string, options: DecisionOptions = {}): Promise<RecordedDecision> {
    return decide(
      this.decisionTarget(),
      ref,
      { kind: 'approve', ...(note !== undefined && { note }) },
      options.by ?? this.handle.client.options.identity,
    );
  }

  /**
   * Denies a held call with a reason (required: the agent reads it as the call's result, and goes on). As
   * `approve` otherwise.
   */
  deny(ref: string | undefined, reason: string, options: DecisionOptions = {}): Promise<RecordedDecision> {
    return decide(
      this.decisionTarget(),
      ref,
      { kind: 'deny', reason },
      options.by ?? this.handle.client.options.identity,
    );
  }

  private decisionTarget() {
    return {
      runId: this.runId,
      leadWorkflowId: this.handle.workflowId,
      client: this.handle.client,
      pending: () => this.pending(),
    };
  }

  /** Cancels the run; its running children are cancelled with it and report back before it ends. */
  async cancel(): Promise<void> {
    await this.handle.cancel();
  }

  /**
   * The run's live stream (docs/live.md): every agent's deltas, tool results and turn edges as its workers
   * publish them (the backlog first), with the run's task events, what it waits on, and its end (`run_ended`,
   * the final output); ends once the run has closed.
   */
  stream(options: RunStreamOptions = {}): AsyncGenerator<StreamEntry> {
    return runStream(this, options);
  }

  /** Yields events as they are appended, until the run has finished and every event was read. */
  async *followEvents(pollMs = 500, afterSeq = 0): AsyncGenerator<TaskEvent> {
    let seen = afterSeq;
    for (;;) {
      const status = await this.status();
      for (const event of await this.events(seen)) {
        seen = event.seq;
        yield event;
      }
      if (status.state === 'finished' && seen >= status.last_seq) return;
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }
}

/** The memo key under which a run records the digest of its input: a retried start is recognised by it. */
const INPUT_DIGEST_MEMO = 'input_sha256';

const NOT_A_FOLDER = 'is a file, not a folder (give a folder, or a path where one can be made)';

/**
 * Why `workspace` (absolute) cannot be a run's workspace as the tools will find it, or undefined when it
 * can: it must be a folder (made when missing), not a file, and not a system folder or the user's home once
 * symlinks are resolved.
 */
export function workspaceFolderProblem(workspace: string, home = homedir()): string | undefined {
  if (!isAbsolute(workspace)) return 'is not an absolute path (e.g. /home/me/project)';
  const direct = systemFolderProblem(workspace, home);
  if (direct !== undefined) return direct;
  try {
    mkdirSync(workspace, { recursive: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EEXIST' || code === 'ENOTDIR'
      ? NOT_A_FOLDER
      : `does not exist and cannot be made (${(err as Error).message})`;
  }
  if (!statSync(workspace).isDirectory()) return NOT_A_FOLDER;
  const real = realpathSync(workspace);
  const resolved = systemFolderProblem(real, home);
  return resolved === undefined ? undefined : `leads to ${real}, which ${resolved}`;
}

/** Throws InvalidInputError when `workspace` cannot be a run's workspace (see workspaceFolderProblem). */
export function checkWorkspaceFolder(workspace: string, home = homedir()): void {
  const problem = workspaceFolderProblem(workspace, home);
  if (problem !== undefined) {
    throw new InvalidInputError(
      [`workspace: ${JSON.stringify(workspace)} ${problem}`],
      'lead run input is refused, 1 problem:',
    );
  }
}

/**
 * `input` with `secrets` (name → value) sealed under the keyring's newest key (payloads/secrets.ts) beside the
 * secrets it already has (a name given again takes the new value). Only sealed values leave this function: the
 * input, its digest and history never hold a plain one. Throws SecretError when the keyring has no key to seal
 * with, or a name is not an environment variable's.
 */
export function withSecrets(
  input: LeadRunInput,
  secrets: Readonly<Record<string, string>> | undefined,
  keyring: PayloadKeyring,
): LeadRunInput {
  if (secrets === undefined || Object.keys(secrets).length === 0) return input;
  const sealed = sealSecrets(keyring, secrets);
  const kept = (input.scope.secrets ?? []).filter((secret) => !Object.hasOwn(secrets, secret.name));
  const all = [...kept, ...sealed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { ...input, scope: { ...input.scope, secrets: all } };
}

/** sha256 of the input as started: the same request retried has the same digest. */
function inputDigest(input: LeadRunInput): string {
  return createHash('sha256').update(JSON.stringify(input)).digest('hex');
}

/** The run id is taken by a run that was started with another input. */
export class RunIdTakenError extends Error {
  override name = 'RunIdTakenError';
}

export interface StartRunOptions {
  taskQueue: string;
  runId?: string;
  /**
   * Told, as one line, each time the start is retried because the server cannot be reached (restarting,
   * a network blip); the CLI prints it on stderr.
   */
  onRetry?: (line: string) => void;
  /** How long a start is retried while the server cannot be reached (default START_RETRY_MS). */
  retryForMs?: number;
  /**
   * Request-scoped secrets for the run's skills (name → value, names as environment variables): sealed here
   * (withSecrets), opened only by the workers' bash tool for an agent whose active skill declares them.
   */
  secrets?: Readonly<Record<string, string>>;
  /**
   * What `secrets` are sealed with (default: this process's payload keys, processSecretsKeyring): the workers
   * must hold its newest key.
   */
  keyring?: PayloadKeyring;
}

/**
 * How long `startRun` retries once the server has answered "unavailable": a restart of the server fits in it,
 * also on a busy machine (19.5 s measured under a full test suite).
 */
export const START_RETRY_MS = 30_000;

/** The server could not be reached for the whole retry budget: nothing may have started. */
export class ServerUnavailableError extends Error {
  override name = 'ServerUnavailableError';
}

/** An id that does not name the kind of workflow a call reads. */
export class InvalidIdError extends Error {
  override name = 'InvalidIdError';
}

/** gRPC's UNAVAILABLE: the server is down, restarting or unreachable; a request may be sent again. */
const GRPC_UNAVAILABLE = 14;

/** Whether `err` (or a cause) says the server could not be reached, rather than that it refused. */
export function isServerUnavailable(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause)
    if ((e as { code?: unknown }).code === GRPC_UNAVAILABLE) return true;
  return false;
}

/**
 * `start()`, retried with backoff (0.5 s doubling to 4 s) while the server cannot be reached, for at most
 * `budgetMs` after its first "unavailable" answer: as the workers ride out a server restart. Counted from that
 * answer, not from the first try: the connection's own retries (about 20 s) come before it, and a restart on
 * a busy machine takes 20 s by itself. Safe because a start is idempotent (one run id, one input). Past the
 * budget, a ServerUnavailableError says so.
 */
async function retryWhileUnavailable<T>(
  what: string,
  start: () => Promise<T>,
  budgetMs: number,
  onRetry: ((line: string) => void) | undefined,
): Promise<T> {
  const started = Date.now();
  let deadline: number | undefined;
  for (let delayMs = 500; ; delayMs = Math.min(delayMs * 2, 4000)) {
    try {
      return await start();
    } catch (err) {
      if (!isServerUnavailable(err)) throw err;
      deadline ??= Date.now() + budgetMs;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new ServerUnavailableError(
          // The connection's own retries come first (about 20 s), so the time told is the time waited.
          `cannot ${what}: the Temporal server could not be reached for ${Math.round((Date.now() - started) / 1000)} s ` +
            `(${failureText(err)}); nothing was started: try again once it is up`,
        );
      const wait = Math.min(delayMs, left);
      onRetry?.(
        `the Temporal server cannot be reached (${failureText(err)}); trying again to ${what} in ` +
          `${(wait / 1000).toFixed(1)} s (for up to ${Math.ceil(left / 1000)} s more)`,
      );
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

export class SubagentsClient {
  constructor(
    readonly client: Client,
    readonly namespace: string,
  ) {}

  /**
   * A subagent run of its own that keeps subagent `subagentId`'s first `turn` turns (read from its history, not
   * asked again) and goes on from there with the same agent, tools and scope, `message` added before its first
   * live turn (docs/fork.md). Its files: the run's workspace snapshot at that turn, or `workspace`. An id that
   * names no subagent is refused (ForkRefusedError), saying what it names.
   */
  async forkSubagent(
    subagentId: string,
    options: Partial<ForkOptions> & { turn: number },
  ): Promise<SubagentForkHandle> {
    if (options.workspace !== undefined) checkWorkspaceFolder(options.workspace);
    const runId = options.runId ?? newRunId();
    return startSubagentFork(this.client.workflow, subagentId, { ...options, runId });
  }

  /** The runs forked from run or subagent `id` (`ForkedFrom`), newest first. */
  forksOf(id: string): Promise<ForkLink[]> {
    return forksOf(this.client.workflow, id);
  }

  /**
   * Starts a lead run: workflow id = run id, findable by its search attributes in the Web UI. The input is
   * checked first (InvalidInputError names every problem; nothing is started). Idempotent: the same input
   * started again under the same run id returns that run, running or finished; another input under a
   * taken run id is refused (RunIdTakenError), and a finished run is never started a second time. While the
   * server cannot be reached (a restart) the start is retried for `options.retryForMs`, each retry told to
   * `options.onRetry`; then a ServerUnavailableError. `options.secrets` are sealed into the input (withSecrets).
   */
  async startRun(given: LeadRunInput, options: StartRunOptions): Promise<RunHandle> {
    // An input written before the run scope (its settings at the top level) is read into it.
    const input = scoped<LeadRunInput>(given);
    const runId = options.runId ?? input.run_id ?? newRunId();
    const sealed =
      options.secrets === undefined
        ? input
        : withSecrets(input, options.secrets, options.keyring ?? processSecretsKeyring());
    const args: LeadRunInput = { ...sealed, run_id: runId };
    assertLeadRunInput(args);
    checkWorkspaceFolder(args.scope.workspace);
    const digest = inputDigest(args);
    const { prompt } = input;
    try {
      const start = () =>
        this.client.workflow.start<LeadRunWorkflow>(LEAD_RUN_WORKFLOW, {
          taskQueue: options.taskQueue,
          workflowId: runId,
          args: [args],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
          memo: { [INPUT_DIGEST_MEMO]: digest },
          staticSummary: summaryLine(`lead: ${prompt}`),
          staticDetails: promptDetails(prompt),
          typedSearchAttributes: runSearchAttributes(runId, 'lead', input.depth, input.scope.user_id),
        });
      const handle = await retryWhileUnavailable(
        `start run ${runId}`,
        start,
        options.retryForMs ?? START_RETRY_MS,
        options.onRetry,
      );
      // USE_EXISTING answers a running run of this id, whatever its input: it must be this same request.
      await this.requireSameInput(runId, digest);
      return new RunHandle(runId, handle);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw explainStartFailure(err);
      // A finished run of this id (REJECT_DUPLICATE): the same request retried gets that run back.
      await this.requireSameInput(runId, digest);
      return this.getRun(runId);
    }
  }

  private async requireSameInput(runId: string, digest: string): Promise<void> {
    const description = await this.client.workflow.getHandle(runId).describe();
    const recorded = description.memo?.[INPUT_DIGEST_MEMO];
    if (recorded === digest) return;
    throw new RunIdTakenError(
      `run id ${JSON.stringify(runId)} is taken by a run started with another input ` +
        `(${description.status.name.toLowerCase()}); a run id starts one run only: pick a new one, ` +
        `or omit it for a fresh id`,
    );
  }

  getRun(runId: string): RunHandle {
    return new RunHandle(runId, this.client.workflow.getHandle<LeadRunWorkflow>(runId));
  }

  /** The steps of a subagent workflow by its id (a nested delegation's, a batch item's): RunHandle.steps. */
  subagentSteps(workflowId: string, afterSeq = 0): Promise<SubagentSteps> {
    return subagentSteps(this.client, workflowId, afterSeq);
  }

  /**
   * The status of a subagent, a batch item or a batch by its workflow id: an open one's progress or counts (a
   * worker needed), a closed one's result. Refused for an id of another kind (InvalidIdError) or of no
   * workflow (WorkflowNotFoundError).
   */
  async delegationStatus(workflowId: string): Promise<DelegationStatus> {
    const { kind, description } = await identify(this.client, workflowId);
    if (description === undefined)
      throw new WorkflowNotFoundError(`no workflow ${workflowId}`, workflowId, undefined);
    if (!isDelegationKind(kind))
      throw new InvalidIdError(
        `${workflowId} is not a subagent, a batch item or a batch (it is ${kindText(kind)})`,
      );
    return readDelegationStatus(this.client, kind, description);
  }

  /**
   * The tool calls held for a person's decision by a lead run, a subagent or a batch item (by its workflow id)
   * and the subagents under it, each named as `approve` / `deny` on its lead run take it. None once it closed.
   */
  approvals(workflowId: string): Promise<PendingApproval[]> {
    return heldCalls(this.client, workflowId);
  }

  /**
   * The questions a lead run or a subagent (by its workflow id) and the subagents under it wait on, each
   * named as `answer` on its lead run takes it (`RunHandle.questions` for a whole run). None once it closed.
   */
  questions(workflowId: string): Promise<PendingQuestion[]> {
    return waitingQuestions(this.client, workflowId);
  }
}
