import {
  formatEvery,
  minimumIntervalSeconds,
  parseEvery,
  scheduleTiming,
} from '../../../cli/schedule-command';
import { UsageError } from '../../../cli/flags';
import { scheduleNameProblem } from '../../../client/schedules';

describe('--every', () => {
  it.each([
    ['90s', 90],
    ['30m', 1800],
    ['6h', 21_600],
    ['1d', 86_400],
    ['1h30m', 5400],
  ])('%s is %i seconds, written back the same way', (text, seconds) => {
    expect(parseEvery(text)).toBe(seconds);
    expect(parseEvery(formatEvery(seconds))).toBe(seconds);
  });

  it.each(['60', '6 h', '1.5h', 'h', '', '0s', 'every 6h'])('refuses %j', (text) => {
    expect(() => parseEvery(text)).toThrow(UsageError);
  });

  it('is at least 60 s unless SUBAGENTS_SCHEDULE_MIN_SECONDS sets another minimum', () => {
    expect(minimumIntervalSeconds({})).toBe(60);
    expect(minimumIntervalSeconds({ SUBAGENTS_SCHEDULE_MIN_SECONDS: '1' })).toBe(1);
    expect(() => minimumIntervalSeconds({ SUBAGENTS_SCHEDULE_MIN_SECONDS: 'soon' })).toThrow(
      'SUBAGENTS_SCHEDULE_MIN_SECONDS: "soon" is not a whole number of seconds ≥ 1',
    );
    expect(() => scheduleTiming({ every: '59s' }, {})).toThrow(
      /^--every: 59s is under the minimum interval of 1m /,
    );
    expect(scheduleTiming({ every: '1m' }, {})).toEqual({ kind: 'every', seconds: 60 });
    expect(scheduleTiming({ every: '2s' }, { SUBAGENTS_SCHEDULE_MIN_SECONDS: '2' })).toEqual({
      kind: 'every',
      seconds: 2,
    });
  });

  it('takes --every or --cron, exactly one', () => {
    expect(scheduleTiming({ cron: '0 2 * * *' }, {})).toEqual({ kind: 'cron', expression: '0 2 * * *' });
    expect(() => scheduleTiming({}, {})).toThrow(/give one of --every/);
    expect(() => scheduleTiming({ every: '1h', cron: '0 2 * * *' }, {})).toThrow(/give one of --every/);
  });
});

describe('schedule names', () => {
  it.each(['nightly', 'team-a.report_2', 'A1'])('takes %j', (name) => {
    expect(scheduleNameProblem(name)).toBeUndefined();
  });
  it.each(['', '.hidden', '..', 'a/b', 'with space', 'ünïcode', 'x'.repeat(65)])('refuses %j', (name) => {
    expect(scheduleNameProblem(name)).toBeDefined();
  });
});
