/**
 * `subagents resume <run-id> [--message TEXT] [--workspace DIR] [--json]`: a run that failed or timed out (a
 * provider outage that outlasted its retries, a bad deploy) goes on as a fork at its last completed lead turn;
 * the original keeps its outcome (docs/fork.md).
 */
import { executeFork, forkedRunId, FORK_FLAGS } from './fork-command';
import { parseFlags } from './flags';

export async function resumeCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(args, FORK_FLAGS, 'resume');
  const fromRunId = forkedRunId('resume', positionals);
  return executeFork(values, { fromRunId });
}
