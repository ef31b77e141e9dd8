import type { TokenUsage, ToolCall } from '../../../../contracts/messages';
import type { LoopDetectionSettings, TokenBudgetSettings } from '../../../../contracts/subagent';
import {
  defaultGuards,
  type Guard,
  type GuardInput,
  type GuardVerdict,
  type JsonValue,
} from '../../../../workflows/guards';

/** The seeds' defaults (DESIGN §4). */
export const TOKEN_BUDGET: TokenBudgetSettings = {
  enabled: true,
  max_tokens: 2_000_000,
  warn_threshold: 0.7,
  hard_threshold: 1.0,
};

export const LOOP_DETECTION: LoopDetectionSettings = {
  enabled: true,
  warn_threshold: 3,
  hard_limit: 5,
  window_size: 20,
  tool_freq_warn: 30,
  tool_freq_hard_limit: 50,
  tool_freq_overrides: {},
};

export function call(name: string, args: string, id = `call_${name}`): ToolCall {
  return { id, name, args };
}

export function usage(totalTokens: number): TokenUsage {
  return { input_tokens: totalTokens, output_tokens: 0, total_tokens: totalTokens };
}

export function guardInput(overrides: {
  turn?: number;
  totalTokens?: number;
  content?: string;
  toolCalls?: ToolCall[];
}): GuardInput {
  return {
    turn: overrides.turn ?? 1,
    usage: usage(overrides.totalTokens ?? 0),
    response: { content: overrides.content ?? '', tool_calls: overrides.toolCalls ?? [] },
  };
}

/** The seeds' default guards, as a loop builds them from its settings. */
export function seedGuards(maxTurns = 150): Guard[] {
  return defaultGuards({ maxTurns, tokenBudget: TOKEN_BUDGET, loopDetection: LOOP_DETECTION });
}

/**
 * Runs one guard over a sequence of inputs, passing its state through a JSON round trip between turns as
 * continue-as-new would, and returns each turn's verdict.
 */
export function drive<S extends JsonValue>(guard: Guard<S>, inputs: GuardInput[]): GuardVerdict[] {
  let state = guard.initial();
  return inputs.map((input) => {
    const checked = guard.check(JSON.parse(JSON.stringify(state)) as S, input);
    state = checked.state;
    return checked.verdict;
  });
}
