/**
 * `forkSubagentWorkflow`: the first execution of a fork of one subagent (docs/fork.md), a run of its own. It reads
 * the original subagent's state at the end of the turn asked for, through an activity (the original's history is
 * read, never replayed here), gives the fork its files (the run's workspace snapshot at that turn, restored into
 * a new folder, or the folder the user chose), and continues as new as a `subagentWorkflow` with the original's
 * agent, tools and scope that starts from that state: its own run (`run_id` its workflow id), so it asks no lead
 * for budgets and tells no parent.
 */
import { makeContinueAsNewFunc, proxyActivities, upsertSearchAttributes } from '@temporalio/workflow';
import type { ProjectActivities } from '../activities';
import type { ForkPoint, ForkRunInput } from '../contracts/run-fork';
import { scoped, type UnscopedInput } from '../contracts/run-scope';
import { FORK_TURN } from '../contracts/search-attributes';
import type { SubagentInput, SubagentResult } from '../contracts/subagent';
import { forkScope, forkStart, forkWorkspace, refuseOtherKind, type ForkWorkspace } from './fork-run';
import type { subagentWorkflow } from './subagent';

const { readForkPoint } = proxyActivities<ProjectActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** What the kept turns delegated is in their transcript as results: the fork's own ledger starts empty. */
function ownDelegation({
  ledger: _ledger,
  ...delegation
}: NonNullable<SubagentInput['delegation']>): NonNullable<SubagentInput['delegation']> {
  return delegation;
}

/** The fork's input: the original's agent, tools and scope, its own run and folder, its starting state. */
export function forkedSubagentInput(
  input: ForkRunInput,
  point: ForkPoint,
  original: SubagentInput,
  files: ForkWorkspace,
): SubagentInput {
  const {
    carry: _carry,
    admitted_at: _admitted,
    fork: _fork,
    // In the kept transcript already.
    fork_messages: _forkMessages,
    fork_from: _forkFrom,
    // For a parent, which the fork has none of.
    first_report_at: _reportAt,
    first_report_after_ms: _reportAfter,
    ...settings
  } = original;
  return {
    ...settings,
    ...(settings.delegation && { delegation: ownDelegation(settings.delegation) }),
    run_id: input.run_id,
    scope: forkScope(original.scope, input.run_id, files),
    fork: forkStart(input, point),
  };
}

export async function forkSubagentWorkflow(input: ForkRunInput): Promise<SubagentResult> {
  const point = await readForkPoint({
    run_id: input.from_run_id,
    ...(input.turn !== undefined && { turn: input.turn }),
  });
  refuseOtherKind(point, 'subagent', input.from_run_id);
  // A resume learns its turn now.
  upsertSearchAttributes([{ key: FORK_TURN, value: String(point.turn) }]);
  const original = scoped<SubagentInput>(point.original_input as UnscopedInput<SubagentInput>);
  const files = await forkWorkspace(input, point, original.scope.workspace, {
    name: `subagent ${input.from_run_id}`,
    turn: 'turn',
  });
  const continueAsSubagent = makeContinueAsNewFunc<typeof subagentWorkflow>({
    workflowType: 'subagentWorkflow',
  });
  return continueAsSubagent(forkedSubagentInput(input, point, original, files));
}
