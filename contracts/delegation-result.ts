/**
 * What the delegating agent's model is handed for each `task` call, in one place (as DeerFlow keeps its
 * formatter beside the status contract): the text (DESIGN §4's exact strings), the structured fields that
 * travel beside it under the contract's metadata keys, and the refusals that answer a call before any child
 * exists. Plain functions over contract types: the workflows build these messages, clients read them.
 */
import type { TokenUsage, ToolMessage } from './messages';
import { METADATA_KEYS, STOP_REASON_LABELS, type SubagentStatus, type SubagentStopReason } from './status';
import type { SubagentResult } from './subagent';
import { TASK_TOOL_NAME } from './tools';

/** A run that did not complete hands back what it had, marked so the lead cannot take it for an answer. */
function withPartial(headline: string, result: string | undefined): string {
  if (result === undefined || result.trim() === '') return headline;
  return `${headline}\n\nPartial result (the subagent stopped before finishing; this is incomplete):\n${result}`;
}

function withError(headline: string, error: string): string {
  return error === '' ? `${headline}.` : `${headline}. Error: ${error}`;
}

/**
 * The tool-message text the delegating model reads for one delegation. `timeoutSeconds` is the subagent's
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

/**
 * The structured fields that travel beside a delegation's tool message (DeerFlow's additional_kwargs, under
 * its keys). A type alias, not an interface, so it fits `ToolMessage.metadata`'s index signature as is.
 */
export type DelegationMetadata = {
  [METADATA_KEYS.status]: SubagentStatus;
  [METADATA_KEYS.stop_reason]?: SubagentStopReason;
  /** Only when a provider error ended the run: the failure is the provider's, not the subagent's answer. */
  [METADATA_KEYS.error_fallback]?: true;
  [METADATA_KEYS.model_name]?: string;
  /** Absent when the provider reported no usage. */
  [METADATA_KEYS.token_usage]?: TokenUsage;
  [METADATA_KEYS.result_brief]?: string;
  [METADATA_KEYS.result_sha256]?: string;
  [METADATA_KEYS.error]?: string;
  /** Refused at admission before any child started. */
  [METADATA_KEYS.admission_failure]?: true;
};

export function delegationMetadata(result: SubagentResult): DelegationMetadata {
  return {
    [METADATA_KEYS.status]: result.status,
    ...(result.stop_reason !== undefined && { [METADATA_KEYS.stop_reason]: result.stop_reason }),
    ...(result.error_fallback === true && { [METADATA_KEYS.error_fallback]: true as const }),
    ...(result.model_name !== undefined && { [METADATA_KEYS.model_name]: result.model_name }),
    ...(result.token_usage !== undefined && { [METADATA_KEYS.token_usage]: result.token_usage }),
    ...(result.result_brief !== undefined && { [METADATA_KEYS.result_brief]: result.result_brief }),
    ...(result.result_sha256 !== undefined && { [METADATA_KEYS.result_sha256]: result.result_sha256 }),
    ...(result.error !== undefined && { [METADATA_KEYS.error]: result.error }),
    ...(result.admission_failure === true && { [METADATA_KEYS.admission_failure]: true as const }),
  };
}

/**
 * The tool message answering a delegation, its metadata beside it. Anything but `completed` is an error
 * result, so partial output is never taken for success; a capped completion is a (partial) success and says
 * so in its text.
 */
export function delegationToolMessage(
  toolCallId: string,
  result: SubagentResult,
  timeoutSeconds: number,
  toolName: string = TASK_TOOL_NAME,
): ToolMessage {
  return {
    role: 'tool',
    tool_call_id: toolCallId,
    name: toolName,
    content: subagentResultText(result, timeoutSeconds),
    is_error: result.status !== 'completed',
    metadata: { ...delegationMetadata(result) },
  };
}

/** The error result of a delegation call refused before any child started (bad arguments, depth cap). */
export function refusedTaskMessage(
  toolCallId: string,
  text: string,
  toolName: string = TASK_TOOL_NAME,
): ToolMessage {
  return { role: 'tool', tool_call_id: toolCallId, name: toolName, content: text, is_error: true };
}

/** The error result of a `task` call made at the depth cap; the tool stays visible, the call is refused. */
export function depthRefusalText(maxDepth: number): string {
  return `Task refused: the delegation depth limit (max_depth = ${maxDepth}) is reached; do this work directly.`;
}
