import { currentDateContext } from '../../../contracts/date-context';
import { unfinishedAnswer } from '../../../contracts/model';

describe('currentDateContext', () => {
  it("names the UTC day of the run's start and its weekday, inside the tag alone", () => {
    expect(currentDateContext(new Date('2026-12-01T18:00:00Z'))).toBe(
      '<current_date>2026-12-01, Tuesday</current_date>',
    );
    // Just before midnight UTC is still that day, wherever the worker runs.
    expect(currentDateContext(new Date('2027-01-03T23:59:59.999Z'))).toBe(
      '<current_date>2027-01-03, Sunday</current_date>',
    );
  });
});

describe('unfinishedAnswer', () => {
  it('takes an answer cut off at the output limit, or refused, for unfinished, and names the cause', () => {
    expect(unfinishedAnswer('length')).toMatchObject({
      cause: 'cut_off',
      error: expect.stringContaining('length'),
    });
    expect(unfinishedAnswer('max_tokens')?.cause).toBe('cut_off');
    expect(unfinishedAnswer('content_filter')).toMatchObject({
      cause: 'refused',
      error: expect.stringContaining('content_filter'),
    });
    expect(unfinishedAnswer('refusal')?.cause).toBe('refused');
  });

  it('leaves a finished answer alone', () => {
    for (const reason of ['stop', 'tool_calls', 'end_turn', undefined])
      expect(unfinishedAnswer(reason)).toBeUndefined();
  });
});
