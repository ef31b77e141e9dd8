/**
 * The typed client API: start a lead run, await its result, read its ledger, events (`after_seq`) and status,
 * cancel it. For services that start runs themselves; the CLI is built on it.
 */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { TaskEvent } from '../contracts/events';
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
    private readonly handle: WorkflowHandle,
  ) {}

  result(): Promise<LeadRunResult> {
    return this.handle.result() as Promise<LeadRunResult>;
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

export interface StartRunOptions {
  taskQueue: string;
  runId?: string;
}

export class SubagentsClient {
  constructor(
    readonly client: Client,
    readonly namespace: string,
  ) {}

  /** Starts a lead run: workflow id = run id, findable by its search attributes in the Web UI. */
  async startRun(input: LeadRunInput, options: StartRunOptions): Promise<RunHandle> {
    const runId = options.runId ?? input.run_id ?? newRunId();
    const handle = await this.client.workflow.start('leadRunWorkflow', {
      taskQueue: options.taskQueue,
      workflowId: runId,
      args: [{ ...input, run_id: runId }],
      staticSummary: `lead: ${input.prompt.length > 120 ? `${input.prompt.slice(0, 119)}…` : input.prompt}`,
      staticDetails: input.prompt,
      typedSearchAttributes: runSearchAttributes(runId, 'lead', input.depth),
    });
    return new RunHandle(runId, handle);
  }

  getRun(runId: string): RunHandle {
    return new RunHandle(runId, this.client.workflow.getHandle(runId));
  }
}
