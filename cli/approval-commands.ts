/**
 * `subagents approve <run-id> [--call REF] [--note …]` and `subagents deny <run-id> [--call REF] --reason …`:
 * decide a tool call the run holds for approval (a guardrail's `ask`, by the lead or one of its subagents)
 * with a Workflow Update, and print what the run recorded. Exit codes as `answer`'s: 2 for a mistake in the
 * request (empty reason, unknown call, several waiting and none named: they are listed), 1 when the run is not
 * waiting or the call is already decided or timed out.
 */
import { hostname, userInfo } from 'node:os';
import { APPROVAL_REFUSALS, type RecordedDecision } from '../contracts/approvals';
import { ApprovalRefusedError } from '../client/approvals';
import type { RunHandle } from '../client/api';
import { stringFlag } from './flags';
import { withRun } from './inspect-commands';
import { oneLine } from './questions';

/** Who decides from this command line: `$USER@host` (the login name when USER is unset). */
export function cliApprover(env: NodeJS.ProcessEnv = process.env, host = hostname()): string {
  let user = env.USER ?? env.LOGNAME;
  if (user === undefined || user === '') {
    try {
      user = userInfo().username;
    } catch {
      user = 'unknown';
    }
  }
  return `${user}@${host}`;
}

/** The line that says what the run recorded. */
export function decisionLine(runId: string, recorded: RecordedDecision): string {
  const note = recorded.note !== undefined ? ` (${oneLine(recorded.note)})` : '';
  const next = recorded.decision === 'approved' ? 'the call runs' : 'the agent is told why and goes on';
  return (
    `${runId}: ${recorded.ref} (${oneLine(recorded.asked_by)}: ${oneLine(recorded.tool)} ${oneLine(recorded.args)}) ` +
    `${recorded.decision} by ${oneLine(recorded.by)} at ${recorded.at}${note}; ${next}`
  );
}

function decisionCommand(
  command: 'approve' | 'deny',
  args: string[],
  send: (
    run: RunHandle,
    ref: string | undefined,
    text: string | undefined,
    by: string,
  ) => Promise<RecordedDecision>,
): Promise<number> {
  const textFlag = command === 'approve' ? 'note' : 'reason';
  return withRun(
    command,
    args,
    { call: { type: 'string' }, [textFlag]: { type: 'string' } },
    async ({ run, values, query }) => {
      const ref = stringFlag(values, 'call');
      const text = stringFlag(values, textFlag);
      try {
        const inspected = await run.inspect();
        if (!inspected.open) {
          throw new ApprovalRefusedError(
            `run ${run.runId} has ended (${inspected.status}): it is not waiting for a decision`,
            APPROVAL_REFUSALS.notWaiting,
          );
        }
        const recorded = await query(inspected.task_queue, (r) => send(r, ref, text, cliApprover()));
        if (values.json) process.stdout.write(`${JSON.stringify(recorded, null, 2)}\n`);
        else process.stdout.write(`${decisionLine(run.runId, recorded)}\n`);
        return 0;
      } catch (err) {
        if (!(err instanceof ApprovalRefusedError)) throw err;
        process.stderr.write(`subagents: ${command}: ${err.message}\n`);
        return err.isUsageMistake ? 2 : 1;
      }
    },
    {
      usage: {
        positionals: 1,
        what: 'one run id',
        shape:
          command === 'approve' ? '<run-id> [--call a1] [--note TEXT]' : '<run-id> [--call a1] --reason TEXT',
      },
    },
  );
}

export function approveCommand(args: string[]): Promise<number> {
  return decisionCommand('approve', args, (run, ref, note, by) => run.approve(ref, note, { by }));
}

export function denyCommand(args: string[]): Promise<number> {
  // A missing reason is refused by the run's own words (exit 2), as an empty one is.
  return decisionCommand('deny', args, (run, ref, reason, by) => run.deny(ref, reason ?? '', { by }));
}
