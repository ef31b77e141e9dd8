/** When an execution's history is long enough that the run should continue as new: a pure decision. */

/**
 * Our own ceiling on one execution's history, below Temporal's (a 10 MB / 10,240-event warning, then a
 * 50 MB / 51,200-event termination): whatever the server suggests, a run continues as new before it.
 */
export const HISTORY_BYTES_CEILING = 8 * 1024 * 1024;
export const HISTORY_EVENTS_CEILING = 8_000;

export interface HistoryInfo {
  continueAsNewSuggested: boolean;
  historySize: number;
  historyLength: number;
}

export function historyWantsContinueAsNew(info: HistoryInfo): boolean {
  return (
    info.continueAsNewSuggested ||
    info.historySize >= HISTORY_BYTES_CEILING ||
    info.historyLength >= HISTORY_EVENTS_CEILING
  );
}
