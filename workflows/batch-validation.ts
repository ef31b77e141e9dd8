/**
 * A batch's items checked as workflow code decides them (the batch workflow at its start, the lead's
 * `batch_task` before it starts one). `matches:` patterns run on RE2, so RE2 checks them; batches and lead
 * runs started before that checked them with JavaScript's RegExp, which takes some patterns RE2 refuses
 * (lookaround, backreferences) and refuses some RE2 takes (`(?i)`, `(?P<name>…)`). Only where the two engines
 * disagree on whether the items pass is the patch asked, so a replayed history keeps the decision it took and
 * a history of items the engines agree on carries no marker.
 */
import { patched } from '@temporalio/workflow';
import { batchItemsProblems } from '../contracts/batch-items';

const RE2_CRITERIA_PATCH = 'batch-criteria-re2';

/** Every problem of a batch's items (contracts/batch-items.ts), decided deterministically. */
export function decidedBatchItemsProblems(items: unknown): string[] {
  const problems = batchItemsProblems(items);
  const before = batchItemsProblems(items, 'javascript-regexp');
  if ((problems.length === 0) === (before.length === 0)) return problems;
  return patched(RE2_CRITERIA_PATCH) ? problems : before;
}
