/**
 * The tree budget as the agent loop meets it: before each model call `beforeCall` reserves the call (the root
 * from its ledger, any other agent from its allotment, leasing more from the root by signal when it does not
 * fit); after it, `afterCall` counts what the call spent. Built only for a run with a tree budget: a run without
 * one schedules nothing new and replays as before.
 */
import { condition, getExternalWorkflowHandle, log, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  roundUsd,
  spendOf,
  treeBudgetGrantSignal,
  treeBudgetLeaseSignal,
  type AllotmentRequest,
  type Amount,
  type ModelPricing,
  type Spend,
  type TreeBudgetCarry,
  type TreeBudgetSettings,
  type TreeStopReason,
} from '../../contracts/budget';
import { ZERO_USAGE, type TokenUsage } from '../../contracts/messages';
import { Allotment, initialAllotment } from './allotment';
import { initialTreeLedger, TreeLedger, type Notice } from './tree-ledger';

/** An unanswered lease request is sent again after this long (its answer lost, or the root continuing as new). */
const ASK_AGAIN_MS = 60_000;

export interface BudgetGate {
  /** Before a model call reserving `want`: undefined when it may start, else why the tree stops this agent. */
  beforeCall(want: Amount): Promise<TreeStopReason | undefined>;
  /** The call came back: what it spent counts. */
  afterCall(spend: Spend): void;
  /** DeerFlow's warning for the model's next call, once. */
  takeWarning(): string | undefined;
  /** The agent ended: a leaf hands back what it holds and reports its final spend. */
  close(): Promise<void>;
}

/**
 * A call came back (a model call, a summary): its cost adds to the agent's own when its model is priced (no
 * pricing: no cost, not 0), and its spend counts against the tree budget when there is one.
 */
export function countCall(
  agent: { cost_usd?: number },
  budget: BudgetGate | undefined,
  usage: TokenUsage | undefined,
  pricing: ModelPricing | undefined,
): void {
  const spend = spendOf(usage ?? ZERO_USAGE, pricing);
  if (pricing && usage) agent.cost_usd = roundUsd((agent.cost_usd ?? 0) + spend.cost_usd);
  budget?.afterCall(spend);
}

/**
 * An agent whose usage comes as a running total (a remote agent, as it reports): what is new since `before`
 * counts against the tree budget. A total that went down (a remote task started again) counts nothing.
 */
export function countReported(
  budget: BudgetGate,
  before: TokenUsage | undefined,
  now: TokenUsage | undefined,
): void {
  if (!now) return;
  const was = before ?? ZERO_USAGE;
  const delta = (key: 'input_tokens' | 'output_tokens' | 'total_tokens') => Math.max(0, now[key] - was[key]);
  const usage = {
    input_tokens: delta('input_tokens'),
    output_tokens: delta('output_tokens'),
    total_tokens: delta('total_tokens'),
  };
  if (usage.total_tokens > 0) budget.afterCall(spendOf(usage, undefined));
}

/** What a call reserves: its prompt as estimated, and `max_tokens` of output when the model sets one. */
export function callReservation(
  promptTokens: number,
  maxTokens: number | undefined,
  pricing?: ModelPricing,
): Amount {
  const output = maxTokens ?? 0;
  const usd = pricing ? (promptTokens * pricing.input + output * pricing.output) / 1_000_000 : 0;
  return { tokens: promptTokens + output, cost_usd: usd };
}

/**
 * The gate of the agent running this workflow: the root's when it is the run's own workflow (the lead), a
 * leaf's otherwise. `carry` is the loop state's `tree_budget`, kept up to date in place.
 */
export function treeBudgetGate(
  settings: TreeBudgetSettings,
  runId: string,
  carry: TreeBudgetCarry,
  /** Report its spend at the end even when it never asked (an agent that counts without reserving: remote). */
  reportsUnasked = false,
): BudgetGate {
  return workflowInfo().workflowId === runId
    ? rootGate(settings, carry)
    : leafGate(settings, runId, carry, reportsUnasked);
}

/** The axes allotments are counted in, as the root's ledger counts them. */
function treeLimits(settings: TreeBudgetSettings): { tokens: boolean; usd: boolean } {
  return new TreeLedger(settings).limits();
}

/** The root's answers and notices, each to its agent by signal. */
export function sendNotices(notices: Notice[]): void {
  for (const { agent, grant } of notices) {
    // A holder that has closed since needs no answer.
    void getExternalWorkflowHandle(agent)
      .signal(treeBudgetGrantSignal, grant)
      .catch(() => undefined);
  }
}

function rootGate(settings: TreeBudgetSettings, carry: TreeBudgetCarry): BudgetGate {
  carry.ledger ??= initialTreeLedger();
  const ledger = new TreeLedger(settings, carry.ledger);
  setHandler(treeBudgetLeaseSignal, (request) => sendNotices(ledger.lease(request)));
  return {
    beforeCall: (want) => Promise.resolve(ledger.reserveOwn(want)),
    afterCall: (spend) => sendNotices(ledger.spendOwn(spend)),
    takeWarning: () => ledger.takeOwnWarning(),
    close: () => Promise.resolve(),
  };
}

function leafGate(
  settings: TreeBudgetSettings,
  runId: string,
  carry: TreeBudgetCarry,
  reportsUnasked: boolean,
): BudgetGate {
  carry.allotment ??= initialAllotment();
  const allotment = new Allotment(workflowInfo().workflowId, treeLimits(settings), carry.allotment);
  setHandler(treeBudgetGrantSignal, (grant) => allotment.apply(grant));
  const root = getExternalWorkflowHandle(runId);
  /** False when the root is gone: the agent goes on unbudgeted (its run has ended; nothing is left to count). */
  const tell = async (request: AllotmentRequest): Promise<boolean> => {
    try {
      await root.signal(treeBudgetLeaseSignal, request);
      return true;
    } catch (err) {
      log.warn('the run that keeps the tree budget has closed: this agent goes on unbudgeted', {
        run_id: runId,
        error: err instanceof Error ? err.message : String(err),
      });
      carry.orphan = true;
      return false;
    }
  };
  return {
    async beforeCall(want) {
      if (carry.orphan) return undefined;
      if (allotment.state.stopped) return allotment.state.stopped;
      if (allotment.covers(want)) return undefined;
      if (!(await tell(allotment.ask(want)))) return undefined;
      while (
        !(await condition(
          () => allotment.answeredLast() || allotment.state.stopped !== undefined,
          ASK_AGAIN_MS,
        ))
      ) {
        if (!(await tell(allotment.askAgain(want)))) return undefined;
      }
      if (allotment.state.stopped) return allotment.state.stopped;
      if (allotment.covers(want)) return undefined;
      return treeLimits(settings).tokens && allotment.held().tokens < want.tokens
        ? 'token_capped'
        : 'cost_capped';
    },
    afterCall: (spend) => allotment.spend(spend),
    takeWarning: () => allotment.takeWarning(),
    async close() {
      const unasked = allotment.state.seq === 0;
      if (carry.orphan || (unasked && !(reportsUnasked && allotment.state.spent.total_tokens > 0))) return;
      await tell(allotment.release());
    },
  };
}
