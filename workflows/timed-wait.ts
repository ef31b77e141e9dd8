/**
 * A wait with a deadline whose timer is never cancelled. `condition(predicate, timeout)` cancels its timer when
 * the predicate comes true first; when the timer fired in the same workflow task as the signal that made it
 * true, and that task was lost to a killed worker and retried, the replay met a fired timer it had cancelled and
 * stopped in a non-determinism error ("Timer fired event did not have expected timer id") — the workflow wedged.
 * Here the timer is left to fire (a timer that fires after the wait ended does nothing), so no task ever holds
 * both. The caller says whether to (from the run's input, `uncancelled_timers`, set by every starter; not a
 * patch, which would cost a marker in every run): histories recorded before wait with the old `condition`.
 */
import { condition, sleep } from '@temporalio/workflow';

/**
 * Resolves true when `predicate` holds, false once `ms` have passed first. `uncancelled`: the run's input asks
 * for the timer left to fire. `summary` shows on the timer in the Web UI.
 */
export async function timedWait(
  predicate: () => boolean,
  ms: number,
  uncancelled: boolean,
  summary?: string,
): Promise<boolean> {
  const options = summary === undefined ? undefined : { summary };
  if (!uncancelled) {
    return options === undefined ? condition(predicate, ms) : condition(predicate, ms, options);
  }
  if (predicate()) return true;
  let fired = false;
  // A cancelled scope cancels the timer with everything else, and the wait below throws for it.
  void sleep(Math.max(1, ms), options).then(
    () => void (fired = true),
    () => undefined,
  );
  await condition(() => fired || predicate());
  return predicate();
}
