/** A subagent's structured result, from how its run ended and what its transcript holds: pure functions. */
import type { ChatMessage, TokenUsage } from '../contracts/messages';
import type { ModelErrorFallback } from '../contracts/model';
import type { SubagentStopReason } from '../contracts/status';
import { RESULT_BRIEF_MAX_CHARS, type SubagentResult } from '../contracts/subagent';
import { truncateHeadTail } from '../contracts/text';
import { sha256Hex } from './digest';

/** The answer of a run that completed with no text at all (DeerFlow's "No response generated" sentinel). */
export const NO_RESPONSE_TEXT = 'No response generated.';

const CAPPED_WITHOUT_TEXT: Record<SubagentStopReason, string> = {
  token_capped: 'The subagent used up its token budget before producing any text.',
  turn_capped: 'The subagent used up its turn budget before producing any text.',
  loop_capped: 'The subagent was stopped for repeating the same tool calls before producing any text.',
  cost_capped: 'The subagent used up its cost budget before producing any text.',
};

export interface FinishSubagentInput {
  /** How the loop ended: the model answered or a guard stopped it (`completed`), an error, a cancel, the clock. */
  status: 'completed' | 'failed' | 'cancelled' | 'timed_out';
  stopReason?: SubagentStopReason;
  /** The subagent's own last non-empty answer (not one of the lead's turns a fork started from). */
  finalText: string | undefined;
  /** A provider error that retrying cannot fix: the run is `failed` whatever `status` says. */
  errorFallback?: ModelErrorFallback;
  /** Why a `failed` or `cancelled` run ended. */
  error?: string;
  timeoutSeconds: number;
  modelName?: string;
  tokenUsage?: TokenUsage;
  /** USD of its priced calls; absent when none was priced. */
  costUsd?: number;
  turns: number;
}

/** The last assistant text that says anything, from the final turn or an earlier one. */
export function lastAssistantText(transcript: readonly ChatMessage[]): string | undefined {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript[i];
    if (message.role === 'assistant' && message.content.trim() !== '') return message.content;
  }
  return undefined;
}

function outcomeOf(
  input: FinishSubagentInput,
  text: string | undefined,
): Pick<SubagentResult, 'status' | 'error'> {
  if (input.errorFallback) return { status: 'failed', error: input.errorFallback.message };
  switch (input.status) {
    case 'completed':
      // A capped run with usable text is a (partial) success; with none it failed, and says which cap.
      if (input.stopReason !== undefined && text === undefined) {
        return { status: 'failed', error: CAPPED_WITHOUT_TEXT[input.stopReason] };
      }
      return { status: 'completed' };
    case 'timed_out':
      return { status: 'timed_out', error: `Execution timed out after ${input.timeoutSeconds} seconds` };
    case 'failed':
    case 'cancelled':
      return { status: input.status, error: input.error };
  }
}

/** The structured result of a subagent run, from how its loop ended and what its transcript holds. */
export function finishSubagent(input: FinishSubagentInput): SubagentResult {
  const text = input.finalText;
  const { status, error } = outcomeOf(input, text);
  const result = status === 'completed' ? (text ?? NO_RESPONSE_TEXT) : text;
  return {
    status,
    ...(input.stopReason !== undefined && { stop_reason: input.stopReason }),
    ...(result !== undefined && {
      result,
      result_brief: truncateHeadTail(result, RESULT_BRIEF_MAX_CHARS),
      result_sha256: sha256Hex(result),
    }),
    ...(error !== undefined && { error }),
    ...(input.modelName !== undefined && { model_name: input.modelName }),
    ...(input.tokenUsage !== undefined && { token_usage: input.tokenUsage }),
    ...(input.costUsd !== undefined && { cost_usd: input.costUsd }),
    turns: input.turns,
    ...(input.errorFallback !== undefined && { error_fallback: true }),
  };
}
