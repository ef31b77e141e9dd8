/**
 * `subagents fork <run-id> --turn N [--message TEXT] [--workspace DIR] [--json]`: a new run that keeps the lead
 * run's first N lead turns (their model answers, tool results and delegation results, read from its history,
 * not asked again) and goes on live from turn N + 1; printed as `run` prints a run. Given a subagent's workflow
 * id, the same for that one delegation, as a subagent run of its own (docs/fork.md).
 */
import { resolve } from 'node:path';
import { loadCommandConfig } from './command-setup';
import { integerFlag, parseFlags, stringFlag, UsageError, type FlagValues } from './flags';
import { executeRun, type RunFork } from './run-command';

/** The flags `fork` and `resume` share: a message before the first live turn, the folder to run on. */
export const FORK_FLAGS = {
  message: { type: 'string' },
  workspace: { type: 'string' },
  embedded: { type: 'boolean' },
} as const;

/** The run id, the only positional both commands take. */
export function forkedRunId(command: string, positionals: string[]): string {
  const [runId, extra] = positionals;
  if (runId === undefined)
    throw new UsageError(
      command === 'fork'
        ? 'fork: give the run id or a subagent id (subagents fork <run-id|subagent-id> --turn N)'
        : `${command}: give the run id (subagents ${command} <run-id>)`,
    );
  if (extra !== undefined) throw new UsageError(`${command}: unexpected argument ${JSON.stringify(extra)}`);
  return runId;
}

/** The message and the folder, as a fork asks for them. */
export function forkFlags(values: FlagValues): Pick<RunFork, 'message' | 'workspace'> {
  const message = stringFlag(values, 'message');
  const workspace = stringFlag(values, 'workspace');
  if (message !== undefined && message.trim() === '') throw new UsageError('--message: "" is empty');
  if (workspace !== undefined && workspace.trim() === '')
    throw new UsageError('--workspace: "" is empty (give a folder, e.g. --workspace ./work)');
  return {
    ...(message !== undefined && { message }),
    ...(workspace !== undefined && { workspace: resolve(workspace) }),
  };
}

/** Runs the fork as `run` runs a run: on the server's workers, its header, live tree and `--json` alike. */
export function executeFork(values: FlagValues, fork: Pick<RunFork, 'fromRunId' | 'turn'>): Promise<number> {
  return executeRun({
    prompt: '',
    config: loadCommandConfig(values),
    values,
    useServerWorkers: true,
    fork: { ...fork, ...forkFlags(values) },
  });
}

export async function forkCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, { ...FORK_FLAGS, turn: { type: 'string' } }, 'fork');
  const fromRunId = forkedRunId('fork', positionals);
  const turn = integerFlag(values, 'turn', 0, Number.MAX_SAFE_INTEGER);
  if (turn === undefined)
    throw new UsageError(
      "fork: give --turn N, the turns to keep (a run's lead turns or a subagent's turns; 0: rerun all)",
    );
  return executeFork(values, { fromRunId, turn });
}
