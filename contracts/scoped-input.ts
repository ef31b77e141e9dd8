/**
 * Inputs recorded before the run scope (contracts/run-scope.ts) carried the run's settings at their top level,
 * and the lead its fairness key in `limits`: `scopedInput` reads them into `scope`. A leaf module: the input
 * schemas (contracts/input-schemas.ts) convert with it before they check. Pure: no Node APIs.
 */

/**
 * The settings an input from before the scope carried at its top level. Fixed: a setting added to the scope
 * later was never on the top level, so it needs no line here.
 */
export const TOP_LEVEL_SCOPE_KEYS = [
  'user_id',
  'secrets',
  'skills',
  'guardrails',
  'workspace',
  'workspace_placement',
  'workspace_key',
  'sandbox',
  'loop_detection',
  'summarization',
  'clarification',
  'fairness_key',
] as const;

export type TopLevelScopeKey = (typeof TOP_LEVEL_SCOPE_KEYS)[number];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * An input with its run's settings in `scope`: as it came when it has one, else read from its top level (an
 * input recorded before the scope). Anything else (not a mapping, `{prompt}` alone) comes back as it is, for
 * its check to name.
 */
export function scopedInput(input: unknown): unknown {
  if (!isRecord(input)) return input;
  const { limits } = input;
  // A lead run's fairness key was one of its limits.
  const limitsKey = isRecord(limits) && 'fairness_key' in limits;
  if (!limitsKey && ('scope' in input || !('workspace' in input))) return input;
  const rest: Record<string, unknown> = {};
  const scope: Record<string, unknown> = isRecord(input.scope) ? { ...input.scope } : {};
  for (const [key, value] of Object.entries(input)) {
    if ('scope' in input || !(TOP_LEVEL_SCOPE_KEYS as readonly string[]).includes(key)) rest[key] = value;
    else if (value !== undefined) scope[key] = value;
  }
  if (limitsKey) {
    const { fairness_key: fairnessKey, ...others } = limits;
    if (fairnessKey !== undefined && scope.fairness_key === undefined) scope.fairness_key = fairnessKey;
    rest.limits = others;
  }
  return { ...rest, scope };
}
