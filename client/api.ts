/**
 * The typed client API: start a lead run, await its result, read its ledger, events (`after_seq`) and status,
 * cancel it. For services that start runs themselves; the CLI is built on it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute } from 'node:path';
import {
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  type Client,
  type WorkflowHandle,
} from '@temporalio/client';
import type { TaskEvent } from '../contracts/events';
import { assertLeadRunInput, InvalidInputError, systemFolderProblem } from '../contracts/inputs';
import {
  leadEventsQuery,
  leadLedgerQuery,
  leadStatusQuery,
  type LeadRunInput,
  type LeadRunResult,
  type LeadStatus,
} from '../contracts/lead';
import type { LedgerEntry } from '../contracts/ledger';
import { runSearchAttributes } from '../contracts/search-attributes';
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

export class RunHandle {
  constructor(
    readonly runId: string,
    private readonly handle: WorkflowHandle<LeadRunWorkflow>,
  ) {}

  result(): Promise<LeadRunResult> {
    return this.handle.result();
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

  /** Cancels the run; its running children are cancelled with it and report back before it ends. */
  async cancel(): Promise<void> {
    await this.handle.cancel();
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

/** Characters of the prompt shown as the run's details in the Web UI (the whole prompt is in its input). */
const PROMPT_DETAILS_MAX_CHARS = 4000;

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
}

export class SubagentsClient {
  constructor(
    readonly client: Client,
    readonly namespace: string,
  ) {}

  /**
   * Starts a lead run: workflow id = run id, findable by its search attributes in the Web UI. The input is
   * checked first (InvalidInputError names every problem; nothing is started). Idempotent: the same input
   * started again under the same run id returns that run, running or finished; another input under a
   * taken run id is refused (RunIdTakenError), and a finished run is never started a second time.
   */
  async startRun(input: LeadRunInput, options: StartRunOptions): Promise<RunHandle> {
    const runId = options.runId ?? input.run_id ?? newRunId();
    const args: LeadRunInput = { ...input, run_id: runId };
    assertLeadRunInput(args);
    checkWorkspaceFolder(args.workspace);
    const digest = inputDigest(args);
    const { prompt } = input;
    try {
      const handle = await this.client.workflow.start<LeadRunWorkflow>(LEAD_RUN_WORKFLOW, {
        taskQueue: options.taskQueue,
        workflowId: runId,
        args: [args],
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
        memo: { [INPUT_DIGEST_MEMO]: digest },
        staticSummary: `lead: ${prompt.length > 120 ? `${prompt.slice(0, 119)}…` : prompt}`,
        staticDetails:
          prompt.length > PROMPT_DETAILS_MAX_CHARS
            ? `${prompt.slice(0, PROMPT_DETAILS_MAX_CHARS - 1)}… (${prompt.length} characters in all)`
            : prompt,
        typedSearchAttributes: runSearchAttributes(runId, 'lead', input.depth),
      });
      // USE_EXISTING answers a running run of this id, whatever its input: it must be this same request.
      await this.requireSameInput(runId, digest);
      return new RunHandle(runId, handle);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
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
}
