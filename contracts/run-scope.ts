/**
 * The run scope: what a whole run shares (its user, workspace and where it lives, sandbox, guards, skills,
 * guardrails, secrets, compaction, questions, admission turn), one object on the wire (`scope`) carried
 * unchanged from the lead to each child and each batch item. What changes on the way down is said once, here:
 * `childScope` (a delegation) and `batchItemScope` (a batch's item). The schema is in contracts/input-schemas.ts.
 *
 * Inputs recorded before the scope carried these settings at their top level (and the lead its fairness key in
 * `limits`): `scopedInput` reads them into the same shape where a schema or a workflow meets an input, so old
 * histories replay with no patch (replay compares commands, not the inputs a command carries). Pure: no Node
 * APIs (the workflow bundle imports this file).
 */
import type { RunScope } from './input-schemas';
import { scopedInput, type TopLevelScopeKey } from './scoped-input';
import type { WorkspacePlacement } from './workspace';

export type { RunScope } from './input-schemas';
export { scopedInput, TOP_LEVEL_SCOPE_KEYS } from './scoped-input';

/** An input as recorded before the scope: the run's settings at its top level. */
export type UnscopedInput<I extends { scope: RunScope }> = Omit<I, 'scope' | TopLevelScopeKey> &
  Pick<RunScope, TopLevelScopeKey>;

/** A workflow's input as it reads it: its run's settings in `scope`, whenever it was recorded. */
export function scoped<I extends { scope: RunScope }>(input: I | UnscopedInput<I>): I {
  return scopedInput(input) as I;
}

/** Where the delegating agent knows the workspace is: what its children start with. */
export interface ScopePlacement {
  workspace_placement?: WorkspacePlacement;
  workspace_key: string;
}

/**
 * The scope a delegation's child starts with: its parent's, with the workspace where the parent knows it is,
 * the admission turn settled (the run's key, else the lead run's id), and the questions count left behind
 * (each agent counts its own questions).
 */
export function childScope(scope: RunScope, runId: string, placement: ScopePlacement): RunScope {
  const { clarification, ...shared } = scope;
  return {
    ...shared,
    ...placement,
    fairness_key: scope.fairness_key ?? runId,
    ...(clarification && { clarification: { timeout_seconds: clarification.timeout_seconds } }),
  };
}

/**
 * The scope a batch's item starts with: its batch's, one level down as a child's, with nobody to ask: no
 * questions, and a guardrail's `ask` decided by `unattended` at once, for it and what it delegates.
 */
export function batchItemScope(scope: RunScope, runId: string, placement: ScopePlacement): RunScope {
  const { clarification: _none, ...item } = childScope(scope, runId, placement);
  return {
    ...item,
    ...(scope.guardrails && { guardrails: { ...scope.guardrails, no_approver: true as const } }),
  };
}
