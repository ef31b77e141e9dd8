/**
 * Runs tasks a few at a time and within a budget of bytes: saving or restoring a workspace reads or downloads
 * each file whole (a blob is stored as one byte array), so how much memory it takes is what is in flight.
 */

export interface Bounds {
  /** Tasks at once. */
  tasks: number;
  /** Bytes at once; a task larger than this runs alone. */
  bytes: number;
}

/** Runs `run` for every item, at most `bounds` at once by count and by `weightOf`; rejects with the first failure. */
export async function forEachBounded<T>(
  items: readonly T[],
  bounds: Bounds,
  weightOf: (item: T) => number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let running = 0;
  let inFlight = 0;
  let failure: { error: unknown } | undefined;
  await new Promise<void>((resolve, reject) => {
    const pump = (): void => {
      if (failure !== undefined) {
        if (running === 0) reject(failure.error);
        return;
      }
      if (next === items.length && running === 0) return resolve();
      while (next < items.length && running < bounds.tasks) {
        const weight = weightOf(items[next]);
        if (running > 0 && inFlight + weight > bounds.bytes) break;
        const item = items[next++];
        running++;
        inFlight += weight;
        run(item)
          .catch((error: unknown) => {
            failure ??= { error };
          })
          .finally(() => {
            running--;
            inFlight -= weight;
            pump();
          });
      }
    };
    pump();
  });
}
