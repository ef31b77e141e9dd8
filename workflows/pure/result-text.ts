import type { SubagentStopReason } from '../../contracts/status';
import type { SubagentResult } from '../../contracts/subagent';

/** How a cap reads in the text handed to the lead: `Task Succeeded (capped: token budget). …`. */
export const STOP_REASON_LABELS: Record<SubagentStopReason, string> = {
  token_capped: 'token budget',
  turn_capped: 'turn budget',
  loop_capped: 'repeated tool-call loop',
};

/** A run that did not complete hands back what it had, marked so the lead cannot take it for an answer. */
function withPartial(headline: string, result: string | undefined): string {
  if (result === undefined || result.trim() === '') return headline;
  return `${headline}\n\nPartial result (the subagent stopped before finishing; this is incomplete):\n${result}`;
}

function withError(headline: string, error: string): string {
  return error === '' ? `${headline}.` : `${headline}. Error: ${error}`;
}

/**
 * The tool-message text the lead's model reads for one delegation. `timeoutSeconds` is the subagent's
 * wall-clock limit, named in the timed-out text.
 */
export function subagentResultText(result: SubagentResult, timeoutSeconds: number): string {
  const error = result.error?.trim() ?? '';
  const capped =
    result.stop_reason === undefined ? '' : ` (capped: ${STOP_REASON_LABELS[result.stop_reason]})`;
  switch (result.status) {
    case 'completed':
      return `Task Succeeded${capped}. Result: ${result.result ?? ''}`;
    case 'failed':
      return withPartial(withError(`Task failed${capped}`, error), result.result);
    case 'cancelled':
      return withPartial(withError('Task cancelled by user', error), result.result);
    case 'timed_out':
      return withPartial(
        `Task timed out. Error: Execution timed out after ${timeoutSeconds} seconds`,
        result.result,
      );
    case 'polling_timed_out':
      return withPartial(withError('Task polling timed out', error), result.result);
  }
}
