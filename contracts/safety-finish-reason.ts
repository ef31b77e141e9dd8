/**
 * DeerFlow's `safety_finish_reason` (its issue #3028): a response the provider stopped for safety (OpenAI-compatible
 * `content_filter`, Anthropic's `refusal`, Gemini's `SAFETY` / `BLOCKLIST` …) may still carry tool calls, truncated
 * or unreliable; they must never run. The detectors are DeerFlow's three, by the class names its config's `use:`
 * paths end with; each matches the provider's finish reason (our providers report Anthropic's `stop_reason` there).
 * Pure: the config resolves into a list of reasons, the workflow matches against it.
 */

/** DeerFlow's built-in detectors: the class `use:` names, the config key of their reasons, their defaults. */
export const SAFETY_DETECTORS = {
  OpenAICompatibleContentFilterDetector: {
    name: 'openai_content_filter',
    key: 'finish_reasons',
    defaults: ['content_filter'],
  },
  AnthropicRefusalDetector: { name: 'anthropic_refusal', key: 'stop_reasons', defaults: ['refusal'] },
  GeminiSafetyDetector: {
    name: 'gemini_safety',
    key: 'finish_reasons',
    defaults: [
      'SAFETY',
      'BLOCKLIST',
      'PROHIBITED_CONTENT',
      'SPII',
      'RECITATION',
      'IMAGE_SAFETY',
      'IMAGE_PROHIBITED_CONTENT',
      'IMAGE_RECITATION',
    ],
  },
} as const;

export type SafetyDetectorClass = keyof typeof SAFETY_DETECTORS;
export const SAFETY_DETECTOR_CLASSES = Object.keys(SAFETY_DETECTORS) as SafetyDetectorClass[];

/** The reasons of the built-in set (the section left out, or `detectors` unset). */
export const DEFAULT_SAFETY_FINISH_REASONS: readonly string[] = SAFETY_DETECTOR_CLASSES.flatMap((cls) => [
  ...SAFETY_DETECTORS[cls].defaults,
]);

/**
 * The class a `use:` path names: `deerflow.agents.middlewares.safety_termination_detectors:GeminiSafetyDetector`
 * as DeerFlow's users write it, or the class name alone; undefined for any other (a custom Python class).
 */
export function safetyDetectorClass(use: string): SafetyDetectorClass | undefined {
  const name = use.slice(Math.max(use.lastIndexOf(':'), use.lastIndexOf('.')) + 1);
  return (SAFETY_DETECTOR_CLASSES as readonly string[]).includes(name)
    ? (name as SafetyDetectorClass)
    : undefined;
}

/** Whether `finishReason` is a safety stop by `reasons` (absent: the built-in set); case does not matter. */
export function isSafetyStop(
  finishReason: string | undefined,
  reasons: readonly string[] = DEFAULT_SAFETY_FINISH_REASONS,
): boolean {
  if (finishReason === undefined) return false;
  const reason = finishReason.toLowerCase();
  return reasons.some((candidate) => candidate.toLowerCase() === reason);
}

/** The result's error of an agent whose response was stopped for safety: the reason, and the calls not run. */
export function safetyStopText(finishReason: string, droppedTools: readonly string[]): string {
  const calls =
    droppedTools.length === 0
      ? ''
      : `; its ${droppedTools.length === 1 ? 'tool call' : `${droppedTools.length} tool calls`} ` +
        `(${droppedTools.join(', ')}) did not run`;
  return `The model provider stopped the answer for safety (finish_reason: ${finishReason})${calls}.`;
}
