/**
 * A response the provider stopped for safety (DeerFlow's `safety_finish_reason`): its tool calls never run, and
 * the agent ends failed with the reason (an error result, as a refused answer ends).
 */
import { patched } from '@temporalio/workflow';
import { unfinishedAnswer, type ModelCallResult, type ModelSettings } from '../contracts/model';
import { isSafetyStop } from '../contracts/safety-finish-reason';

/**
 * Histories recorded before a safety stop dropped its tool calls: they ran them (and a final answer with a
 * reason the refusal list did not know completed). Asked only when a response is such a stop.
 */
const SAFETY_FINISH_REASON_PATCH = 'safety-finish-reason';

export interface SafetyStopped {
  kind: 'safety_stopped';
  finishReason: string;
  droppedTools: string[];
}

/** The loop's end when `response` was stopped for safety by the model's reasons; else undefined. */
export function safetyStop(
  response: ModelCallResult,
  model: Pick<ModelSettings, 'safety_finish_reasons'>,
): SafetyStopped | undefined {
  const finishReason = response.finish_reason;
  if (finishReason === undefined || !isSafetyStop(finishReason, model.safety_finish_reasons))
    return undefined;
  // A final answer the refusal list already knows ends as it always did (its own words, its text as partial).
  if (response.tool_calls.length === 0 && unfinishedAnswer(finishReason)) return undefined;
  if (!patched(SAFETY_FINISH_REASON_PATCH)) return undefined;
  return { kind: 'safety_stopped', finishReason, droppedTools: response.tool_calls.map((call) => call.name) };
}
