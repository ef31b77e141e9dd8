/**
 * The lead run's input, result and queries, declared once for `leadRunWorkflow` and the clients that start
 * and watch it (no Node APIs: the workflow bundle imports this file). snake_case on the wire.
 */
import { defineQuery } from '@temporalio/workflow';
import type { BatchToolSettings } from './batch';
import type { ClarificationSettings, PendingQuestion } from './clarification';
import type { TaskEvent } from './events';
import type { LedgerEntry } from './ledger';
import type { McpToolFilter } from './mcp';
import type { JsonValue, LoopCarry } from './loop-carry';
import type { ChatMessage, TokenUsage } from './messages';
import type { ModelSettings } from './model';
import type { LedgerStatus, RunStopReason } from './status';
import type { LoopDetectionSettings, ResolvedAgent, TokenBudgetSettings } from './subagent';
import type { SummarizationRuntime } from './summarization';
import type { SandboxSettings } from './tools';

/**
 * How a child is seeded, bound by config (`subagents.provider`), never chosen by the model: `spawn` starts a
 * fresh conversation, `fork` starts from the lead's completed turns.
 */
export const SUBAGENT_PROVIDERS = ['spawn', 'fork'] as const;
export type SubagentProvider = (typeof SUBAGENT_PROVIDERS)[number];

/** The messages a lead run that failed or timed out fails its workflow with (its result in the details). */
export const LEAD_RUN_FAILED_PREFIX = 'Run failed: ';
export const LEAD_RUN_TIMED_OUT_PREFIX = 'Run timed out: ';

/**
 * The lead's wall clock when the config sets none (`lead.timeout_seconds`; 0 turns it off): 6 hours. A lead
 * that delegates runs long — six general-purpose subagents of 30 minutes each one after another, an hour's
 * wait for a person's answer, its own turns — but a run still going after six hours has usually lost its way,
 * and each of its turns is paid for.
 */
export const DEFAULT_LEAD_TIMEOUT_SECONDS = 6 * 60 * 60;

/** `task` calls one response may contain: the seeds' default, and the range a config or an input may set (1–4). */
export const DEFAULT_MAX_CONCURRENT = 3;
export const MAX_CONCURRENT_CEILING = 4;
/** Delegations one run may make in total: at most this (the seeds' config schema, 1–50). */
export const MAX_TOTAL_PER_RUN_CEILING = 50;

/** The delegation limits of one lead run, as config resolves them. */
export interface DelegationLimitSettings {
  /**
   * `task` calls one response may contain, 1–4 (`MAX_CONCURRENT_CEILING`); config keeps it at or below
   * `subagent_runtime.max_running`.
   */
  max_concurrent: number;
  /** Delegations one run may make in total (1–50). */
  max_total_per_run: number;
  /** Deepest delegation allowed: a child's depth is its parent's plus one; 0 allows none. */
  max_depth: number;
  provider: SubagentProvider;
  /**
   * Admission slots rotate between fairness keys: runs that share one (a tenant) share one turn. Absent: the
   * lead run's id, so each run has its own. Nested delegations use their lead's.
   */
  fairness_key?: string;
  /**
   * The run's `subagent_runtime.queue_timeout_seconds`: a child's hard backstop covers a wait that long for a
   * slot on top of its own timeout (absent: the default, 300).
   */
  queue_timeout_seconds?: number;
}

export interface LeadRunInput {
  /** The user's request. */
  prompt: string;
  /** Defaults to the workflow id (DESIGN §1: one execution per run, workflow id = run id). */
  run_id?: string;
  model: ModelSettings;
  /** Built-in tools the lead runs itself; `task` is added when delegation is possible. */
  tools: string[];
  /** The MCP tools the lead may see and run (every one the config's servers offer); absent: none. */
  mcp?: McpToolFilter;
  /** The agents `task` may start, every override applied, in the order the tool lists them. */
  agents: ResolvedAgent[];
  workspace: string;
  sandbox: SandboxSettings;
  loop_detection: LoopDetectionSettings;
  /** The lead's own token budget; each child carries its agent's. */
  token_budget: TokenBudgetSettings;
  /** The lead's own turn budget. */
  max_turns: number;
  /** The lead's own wall clock (graceful: the run ends `timed_out` with its partial answer); absent → none. */
  timeout_seconds?: number;
  /** Compaction settings for the lead and every subagent; absent → off. */
  summarization?: SummarizationRuntime;
  limits: DelegationLimitSettings;
  /**
   * Durable batches: present when the config enables them (`subagents.batch.enabled`), then the lead is
   * offered `batch_task` and the tools that follow a batch. The limits are the ceiling for its batches.
   */
  batch?: BatchToolSettings;
  /**
   * `ask_clarification`: present when the config enables it (`clarification.enabled`); then the lead is offered
   * the tool, and subagents whose tools allow it. Runs started before it existed carry none: no new tool.
   */
  clarification?: ClarificationSettings;
  /** 0 for a top-level lead; a lead started by a delegating child has the child's depth. */
  depth: number;
  /**
   * Entries carried in: from a continue-as-new of this run (same run_id), or from an earlier run of the same
   * conversation (another run_id: shown to the model, not counted toward this run's total).
   */
  ledger?: LedgerEntry[];
  /** Set by the run itself when it continues as new: where the previous execution left off. */
  carry?: LeadCarry;
  /** ISO 8601: when the run got its slot (`lead_runtime`); set when it continues as new, so it keeps it. */
  admitted_at?: string;
  /**
   * Set by every starter of this project: the run asks for its slot as its first step. Absent (an input from
   * before it existed), the run's own history says whether it does (the `lead-admission` patch, which costs
   * a marker and a search attribute update in every run that checks it).
   */
  asks_slot?: true;
  /**
   * Set by every starter of this project: the workflow's Temporal status says how it ended (contracts/closing.ts).
   * Absent (an input from before it existed), its own history says whether it does (the `honest-close` patch,
   * which costs a marker in every workflow that checks it).
   */
  honest_close?: true;
}

/** What a lead run hands to its next execution when history grows long (continue-as-new). */
export interface LeadCarry extends Partial<LoopCarry> {
  /** Carries written before transcripts were stored by reference held the whole transcript. */
  messages?: ChatMessage[];
  turns: number;
  guard_states: Record<string, JsonValue>;
  events: TaskEvent[];
  /** How many executions came before this one. */
  continued: number;
}

export const LEAD_RUN_STATUSES = ['completed', 'failed', 'cancelled', 'timed_out'] as const;
export type LeadRunStatus = (typeof LEAD_RUN_STATUSES)[number];

/** Each part is absent when no provider reported usage for it, rather than estimated as zero. */
export interface LeadTokenUsage {
  lead?: TokenUsage;
  /** This run's children, summed. */
  subagents?: TokenUsage;
  total?: TokenUsage;
}

export interface LeadRunResult {
  run_id: string;
  status: LeadRunStatus;
  stop_reason?: RunStopReason;
  /** The lead's last answer (partial when a cap stopped the run). */
  final_output: string;
  ledger: LedgerEntry[];
  token_usage: LeadTokenUsage;
  /** The lead's own model calls. */
  turns: number;
  error?: string;
  /** Refused a slot (`lead_runtime`: capacity full or queue timeout) before any model call. */
  admission_failure?: true;
}

export interface LeadStatus {
  /** `queued` while it waits for a slot (`lead_runtime`), `running` until it returns its result. */
  state: 'queued' | 'running' | 'finished';
  /** While queued: the running and queued counts when it joined the queue (it included), and since when. */
  admission?: { running: number; queued: number; since: string };
  turns: number;
  token_usage: LeadTokenUsage;
  /** This run's ledger entries by status, every status present (0 when none). */
  counts: Record<LedgerStatus, number>;
  /** The last event's sequence number: pass it as `after_seq` to read only what is new. */
  last_seq: number;
  /** Questions (`ask_clarification`) of the lead and its subagents waiting for an answer; absent: none. */
  questions?: PendingQuestion[];
}

export const leadLedgerQuery = defineQuery<LedgerEntry[]>('lead_ledger');
/** Events with `seq > after_seq` (all of them for 0), oldest first. */
export const leadEventsQuery = defineQuery<TaskEvent[], [afterSeq?: number]>('lead_events');
export const leadStatusQuery = defineQuery<LeadStatus>('lead_status');
