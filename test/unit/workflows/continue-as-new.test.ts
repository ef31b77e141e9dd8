import {
  historyWantsContinueAsNew,
  HISTORY_BYTES_CEILING,
  HISTORY_EVENTS_CEILING,
} from '../../../workflows/continue-as-new';

describe('historyWantsContinueAsNew', () => {
  const quiet = { continueAsNewSuggested: false, historySize: 1000, historyLength: 10 };
  it('follows the server, and our own ceilings below its limits', () => {
    expect(historyWantsContinueAsNew(quiet)).toBe(false);
    expect(historyWantsContinueAsNew({ ...quiet, continueAsNewSuggested: true })).toBe(true);
    expect(historyWantsContinueAsNew({ ...quiet, historySize: HISTORY_BYTES_CEILING })).toBe(true);
    expect(historyWantsContinueAsNew({ ...quiet, historyLength: HISTORY_EVENTS_CEILING })).toBe(true);
  });
});
