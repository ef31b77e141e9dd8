/**
 * What an agent's loop hands to its next execution when history grows long (continue-as-new): plain data,
 * small whatever the run's length (the transcript travels by reference). Lead runs and subagents carry the
 * same; the lead adds its event log.
 */
import type { TreeBudgetCarry } from './budget';
import type { TokenUsage } from './messages';
import type { ActiveSkill, RunSkillsSnapshot } from './run-skills';
import type { Transcript } from './transcript';

/** Plain JSON: guard state is carried across continue-as-new, so no Set, Map, Date or class instances. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export interface LoopCarry {
  transcript: Transcript;
  /**
   * The tree budget (contracts/budget.ts), when the run has one: the root's ledger, or this agent's allotment
   * (workflows/budget/). Plain JSON, kept here so it crosses continue-as-new with the rest.
   */
  tree_budget?: TreeBudgetCarry;
  /** Where the agent's task (its user prompt) sits in the transcript: kept through compaction. */
  task_index: number;
  turns: number;
  usage?: TokenUsage;
  /**
   * USD of the agent's own model calls (its summaries included), priced by each call's `models[].pricing`;
   * absent while no call it made was priced (no pricing: no cost, not 0).
   */
  cost_usd?: number;
  /** Each guard's state under its name (plain JSON). */
  guard_states: Record<string, JsonValue>;
  /** The last step's sequence number: the step log goes on from there. */
  step_seq: number;
  model_name?: string;
  /** The agent's last non-empty answer: its result if the run ends now. */
  last_text?: string;
  /** The date reminder (`<current_date>…</current_date>`), fixed at the run's start and sent at every turn. */
  date_context?: string;
  /**
   * The lead's memory (the user's `<memory>` block and, in tool mode, how to use its tools), read once as the run
   * starts and sent at every turn; absent: the run has no memory, or has not read it yet.
   */
  memory_context?: string;
  /** The compaction summary, re-injected at every turn (summarization). */
  summary?: string;
  /** Prompt tokens of the last model call, as the provider counted them. */
  last_prompt_tokens?: number;
  /** Turn before which compaction is not tried again after a failed summary. */
  compaction_retry_turn?: number;
  /** The prompt's size (tokens) right after the last compaction: the next one waits until it has grown. */
  compaction_floor?: number;
  /** Set by a compaction: the next model call measures `compaction_floor`. */
  measure_compaction_floor?: boolean;
  /**
   * Set by a compaction forced by the provider's context overflow, until a model call passes: a second
   * overflow right after one ends the run instead of summarizing again.
   */
  overflow_compacted?: boolean;
  /** Deferred MCP tools `tool_search` promoted in this task run (contracts/tool-search.ts); absent: none. */
  promoted_tools?: string[];
  /**
   * The agent's skills, as the catalog said when the run's first execution took its snapshot
   * (contracts/run-skills.ts); carried, so every execution and every replay sees the same. Absent: no skills.
   */
  skills?: RunSkillsSnapshot;
  /** The skills that became active in this agent's run, in the order they did; absent: none. */
  active_skills?: ActiveSkill[];
  /**
   * `read_before_write`: for each file this agent read (contracts/tool-output.ts `readMarkKey`), the hash of the
   * version it read. Writes never refresh a mark: the next write needs a new read. Absent: none read.
   */
  read_marks?: Record<string, string>;
  /** Tool calls this agent held for approval, earlier executions included: the next one is `a<n + 1>`. */
  approvals_asked?: number;
  /** How many executions came before this one. */
  continued: number;
}
