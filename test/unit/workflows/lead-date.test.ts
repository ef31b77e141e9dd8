import { movedDate } from '../../../workflows/lead-date';
import { currentDateContext } from '../../../contracts/date-context';

describe("the lead's date past midnight", () => {
  const started = currentDateContext(new Date('2026-12-07T23:59:00Z'));

  it('stays the same day until midnight UTC', () => {
    expect(movedDate(started, new Date('2026-12-07T23:59:59.999Z'))).toBeUndefined();
  });

  it('is the new day after it', () => {
    expect(movedDate(started, new Date('2026-12-08T00:00:01Z'))).toBe(
      '<current_date>2026-12-08, Tuesday</current_date>',
    );
  });

  it('says nothing for an agent that has no date yet', () => {
    expect(movedDate(undefined, new Date())).toBeUndefined();
  });
});
