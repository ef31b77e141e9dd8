/**
 * The tree budget (issue 45): DeerFlow's top-level `token_budget`, over the whole tree of a run — the lead, every
 * subagent at every depth, the batch items it starts — and, beside tokens, money (`max_cost_usd` with
 * `models[].pricing`). The root of the tree (the lead run) keeps the ledger (workflows/budget/tree-ledger.ts);
 * every other agent spends from an allotment it leases from the root (workflows/budget/allotment.ts), so a call
 * does not wait on a round trip while its allotment lasts, and parallel children never spend one remainder twice.
 *
 * Pure: the wire shapes, the cost of a call, the thresholds and DeerFlow's words. No Node APIs.
 */
import { defineSignal } from '@temporalio/workflow';
import { z } from 'zod';
import type { TokenUsage } from './messages';
import { groupThousands } from './text';

/**
 * USD per million tokens (`models[].pricing`): input, output, and input read from the provider's cache. Built
 * anew on each call, as every input schema is (contracts/input-schemas.ts: a workflow's schemas are frozen).
 */
export function modelPricingSchema() {
  return z.strictObject({
    input: z.number().min(0),
    output: z.number().min(0),
    /** Absent: cached input costs what input costs. */
    cached_input: z.number().min(0).optional(),
  });
}
export type ModelPricing = z.output<ReturnType<typeof modelPricingSchema>>;

/**
 * The run's tree budget as a workflow input carries it (resolved from the config's `token_budget:`; absent when
 * it is not enabled). Each limit is optional; at least one is set.
 */
export function treeBudgetSchema() {
  return z.strictObject({
    /** Input + output tokens of the whole tree. */
    max_tokens: z.number().int().positive().optional(),
    max_input_tokens: z.number().int().positive().optional(),
    max_output_tokens: z.number().int().positive().optional(),
    /** USD over the whole tree, priced by each call's model (`models[].pricing`). */
    max_cost_usd: z.number().positive().optional(),
    /** Fraction of a limit at which every agent still running is told to wrap up (DeerFlow: 0.8). */
    warn_threshold: z.number().gt(0).max(1),
    /** Fraction of a limit at which every agent stops (`token_capped` / `cost_capped`; DeerFlow: 1.0). */
    hard_stop_threshold: z.number().gt(0).max(1),
  });
}
export type TreeBudgetSettings = z.output<ReturnType<typeof treeBudgetSchema>>;

/** DeerFlow's defaults for the keys a user leaves out. */
export const DEFAULT_TREE_BUDGET = { max_tokens: 200_000, warn_threshold: 0.8, hard_stop_threshold: 1.0 };

/** What the tree has spent: tokens and USD. Plain JSON (carried across continue-as-new). */
export interface Spend {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cost_usd: number;
}

export const ZERO_SPEND: Spend = { input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0 };

export function addSpend(a: Spend, b: Spend): Spend {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
    cost_usd: roundUsd(a.cost_usd + b.cost_usd),
  };
}

/** USD to a millionth of a cent: sums of many small costs stay exact enough and print cleanly. */
export function roundUsd(usd: number): number {
  return Math.round(usd * 1e8) / 1e8;
}

/** What one call's usage costs under `pricing` (USD per million tokens); no pricing: nothing. */
export function callCostUsd(usage: TokenUsage, pricing: ModelPricing | undefined): number {
  if (!pricing) return 0;
  const cached = Math.min(usage.cache_read_tokens ?? 0, usage.input_tokens);
  const fresh = usage.input_tokens - cached;
  const usd =
    fresh * pricing.input +
    cached * (pricing.cached_input ?? pricing.input) +
    usage.output_tokens * pricing.output;
  return roundUsd(usd / 1_000_000);
}

/** A call's usage as spend, priced. */
export function spendOf(usage: TokenUsage, pricing: ModelPricing | undefined): Spend {
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens,
    cost_usd: callCostUsd(usage, pricing),
  };
}

/** Tokens and USD: a reservation, a want, an allotment. */
export interface Amount {
  tokens: number;
  cost_usd: number;
}

export const ZERO_AMOUNT: Amount = { tokens: 0, cost_usd: 0 };

/** One agent's lease: what it reported spending (cumulative), what it may spend in all, and what it was told. */
export interface Holder {
  seq: number;
  spent: Spend;
  granted: Amount;
  warned?: true;
  done?: true;
}

/** Plain JSON: the lead carries it across continue-as-new. */
export interface TreeLedgerState {
  own: Spend;
  holders: Record<string, Holder>;
  warned?: true;
  /** The root's own agent has been told the warning. */
  own_warned?: true;
  stopped?: TreeStopReason;
}

/** Plain JSON: the agent carries it across continue-as-new, so its spend and lease go on where they were. */
export interface AllotmentState {
  /** The last request sent (0: none yet). */
  seq: number;
  /** The last request the root answered. */
  answered: number;
  spent: Spend;
  granted: Amount;
  /** DeerFlow's warning, not yet told to the model. */
  warning?: string;
  /** The warning has reached this agent (it is told once). */
  warned?: true;
  stopped?: TreeStopReason;
}

/** What an agent carries of the tree budget across continue-as-new (contracts/loop-carry.ts). */
export interface TreeBudgetCarry {
  /** The root's (the lead run's). */
  ledger?: TreeLedgerState;
  /** Any other agent's. */
  allotment?: AllotmentState;
  /** The root had closed when this agent asked (a batch item outliving its run): it goes on unbudgeted. */
  orphan?: true;
}

/** What a run's result and status say of its tree budget: the whole tree's spend, and whether it stopped the run. */
export interface TreeBudgetReport {
  spent: Spend;
  stopped?: TreeStopReason;
}

export type BudgetAxis = 'total' | 'input' | 'output' | 'cost';
export type TreeStopReason = 'token_capped' | 'cost_capped';

/** The limit of the tree nearest to its end: the axis, what it has used and its limit. */
export interface BudgetReading {
  axis: BudgetAxis;
  used: number;
  limit: number;
  fraction: number;
}

/** Every limit set, read against `spend`; the highest fraction first (DeerFlow reads the highest). */
export function readBudget(settings: TreeBudgetSettings, spend: Spend): BudgetReading | undefined {
  const readings: BudgetReading[] = [];
  const add = (axis: BudgetAxis, used: number, limit: number | undefined) => {
    if (limit !== undefined) readings.push({ axis, used, limit, fraction: used / limit });
  };
  add('total', spend.total_tokens, settings.max_tokens);
  add('input', spend.input_tokens, settings.max_input_tokens);
  add('output', spend.output_tokens, settings.max_output_tokens);
  add('cost', spend.cost_usd, settings.max_cost_usd);
  let top: BudgetReading | undefined;
  for (const reading of readings) if (!top || reading.fraction > top.fraction) top = reading;
  return top;
}

/** The stop reason of an axis: money says `cost_capped`, every token axis `token_capped`. */
export function stopReasonOf(axis: BudgetAxis): TreeStopReason {
  return axis === 'cost' ? 'cost_capped' : 'token_capped';
}

/** DeerFlow's warning (its token_budget middleware), for the tree: every agent still running reads it. */
export function treeBudgetWarning(reading: BudgetReading): string {
  const percent = Math.round(reading.fraction * 100);
  if (reading.axis === 'cost') {
    return (
      `[TOKEN BUDGET WARNING] You have used $${reading.used.toFixed(4)} of your $${reading.limit.toFixed(2)} ` +
      `cost budget (${percent}%). Wrap up your current work and produce a final answer. Avoid starting new ` +
      `tool calls unless absolutely necessary.`
    );
  }
  return (
    `[TOKEN BUDGET WARNING] You have used ${groupThousands(reading.used)} of your ` +
    `${groupThousands(reading.limit)} ${reading.axis} token budget (${percent}%). Wrap up your current work and ` +
    `produce a final answer. Avoid starting new tool calls unless absolutely necessary.`
  );
}

/**
 * What an agent asks the root for (signal `tree_budget_lease`): a bigger allotment, with what it has spent so
 * far. `spent` is cumulative, so a report that arrives twice or late changes nothing (`seq` orders them).
 */
export interface AllotmentRequest {
  /** The asking agent's workflow id: the root answers it there. */
  agent: string;
  seq: number;
  /** What the agent has spent in all (every execution of it), its reserved calls not included. */
  spent: Spend;
  /** Tokens (and USD) it asks for beyond what it holds: the next call's reservation, at least. */
  want: { tokens: number; cost_usd: number };
  /** The agent has ended: what it holds goes back to the tree, `spent` is final. */
  done?: true;
}

/** The root's answer (signal `tree_budget_grant`), and its notices to every holder. */
export interface AllotmentGrant {
  /** The request answered; 0 for a notice nobody asked for (a warning, a stop). */
  seq: number;
  /** What the agent may spend in all from now on, counted from zero at its first request (cumulative). */
  granted: { tokens: number; cost_usd: number };
  /** DeerFlow's warning, once: the tree passed `warn_threshold`. */
  warning?: string;
  /** The tree reached `hard_stop_threshold`: the agent stops as a capped one does. */
  stop?: TreeStopReason;
}

export const treeBudgetLeaseSignal = defineSignal<[AllotmentRequest]>('tree_budget_lease');
export const treeBudgetGrantSignal = defineSignal<[AllotmentGrant]>('tree_budget_grant');
