import type { ToolCall } from '../../contracts/messages';
import { ownEntry } from '../../contracts/records';
import type { LoopDetectionSettings } from '../../contracts/subagent';
import { sha256Hex } from '../digest';
import type { Guard, GuardVerdict, JsonValue } from './guard';

type LoopGuardState = {
  /** Digests of the tool-call sets of the last window_size turns that called tools, oldest first. */
  window: string[];
  /** Tool-call sets already warned about: each is warned about once a run. */
  warned_signatures: string[];
  /** Calls per tool name over the whole run. */
  tool_counts: Record<string, number>;
  warned_tools: string[];
};

/** JSON text with object keys sorted at every depth, so key order and spacing make no difference. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
}

function canonicalArgs(args: string): string {
  try {
    return canonicalJson(JSON.parse(args) as JsonValue);
  } catch {
    // Not JSON: the raw text is the identity. It cannot collide with a canonical form, which is valid JSON.
    return args;
  }
}

/**
 * The identity of one turn's tool calls as a set (a multiset: order does not count, repeats do):
 * the sorted (name, canonical args) pairs, digested so the window stays small whatever the arguments.
 */
export function toolCallSetSignature(calls: readonly ToolCall[]): string {
  const pairs = calls.map((call) => JSON.stringify([call.name, canonicalArgs(call.args)])).sort();
  return sha256Hex(JSON.stringify(pairs));
}

function toolLimits(settings: LoopDetectionSettings, tool: string): { warn: number; hard: number } {
  const override = ownEntry(settings.tool_freq_overrides, tool);
  if (override) return { warn: override.warn, hard: override.hard_limit };
  return { warn: settings.tool_freq_warn, hard: settings.tool_freq_hard_limit };
}

function times(count: number): string {
  return count === 1 ? '1 time' : `${count} times`;
}

function repeatNote(count: number, windowTurns: number, hardLimit: number): string {
  return (
    `[LOOP WARNING] You have made this same set of tool calls ${times(count)} in your last ` +
    `${windowTurns} tool-using turns. Repeating it will not give a different result: change your approach, ` +
    `or stop calling tools and give your final answer with what you have. ` +
    `At ${hardLimit} repeats the run is stopped.`
  );
}

function frequencyNote(tool: string, count: number, hardLimit: number): string {
  return (
    `[LOOP WARNING] You have called the tool "${tool}" ${times(count)} in this run. Call it again only when ` +
    `the answer needs it; once you have enough, give your final answer. At ${hardLimit} calls the run is stopped.`
  );
}

/**
 * The loop axis: (a) the same tool-call set repeated within the last window_size tool-using turns,
 * (b) one tool name called too often over the run, whatever the arguments. Either warns once
 * (per set, per tool) and then stops the run (`loop_capped`). Turns without tool calls are not counted.
 */
export function loopGuard(settings: LoopDetectionSettings): Guard<LoopGuardState> {
  return {
    name: 'loop_detection',
    initial: () => ({ window: [], warned_signatures: [], tool_counts: {}, warned_tools: [] }),
    check(state, input) {
      const calls = input.response.tool_calls;
      if (!settings.enabled || calls.length === 0) return { state, verdict: {} };

      const signature = toolCallSetSignature(calls);
      const grown = [...state.window, signature];
      const window = grown.slice(Math.max(0, grown.length - settings.window_size));
      const repeats = window.filter((entry) => entry === signature).length;

      let stop = repeats >= settings.hard_limit;
      const notes: string[] = [];
      const warnedSignatures = [...state.warned_signatures];
      if (!stop && repeats >= settings.warn_threshold && !warnedSignatures.includes(signature)) {
        warnedSignatures.push(signature);
        notes.push(repeatNote(repeats, window.length, settings.hard_limit));
      }

      let toolCounts = state.tool_counts;
      const warnedTools = [...state.warned_tools];
      // Each name once, in the order the model first used it, so notes read in call order.
      for (const tool of calls
        .map((call) => call.name)
        .filter((name, i, names) => names.indexOf(name) === i)) {
        const count = (ownEntry(toolCounts, tool) ?? 0) + calls.filter((call) => call.name === tool).length;
        // A computed key defines an own property even for "__proto__", and survives a JSON round trip.
        toolCounts = { ...toolCounts, [tool]: count };
        const limits = toolLimits(settings, tool);
        if (count >= limits.hard) {
          stop = true;
        } else if (count >= limits.warn && !warnedTools.includes(tool)) {
          warnedTools.push(tool);
          notes.push(frequencyNote(tool, count, limits.hard));
        }
      }

      const next: LoopGuardState = {
        window,
        warned_signatures: warnedSignatures,
        tool_counts: toolCounts,
        warned_tools: warnedTools,
      };
      const verdict: GuardVerdict = stop
        ? { stop: 'loop_capped' }
        : notes.length > 0
          ? { note: notes.join('\n\n') }
          : {};
      return { state: next, verdict };
    },
  };
}
