/**
 * The lead run's input, result and queries, declared once for `leadRunWorkflow` and the clients that start
 * and watch it (no Node APIs: the workflow bundle imports this file). snake_case on the wire.
 */
import { defineQuery } from '@temporalio/workflow';
import type { PendingApproval } from './approvals';
import type { PendingQuestion } from './clarification';
import type { TaskEvent, ToolDecisionEvent } from './events';
import type { LedgerEntry } from './ledger';
import type { JsonValue, LoopCarry } from './loop-carry';
import type { ChatMessage, TokenUsage } from './messages';
import type { RemoteProbeResult } from './remote-subagent';
import type { LedgerStatus, RunStopReason } from './status';
import type { TreeBudgetReport } from './budget';
import type { Transcript } from './transcript';

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

export type { DelegationLimitSettings, LeadRunInput } from './input-schemas';

/** What a lead run hands to its next execution when history grows long (continue-as-new). */
export interface LeadCarry extends Partial<LoopCarry> {
  /** Carries written before transcripts were stored by reference held the whole transcript. */
  messages?: ChatMessage[];
  turns: number;
  guard_states: Record<string, JsonValue>;
  events: TaskEvent[];
  /**
   * What the run's probe of its remote providers found when it started (contracts/subagent-providers.ts
   * `ProviderProbe`): the next execution offers the same tools. Absent: the run has no remote load.
   */
  provider_probe?: Record<string, RemoteProbeResult>;
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

/**
 * What the run's tokens cost in USD, priced by `models[].pricing`, split as `token_usage` is. Absent (the whole
 * field) when no call was priced; a part is absent when none of its calls was priced.
 */
export interface LeadCostUsd {
  lead?: number;
  /** This run's delegations, summed (each ledger entry's `cost_usd`). */
  subagents?: number;
  total: number;
}

export interface LeadRunResult {
  run_id: string;
  status: LeadRunStatus;
  stop_reason?: RunStopReason;
  /** The lead's last answer (partial when a cap stopped the run). */
  final_output: string;
  ledger: LedgerEntry[];
  token_usage: LeadTokenUsage;
  /** What those tokens cost (`models[].pricing`); absent when nothing was priced. */
  cost_usd?: LeadCostUsd;
  /** The run's tree budget (`token_budget:`), when it has one: the whole tree's spend, nested agents included. */
  tree_budget?: TreeBudgetReport;
  /** The lead's own model calls. */
  turns: number;
  error?: string;
  /** Refused a slot (`lead_runtime`: capacity full or queue timeout) before any model call. */
  admission_failure?: true;
  /**
   * The decisions on the tool calls of the lead and its subagents (`tool_approved`, `tool_denied`), from its
   * event log, which ends with the workflow: what `subagents events` shows of a closed run beside its ledger.
   * Absent: none, or a run from before results kept them.
   */
  decisions?: ToolDecisionEvent[];
  /** A fork's origin: the run and lead turn it started from, and what it reused of them (docs/fork.md). */
  forked_from?: ForkOrigin;
}

export interface LeadStatus {
  /** `queued` while it waits for a slot (`lead_runtime`), `running` until it returns its result. */
  state: 'queued' | 'running' | 'finished';
  /** While queued: the running and queued counts when it joined the queue (it included), and since when. */
  admission?: { running: number; queued: number; since: string };
  turns: number;
  token_usage: LeadTokenUsage;
  /** What those tokens cost so far (`models[].pricing`); absent when nothing was priced. */
  cost_usd?: LeadCostUsd;
  /** The run's tree budget so far, when it has one. */
  tree_budget?: TreeBudgetReport;
  /** This run's ledger entries by status, every status present (0 when none). */
  counts: Record<LedgerStatus, number>;
  /** The last event's sequence number: pass it as `after_seq` to read only what is new. */
  last_seq: number;
  /** Questions (`ask_clarification`) of the lead and its subagents waiting for an answer; absent: none. */
  questions?: PendingQuestion[];
  /**
   * Tool calls of the lead and its subagents a guardrail held for a person's decision (`subagents approve` /
   * `deny`); absent: none.
   */
  approvals?: PendingApproval[];
  /** The skills active in the lead's run (contracts/run-skills.ts), while any is. */
  active_skills?: string[];
  /**
   * Where the run's workspace lives, when it has a home host (contracts/workspace.ts): the host, its epoch (1
   * until a lost host made it move), and whether it passed its cap and is no longer saved.
   */
  workspace?: { host_id: string; epoch: number; not_saved?: { bytes: number; max_bytes: number } };
  /** A fork's origin (docs/fork.md); absent: a run from its first turn. */
  forked_from?: ForkOrigin;
}

export const leadLedgerQuery = defineQuery<LedgerEntry[]>('lead_ledger');
/** Events with `seq > after_seq` (all of them for 0), oldest first. */
export const leadEventsQuery = defineQuery<TaskEvent[], [afterSeq?: number]>('lead_events');
export const leadStatusQuery = defineQuery<LeadStatus>('lead_status');

/*
 * Fork and resume (contracts/run-fork.ts, docs/fork.md): the two shapes the lead's input and result carry live
 * here, beside the lead's own, so that contracts/ gains no import circle.
 */
/**
 * What a forked lead run (or a forked subagent, the same shape) carries in its input (`fork`): where it came
 * from and the state it starts in.
 */
export interface LeadFork {
  from_run_id: string;
  turn: number;
  transcript: Transcript;
  task_index: number;
  reused_usage?: TokenUsage;
}

/** What a forked run's status and result say of its origin; the reused usage is shown, never billed again. */
export interface ForkOrigin {
  from_run_id: string;
  turn: number;
  /** The agent's own tokens of the kept turns and the delegations they made, as the original spent them. */
  reused_usage?: TokenUsage;
  /** Delegations of the kept turns whose results the fork took over. */
  reused_delegations: number;
}
