import { CLOSING_FAILURE_TYPES, resultInFailure } from './closing';
import type { GraphAgentSettings } from './graph';
import type { LedgerEntry } from './ledger';
import type { McpToolFilter } from './mcp';
import type { LoopCarry } from './loop-carry';
import type { ClarificationSettings } from './clarification';
import type { ChatMessage, TokenUsage } from './messages';
import type { ModelSettings } from './model';
import type { SubagentStatus, SubagentStopReason } from './status';
import type { DelegationLimitSettings } from './lead';
import type { SummarizationRuntime } from './summarization';
import type { SandboxSettings } from './tools';
import type { TranscriptRef } from './transcript';

/** Above `timeout_seconds`, the workflow execution timeout a starter sets as a hard backstop. */
export const SUBAGENT_TIMEOUT_GRACE_SECONDS = 60;

/** The longest `result_brief` (and the briefs of errors in events and the ledger): head and tail kept. */
export const RESULT_BRIEF_MAX_CHARS = 2000;

export interface TokenBudgetSettings {
  enabled: boolean;
  max_tokens: number;
  /** Fraction of max_tokens at which a one-time budget note is added to the next model call. */
  warn_threshold: number;
  /** Fraction of max_tokens at which the turn's tool calls are stripped and the run finishes (1.0). */
  hard_threshold: number;
}

export interface ToolFrequencyOverride {
  warn: number;
  hard_limit: number;
}

export interface LoopDetectionSettings {
  enabled: boolean;
  /** Identical tool-call sets within the window before a warning is added. */
  warn_threshold: number;
  /** Identical tool-call sets within the window before the run is stopped. */
  hard_limit: number;
  window_size: number;
  /** Calls of one tool name (any arguments) before a warning, and before the stop. */
  tool_freq_warn: number;
  tool_freq_hard_limit: number;
  tool_freq_overrides: Record<string, ToolFrequencyOverride>;
}

/** An agent with every default applied: what a subagent workflow runs with. */
export interface ResolvedAgent {
  name: string;
  description: string;
  system_prompt: string;
  /** Tools the agent may see and run, after allow/deny (never `task` for a subagent unless nesting is on). */
  tools: string[];
  max_turns: number;
  timeout_seconds: number;
  token_budget: TokenBudgetSettings;
  model: ModelSettings;
  /** The MCP tools it may see and run (its allow/deny entries that name them); absent: none. */
  mcp?: McpToolFilter;
  /** Set for an agent that is a LangGraph graph: the subagent runs it instead of the agent loop. */
  graph?: GraphAgentSettings;
}

export interface SubagentInput {
  /** The lead run's id (its workflow id). */
  run_id: string;
  /** The tool_call_id of the `task` call that started this subagent. */
  task_id: string;
  description: string;
  prompt: string;
  subagent_type: string;
  agent: ResolvedAgent;
  loop_detection: LoopDetectionSettings;
  workspace: string;
  sandbox: SandboxSettings;
  /** Delegation depth: a child's depth is its parent's plus one (the lead is 0). */
  depth: number;
  /** `fork` provider: the lead's completed turns the child starts from (those after `fork_from`). */
  fork_messages?: ChatMessage[];
  /** `fork` provider: the lead's stored transcript prefix, whose completed turns come first. */
  fork_from?: TranscriptRef;
  /** Present when the agent may delegate in turn (its tools include `task`): what it may start, and the limits. */
  delegation?: {
    agents: ResolvedAgent[];
    limits: DelegationLimitSettings;
    /** This subagent's own delegations so far (set when it continues as new). */
    ledger?: LedgerEntry[];
  };
  /** Compaction settings (the same switch as the lead's); absent → off. */
  summarization?: SummarizationRuntime;
  /** Its turn at admission: the lead's `fairness_key`, else the lead run's id (absent: the run id). */
  fairness_key?: string;
  /**
   * Its first progress report to the parent waits until it has run this long (at a turn's end): a child done
   * sooner reports only its result. Absent (children started before this existed): after its first turn.
   */
  first_report_after_ms?: number;
  /**
   * Set when it continues as new holding its slot: when its wall clock started (the server's start, or the
   * grant when it waited in the queue).
   */
  admitted_at?: string;
  /**
   * Set by the parent: the subagent asks for its slot as its first step. Absent (an input from before it
   * existed), its own history says whether it does (the `subagent-admission` patch, which costs a marker and
   * a search attribute update in every child that checks it).
   */
  asks_slot?: true;
  /**
   * Set by every starter of this project: the workflow's Temporal status says how it ended (contracts/closing.ts).
   * Absent (an input from before it existed), its own history says whether it does (the `honest-close` patch,
   * which costs a marker in every workflow that checks it).
   */
  honest_close?: true;
  /**
   * The run's `ask_clarification` settings, when the config enables it: the subagent is offered the tool if its
   * agent's tools allow it, and hands the settings on to what it delegates.
   */
  clarification?: ClarificationSettings;
  /** Set by the subagent itself when it continues as new: where the previous execution left off. */
  carry?: LoopCarry;
}

export interface SubagentResult {
  status: SubagentStatus;
  stop_reason?: SubagentStopReason;
  /** The final (or partial) answer, when there is one. */
  result?: string;
  error?: string;
  /** ≤ 2,000 chars, head and tail kept. */
  result_brief?: string;
  result_sha256?: string;
  model_name?: string;
  /** Absent when the provider reported no usage. */
  token_usage?: TokenUsage;
  turns: number;
  /** The failure came from a model provider error (the seeds' `deerflow_error_fallback`). */
  error_fallback?: boolean;
  /**
   * The subagent was refused an execution slot (capacity full, or the queue timeout passed) at its first step:
   * `status` is `failed`, no model was called. A batch requeues these; a subagent that ran and failed never has
   * it.
   */
  admission_failure?: true;
}

/**
 * A subagent that failed ends its workflow as failed (red in every Temporal view) with this failure type, and
 * its whole result as the failure's first detail: its parent, its batch and `batch results` read it from
 * there, as they read a completed one's result. One that timed out does the same with
 * `SUBAGENT_TIMED_OUT_TYPE` (contracts/closing.ts).
 */
export const SUBAGENT_FAILED_TYPE = CLOSING_FAILURE_TYPES.subagentFailed;
export const SUBAGENT_TIMED_OUT_TYPE = CLOSING_FAILURE_TYPES.subagentTimedOut;
/** How its failure's message starts (the Web UI shows it; the worker's log knows the failure by it). */
export const SUBAGENT_FAILED_PREFIX = 'Subagent failed: ';
export const SUBAGENT_TIMED_OUT_PREFIX = 'Subagent timed out: ';

/** The result a failed or timed-out subagent's failure carries, found on `err` or its causes. */
export function failedSubagentResult(err: unknown): SubagentResult | undefined {
  return resultInFailure(err) as SubagentResult | undefined;
}

/** The child whose memo holds its result: one its parent saw end Canceled (activities/cancelled-results.ts). */
export interface CancelledResultRequest {
  workflow_id: string;
}

/** The result a cancelled subagent recorded in its memo; absent when there is none to read. */
export interface CancelledResultAnswer {
  result?: SubagentResult;
}
