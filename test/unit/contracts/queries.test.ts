import { recordsAfter } from '../../../contracts/queries';
import { buildStep } from '../../../contracts/steps';

describe('recordsAfter (the after_seq cursor of the steps and events queries)', () => {
  const steps = [1, 2, 3, 4, 5].map((seq) => buildStep(seq, { role: 'assistant', content: `step ${seq}` }));

  it('returns the records after the cursor, oldest first', () => {
    expect(recordsAfter(steps, 0).map((step) => step.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(recordsAfter(steps, 3).map((step) => step.seq)).toEqual([4, 5]);
    expect(recordsAfter(steps, 5)).toEqual([]);
  });

  it('keeps numbering gaps as they are (a continued run numbers on)', () => {
    const continued = steps.slice(3);
    expect(recordsAfter(continued, 0).map((step) => step.seq)).toEqual([4, 5]);
    expect(recordsAfter(continued, 4).map((step) => step.seq)).toEqual([5]);
  });
});
