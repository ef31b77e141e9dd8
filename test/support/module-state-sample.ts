/** A module with state of each kind and constants that are not state, for module-state.test.ts to read. */
export let memo: Promise<void> | undefined;
export const cache = new Map<string, number>();
export const seen = new WeakMap<object, number>();
export const LOOKUP: ReadonlySet<string> = new Set(['a']);
export const LIMIT = 3;

export function remember(): Map<string, number> {
  // Inside a function: made per call, not module state.
  const local = new Map<string, number>();
  return local;
}
