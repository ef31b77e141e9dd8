/**
 * `subagents answer <run-id> "<answer>" [--question REF]`: answers a question the run waits on
 * (`ask_clarification`, asked by the lead or one of its subagents) with a Workflow Update, and prints what the
 * run recorded. A refusal is one line: exit code 2 for a mistake in the request (empty answer, unknown
 * question, several waiting and none named), 1 when the run is not waiting or the question is closed.
 */
import { ANSWER_REFUSALS } from '../contracts/clarification';
import { AnswerRefusedError } from '../client/api';
import { cliApprover } from './approval-commands';
import { stringFlag } from './flags';
import { withRun } from './inspect-commands';

export function answerCommand(args: string[]): Promise<number> {
  return withRun(
    'answer',
    args,
    { question: { type: 'string' } },
    async ({ run, values, rest, query }) => {
      const [answer] = rest;
      const question = stringFlag(values, 'question');
      try {
        const inspected = await run.inspect();
        if (!inspected.open) {
          throw new AnswerRefusedError(
            `run ${run.runId} has ended (${inspected.status}): it is not waiting for an answer`,
            ANSWER_REFUSALS.notWaiting,
          );
        }
        const recorded = await query(inspected.task_queue, (r) =>
          r.answer(answer, { ...(question !== undefined && { question }), by: cliApprover() }),
        );
        if (values.json) process.stdout.write(`${JSON.stringify(recorded, null, 2)}\n`);
        else
          process.stdout.write(
            `${run.runId}: answer to ${recorded.ref} (${recorded.asked_by}) recorded at ${recorded.answered_at}` +
              `${recorded.by !== undefined ? ` by ${recorded.by}` : ''}; ` +
              'the run goes on\n',
          );
        return 0;
      } catch (err) {
        if (!(err instanceof AnswerRefusedError)) throw err;
        process.stderr.write(`subagents: answer: ${err.message}\n`);
        return err.isUsageMistake ? 2 : 1;
      }
    },
    {
      usage: {
        positionals: 2,
        what: 'a run id and the answer',
        shape: '<run-id> "<answer>" [--question q1]',
      },
    },
  );
}
