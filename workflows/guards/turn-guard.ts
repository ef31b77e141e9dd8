import type { Guard } from './guard';

/**
 * The turn axis (`max_turns`): the max_turns-th model call is the last. If that response still asks for
 * tools, the run stops there (`turn_capped`); a response without tool calls ends the run normally anyway.
 */
export function turnGuard(maxTurns: number): Guard<null> {
  return {
    name: 'turns',
    initial: () => null,
    check(state, input) {
      const outOfTurns = input.turn >= maxTurns && input.response.tool_calls.length > 0;
      return { state, verdict: outOfTurns ? { stop: 'turn_capped' } : {} };
    },
  };
}
