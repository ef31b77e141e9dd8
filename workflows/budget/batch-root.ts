/**
 * A batch started on its own (`subagents batch start`, a scheduled batch: no lead run above it) with a tree
 * budget (`--max-cost-usd`, or the config's `token_budget:`) is the root of its tree: its items lease their
 * allotments from it as a lead's children lease from the lead, so the whole batch shares one budget. It spends
 * nothing itself; once the budget stops the tree, the items not yet started never start.
 */
import { setHandler } from '@temporalio/workflow';
import {
  treeBudgetLeaseSignal,
  type TreeBudgetReport,
  type TreeBudgetSettings,
  type TreeLedgerState,
  type TreeStopReason,
} from '../../contracts/budget';
import { sendNotices } from './gate';
import { initialTreeLedger, TreeLedger, treeBudgetReport } from './tree-ledger';

export interface BatchBudget {
  /** Why the tree stopped, once it has. */
  stopped(): TreeStopReason | undefined;
  /** The ledger to carry across continue-as-new. */
  state(): TreeLedgerState;
  /** What the batch's result says of it: the items' spend, and whether the budget stopped the batch. */
  report(): TreeBudgetReport;
}

/** The batch's ledger, answering its items' lease requests; `carried`: the previous execution's. */
export function batchTreeBudget(
  settings: TreeBudgetSettings,
  carried: TreeLedgerState | undefined,
): BatchBudget {
  const ledger = new TreeLedger(settings, carried ?? initialTreeLedger());
  setHandler(treeBudgetLeaseSignal, (request) => sendNotices(ledger.lease(request)));
  return {
    stopped: () => ledger.state.stopped,
    state: () => ledger.state,
    report: () => treeBudgetReport({ ledger: ledger.state }).tree_budget ?? { spent: ledger.spent() },
  };
}
