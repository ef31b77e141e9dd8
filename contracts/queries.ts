/**
 * Queries, declared once for the workflows that answer them and the clients that ask (no Node APIs: the
 * workflow bundle imports this file).
 */
import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { PendingApproval } from './approvals';
import type { GuardrailNotice, WorkspaceNotice } from './events';
import type { TokenUsage } from './messages';
import type { SubagentStep } from './steps';

export interface SubagentProgress {
  /** `queued` while it waits for an execution slot, `running` until it returns its result. */
  state: 'queued' | 'running' | 'finished';
  turns: number;
  token_usage?: TokenUsage;
  model_name?: string;
  /** The last step's sequence number: pass it as `after_seq` to read only what is new. */
  last_seq: number;
  /** The skills active in its run (contracts/run-skills.ts), while any is. */
  active_skills?: string[];
  /** Its tool calls and its own subagents' a guardrail holds for a person's decision; absent: none. */
  approvals?: PendingApproval[];
}

/** Steps with `seq > after_seq` (all of them for 0), oldest first. */
export const subagentStepsQuery = defineQuery<SubagentStep[], [afterSeq?: number]>('subagent_steps');
export const subagentProgressQuery = defineQuery<SubagentProgress>('subagent_progress');

/** A child's progress, sent to the workflow that started it after its first turn and then at most every 15 s. */
export interface SubagentProgressUpdate {
  task_id: string;
  turns: number;
  token_usage?: TokenUsage;
  /** USD of its calls so far, when any was priced. */
  cost_usd?: number;
  model_name?: string;
}

export const subagentProgressSignal = defineSignal<[SubagentProgressUpdate]>('subagent_progress_update');

/** A subagent's denied tool call, sent to the workflow that started it (which passes it up to the lead). */
export const guardrailNoticeSignal = defineSignal<[GuardrailNotice]>('guardrail_notice');

/** What a log query answers for an `after_seq` cursor: the records numbered after it, oldest first. */
export function recordsAfter<T extends { seq: number }>(records: readonly T[], afterSeq: number): T[] {
  return records.filter((record) => record.seq > afterSeq);
}

/** A subagent tells the lead what it found of the run's workspace (moved, not saved): the lead's log keeps it. */
export const workspaceNoticeSignal = defineSignal<[WorkspaceNotice]>('workspace_notice');
