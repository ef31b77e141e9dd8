/**
 * A batch item's acceptance criteria, checked by the item's own subagent workflow: an answer that fails them
 * fails the attempt itself (Temporal status Failed, `SubagentStatus` `failed`, the criteria named in its error),
 * not only the batch's record of it.
 */
import { isCancellation, proxyActivities } from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/common';
import type { AcceptanceActivities } from '../activities/acceptance';
import type { AgentRunEnd } from './agent-run';
import { runOutcome } from './run-lifecycle';
import type { WorkspaceRoute } from './workspace-route';

// Where the workspace is (workflows/workspace-route.ts): the route adds its queue and retries to these.
const ACCEPTANCE_OPTIONS: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
};
const { checkAcceptance } = proxyActivities<AcceptanceActivities>(ACCEPTANCE_OPTIONS);

/** The words a failed check starts with (the batch's results and `batch status` show them). */
export const CRITERIA_NOT_MET = 'acceptance criteria not met: ';

/** The loop's end when the answer failed its criteria (or their check could not run). */
export interface AcceptanceFailed {
  kind: 'acceptance_failed';
  error: string;
}

/** Undefined when `answer` meets every criterion; else why not. Cancellation goes through. */
export async function checkItemAcceptance(
  criteria: string[],
  answer: string,
  route: WorkspaceRoute,
): Promise<AcceptanceFailed | undefined> {
  try {
    // By an activity, even for the answer-only forms: a user's regex must not run in the workflow; file
    // criteria where the run's workspace lives.
    const verdict = await route.run(
      (place) =>
        checkAcceptance.executeWithOptions({ ...ACCEPTANCE_OPTIONS, ...place.home }, [
          {
            criteria,
            answer,
            workspace: route.workspace,
            placement: place.placement,
          },
        ]),
      true,
    );
    if (verdict.passed) return undefined;
    const failed = verdict.checks.filter((check) => !check.passed).map((check) => check.criterion);
    return { kind: 'acceptance_failed', error: `${CRITERIA_NOT_MET}${failed.join('; ')}` };
  } catch (err) {
    if (isCancellation(err)) throw err;
    const message = err instanceof Error ? err.message : String(err);
    return { kind: 'acceptance_failed', error: `acceptance check failed: ${message}` };
  }
}

/**
 * How the run ends once its criteria are checked: an end that would complete it is checked (the answer and the
 * workspace as they are now), any other end stands. No criteria: `end` as it is, no activity.
 */
export async function withAcceptance(
  end: AgentRunEnd,
  criteria: string[] | undefined,
  answer: string | undefined,
  route: WorkspaceRoute,
): Promise<AgentRunEnd> {
  if (!criteria?.length || end.kind === 'continue_as_new') return end;
  if (runOutcome(end, '').status !== 'completed') return end;
  return (await checkItemAcceptance(criteria, answer ?? '', route)) ?? end;
}
