/**
 * `forkRunWorkflow`: the first execution of a fork (or a resume) of a lead run (docs/fork.md). It reads the
 * original's state at the end of the lead turn asked for, through an activity (the original's history is read,
 * never replayed here), gives the fork its files (the original's workspace snapshot at that turn, restored into a
 * new folder, or the folder the user chose), and continues as new as a `leadRunWorkflow` that starts from that
 * state: same workflow id, so the run's id, search attributes and result are the fork's own.
 */
import {
  ApplicationFailure,
  makeContinueAsNewFunc,
  proxyActivities,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { ProjectActivities } from '../activities';
import type { LeadRunInput, LeadRunResult } from '../contracts/lead';
import {
  FORK_FAILURE_TYPE,
  forkKindProblem,
  type ForkPoint,
  type ForkRunInput,
  type LeadFork,
} from '../contracts/run-fork';
import { scoped, type RunScope, type UnscopedInput } from '../contracts/run-scope';
import { FORK_TURN } from '../contracts/search-attributes';
import type { WorkspacePlacement } from '../contracts/workspace';
import type { leadRunWorkflow } from './lead-run';

const { readForkPoint, restoreForkWorkspace } = proxyActivities<ProjectActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** A fork started as the workflow of the other kind (by a starter other than this project's client) stops. */
export function refuseOtherKind(point: ForkPoint, kind: 'lead' | 'subagent', id: string): void {
  const problem = forkKindProblem(point, kind, id);
  if (problem !== undefined)
    throw ApplicationFailure.create({ message: problem, type: FORK_FAILURE_TYPE, nonRetryable: true });
}

/** The fork's files: where they are, and where the workspace lives when a host restored it as its home. */
export interface ForkWorkspace {
  workspace: string;
  placement?: WorkspacePlacement;
}

/**
 * The fork's files: the folder the user chose, else the original's workspace snapshot at the turn kept,
 * restored into a new folder beside `originalFolder` (refused, saying so, when there is none). `original`
 * names the original and its turns in that refusal (`run <id>` and `lead turn`, `subagent <id>` and `turn`).
 */
export async function forkWorkspace(
  input: ForkRunInput,
  point: ForkPoint,
  originalFolder: string,
  original: { name: string; turn: string },
): Promise<ForkWorkspace> {
  if (input.workspace !== undefined) return { workspace: input.workspace };
  if (point.workspace_manifest === undefined) {
    throw ApplicationFailure.create({
      message:
        `${original.name} has no workspace snapshot at ${original.turn} ${point.turn} ` +
        '(workspace.snapshots is off, or it wrote nothing by then): pass --workspace DIR to run the fork on a ' +
        'folder you choose',
      type: FORK_FAILURE_TYPE,
      nonRetryable: true,
    });
  }
  return restoreForkWorkspace({
    run_id: input.run_id,
    original: originalFolder,
    manifest: point.workspace_manifest,
  });
}

/** The state the fork starts in (its input's `fork`): the kept turns, then `--message` when there is one. */
export function forkStart(input: ForkRunInput, point: ForkPoint): LeadFork {
  const tail = [...point.transcript.tail];
  if (input.message !== undefined) tail.push({ role: 'user', content: input.message });
  return {
    from_run_id: input.from_run_id,
    turn: point.turn,
    transcript: { ...point.transcript, tail },
    task_index: point.task_index,
    ...(point.reused_usage && { reused_usage: point.reused_usage }),
  };
}

/** The original's scope on the fork's files: their folder, and their home when a host restored them. */
export function forkScope(original: RunScope, runId: string, files: ForkWorkspace): RunScope {
  const { workspace_placement: _placement, workspace_key: _key, ...scope } = original;
  return {
    ...scope,
    workspace: files.workspace,
    ...(files.placement && { workspace_placement: files.placement, workspace_key: runId }),
  };
}

/** The fork's lead input: the original's settings, its own run and folder, the state it starts in. */
export function forkedLeadInput(
  input: ForkRunInput,
  point: ForkPoint,
  original: LeadRunInput,
  files: ForkWorkspace,
): LeadRunInput {
  const {
    carry: _carry,
    ledger: _ledger,
    admitted_at: _admitted,
    fork: _fork,
    run_id: _runId,
    ...settings
  } = original;
  return {
    ...settings,
    run_id: input.run_id,
    scope: forkScope(original.scope, input.run_id, files),
    ...(point.ledger.length > 0 && { ledger: point.ledger }),
    fork: forkStart(input, point),
  };
}

export async function forkRunWorkflow(input: ForkRunInput): Promise<LeadRunResult> {
  const point = await readForkPoint({
    run_id: input.from_run_id,
    ...(input.turn !== undefined && { turn: input.turn }),
  });
  refuseOtherKind(point, 'lead', input.from_run_id);
  // A resume learns its turn now.
  upsertSearchAttributes([{ key: FORK_TURN, value: String(point.turn) }]);
  const original = scoped<LeadRunInput>(point.original_input as UnscopedInput<LeadRunInput>);
  const files = await forkWorkspace(input, point, original.scope.workspace, {
    name: `run ${input.from_run_id}`,
    turn: 'lead turn',
  });
  const continueAsLead = makeContinueAsNewFunc<typeof leadRunWorkflow>({ workflowType: 'leadRunWorkflow' });
  return continueAsLead(forkedLeadInput(input, point, original, files));
}
