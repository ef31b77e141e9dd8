/**
 * Fork and resume of a lead run (docs/fork.md): a new lead run that keeps the original's first N lead turns,
 * read from the original's recorded history (never asked of the model again), and runs live from turn N + 1. A
 * subagent forks the same way, into a subagent run of its own (same agent, tools and scope).
 * Not the `fork` provider of a delegation (contracts/fork.ts), which hands a child the lead's turns.
 * Plain data, no Node APIs: workflows import this file.
 */
import type { LedgerEntry } from './ledger';

export type { ForkOrigin, LeadFork } from './lead';
import type { TokenUsage } from './messages';
import type { Transcript } from './transcript';

/** What a fork is asked for: the run (or subagent) it starts from, and at which of its turns. */
export interface ForkRequest {
  /** The original lead run's id, or a subagent's workflow id. */
  from_run_id: string;
  /** Turns kept (0: everything runs again). Absent: the last completed one (`resume`). */
  turn?: number;
  /** A user message added after the kept turns, before the first live one (a hint, a correction). */
  message?: string;
  /**
   * The folder the fork runs on, chosen by the user. Absent: a new folder restored from the original's workspace
   * snapshot at that turn; without a snapshot for that point the fork is refused, saying so.
   */
  workspace?: string;
}

/** `forkRunWorkflow`'s input: the request, and the fork's own run id (its workflow id). */
export interface ForkRunInput extends ForkRequest {
  run_id: string;
}

/** The original's state at the end of a turn, as `readForkPoint` read it from the original's history. */
export interface ForkPoint {
  /** What the original is (absent: a lead run, as points were read before subagents forked). */
  kind?: 'lead' | 'subagent';
  /** The turns kept. */
  turn: number;
  /** How the original ended (`completed`, `failed`, …), or `running`. */
  original_status: string;
  /** The transcript at the end of that turn: its stored prefix by reference, the messages after it. */
  transcript: Transcript;
  /** Where the task (the user prompt) sits in it. */
  task_index: number;
  /** The agent's own usage over the kept turns (not billed again). */
  reused_usage?: TokenUsage;
  /**
   * The delegations a lead's kept turns made, with their results, each marked `reused`. None for a subagent:
   * what its kept turns delegated is in its transcript as their results.
   */
  ledger: LedgerEntry[];
  /** The original's input (its first execution's): the fork runs with the same settings. */
  original_input: unknown;
  /** The newest workspace save at that turn's end (a manifest's blob key), when the workspace was saved. */
  workspace_manifest?: string;
}

/** Refusals a user reads: the original has no such turn, nothing to resume, or is not of the fork's kind. */
export const FORK_FAILURE_TYPE = 'ForkRefused';

/** What forks, by workflow type: a lead run (into a lead run), a subagent (into a subagent run of its own). */
export const FORKABLE_WORKFLOW_TYPES: Readonly<Record<string, 'lead' | 'subagent'>> = {
  leadRunWorkflow: 'lead',
  subagentWorkflow: 'subagent',
};

/** The refusal of a fork started as the wrong workflow for its original (a lead's fork of a subagent, …). */
export function forkKindProblem(
  point: Pick<ForkPoint, 'kind'>,
  kind: 'lead' | 'subagent',
  id: string,
): string | undefined {
  const found = point.kind ?? 'lead';
  if (found === kind) return undefined;
  return `${id} is ${found === 'lead' ? 'a lead run' : 'a subagent'}: its fork is a ${FORK_WORKFLOW_TYPES[found]}`;
}

/** The workflow a fork of each kind starts as. */
export const FORK_WORKFLOW_TYPES = {
  lead: 'forkRunWorkflow',
  subagent: 'forkSubagentWorkflow',
} as const;

/** What a fork of `kind` calls the original and its turns, in the sentences it refuses with. */
export function forkedNames(kind: 'lead' | 'subagent', id: string): { original: string; turns: string } {
  return kind === 'lead'
    ? { original: `run ${id}`, turns: 'lead turns' }
    : { original: `subagent ${id}`, turns: 'turns' };
}

/** The turns a user may ask a fork for, in the words `fork` refuses with. */
export function forkTurnProblem(
  turn: number,
  completedTurns: number,
  runId: string,
  kind: 'lead' | 'subagent' = 'lead',
): string | undefined {
  const names = forkedNames(kind, runId);
  const one = names.turns.replace(/s$/, '');
  if (!Number.isInteger(turn) || turn < 0) return `--turn ${turn} is not a ${one} (0, 1, 2, …)`;
  if (turn > completedTurns)
    return `--turn ${turn} is past ${names.original}'s completed ${names.turns} (${completedTurns})`;
  return undefined;
}
