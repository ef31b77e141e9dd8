import type { TokenUsage, ToolCall } from '../../contracts/messages';
import { ownEntry } from '../../contracts/records';
import type { SubagentStopReason } from '../../contracts/status';

/** Plain JSON: guard state is carried across continue-as-new, so no Set, Map, Date or class instances. */
export type { JsonValue } from '../../contracts/loop-carry';
import type { JsonValue } from '../../contracts/loop-carry';

/** What every guard is shown after each model response (a guard's settings are its own, given when it is built). */
export interface GuardInput {
  /** Model calls so far, this one included (the first response is turn 1). */
  turn: number;
  /** Cumulative usage of the run, this response included. */
  usage: TokenUsage;
  response: { content: string; tool_calls: ToolCall[] };
}

export interface GuardVerdict {
  /** End the run: the loop strips this response's tool calls and finishes with the text so far. */
  stop?: SubagentStopReason;
  /** A one-time warning the loop adds to the next model call. */
  note?: string;
}

/**
 * One runaway check, built with its own settings (`turnGuard(maxTurns)`, …). `check` is pure: it gets its
 * own previous state and returns the next one, so the loop needs no change when a guard is added. `name` keys
 * the state (carried across continue-as-new) and must be unique.
 */
export interface Guard<S extends JsonValue = JsonValue> {
  name: string;
  initial(): S;
  // Method syntax on purpose: it lets a Guard<SpecificState> sit in a Guard[] list (method parameters are
  // bivariant), while runGuards only ever hands a guard the state that guard produced.
  check(state: S, input: GuardInput): { state: S; verdict: GuardVerdict };
}

/** Each guard's state under its name: part of the workflow's carried state. */
export type GuardStates = Record<string, JsonValue>;

export interface GuardsOutcome {
  states: GuardStates;
  /** The stop of the first guard in list order that stopped. */
  stop?: SubagentStopReason;
  /** Warnings for the next model call, in guard order (moot when `stop` is set: there is no next call). */
  notes: string[];
  /** The guards that gave them, in the same order (the worker logs each warning with its guard). */
  warnedBy: string[];
}

/** The starting state of every guard in the list. */
export function initialGuardStates(guards: readonly Guard[]): GuardStates {
  const states: GuardStates = {};
  for (const guard of guards) states[guard.name] = guard.initial();
  return states;
}

/**
 * Asks every guard about one response. Every guard sees it and updates its state, even after an earlier
 * one stopped, so counts stay true. A guard with no state yet (one added since the run started, carried
 * over continue-as-new) starts from `initial()`.
 */
export function runGuards(guards: readonly Guard[], states: GuardStates, input: GuardInput): GuardsOutcome {
  const next: GuardStates = {};
  const notes: string[] = [];
  const warnedBy: string[] = [];
  const seen: string[] = [];
  let stop: SubagentStopReason | undefined;
  for (const guard of guards) {
    if (seen.includes(guard.name)) {
      throw new Error(
        `guard name "${guard.name}" is used twice: each guard needs its own name to keep its state`,
      );
    }
    seen.push(guard.name);
    const previous = ownEntry(states, guard.name) ?? guard.initial();
    const { state, verdict } = guard.check(previous, input);
    next[guard.name] = state;
    if (verdict.note !== undefined) {
      notes.push(verdict.note);
      warnedBy.push(guard.name);
    }
    if (stop === undefined && verdict.stop !== undefined) stop = verdict.stop;
  }
  return { states: next, ...(stop !== undefined && { stop }), notes, warnedBy };
}
