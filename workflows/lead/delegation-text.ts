/**
 * What the lead's model is handed for each `task` call: the tool message (its text is DESIGN §4's, from
 * `subagentResultText`), the structured fields that travel beside it under DeerFlow's metadata keys, and the
 * refusals that answer a call before any child exists.
 */
import type { TokenUsage, ToolMessage } from '../../contracts/messages';
import { METADATA_KEYS, type SubagentStatus, type SubagentStopReason } from '../../contracts/status';
import type { SubagentResult } from '../../contracts/subagent';
import { TASK_TOOL_NAME } from '../../contracts/tools';
import { subagentResultText } from '../pure/result-text';

/**
 * The tool message answering a delegation. Anything but `completed` is an error result, so partial output is
 * never taken for success; a capped completion is a (partial) success and says so in its text.
 */
export function delegationToolMessage(
  toolCallId: string,
  result: SubagentResult,
  timeoutSeconds: number,
): ToolMessage {
  return {
    role: 'tool',
    tool_call_id: toolCallId,
    name: TASK_TOOL_NAME,
    content: subagentResultText(result, timeoutSeconds),
    is_error: result.status !== 'completed',
  };
}

/** The error result of a `task` call refused before any child started (bad arguments, depth cap). */
export function refusedTaskMessage(toolCallId: string, text: string): ToolMessage {
  return { role: 'tool', tool_call_id: toolCallId, name: TASK_TOOL_NAME, content: text, is_error: true };
}

/**
 * The structured fields that travel beside a delegation's tool message (DeerFlow's additional_kwargs). A type
 * alias, not an interface, so it fits `ToolMessage.metadata`'s index signature as is.
 */
export type DelegationMetadata = {
  [METADATA_KEYS.status]: SubagentStatus;
  [METADATA_KEYS.stop_reason]?: SubagentStopReason;
  /** Only when a provider error ended the run: the failure is the provider's, not the subagent's answer. */
  [METADATA_KEYS.error_fallback]?: true;
  [METADATA_KEYS.model_name]?: string;
  /** Absent when the provider reported no usage. */
  [METADATA_KEYS.token_usage]?: TokenUsage;
  result_sha256?: string;
  result_brief?: string;
};

export function delegationMetadata(result: SubagentResult): DelegationMetadata {
  return {
    [METADATA_KEYS.status]: result.status,
    ...(result.stop_reason !== undefined && { [METADATA_KEYS.stop_reason]: result.stop_reason }),
    ...(result.error_fallback === true && { [METADATA_KEYS.error_fallback]: true as const }),
    ...(result.model_name !== undefined && { [METADATA_KEYS.model_name]: result.model_name }),
    ...(result.token_usage !== undefined && { [METADATA_KEYS.token_usage]: result.token_usage }),
    ...(result.result_sha256 !== undefined && { result_sha256: result.result_sha256 }),
    ...(result.result_brief !== undefined && { result_brief: result.result_brief }),
  };
}

/** The error result of a `task` call made at the depth cap; the tool stays visible, the call is refused. */
export function depthRefusalText(maxDepth: number): string {
  return `Task refused: the delegation depth limit (max_depth = ${maxDepth}) is reached; do this work directly.`;
}
