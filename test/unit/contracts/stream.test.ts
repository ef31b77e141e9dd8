/** Which lead run and which agent a workflow id's stream events belong to. */
import { delegationPathOf, leadRunIdOf, streamText, STREAM_TEXT_MAX } from '../../../contracts/stream';

describe('a workflow id on the stream', () => {
  it.each([
    ['run-1', 'run-1', ''],
    ['run-1/task/part0', 'run-1', 'part0'],
    ['run-1/task/part0/task/call_7', 'run-1', 'part0/call_7'],
    ['run-1/batch/b1/item/k1/1', 'run-1', 'batch/b1/item/k1/1'],
    ['run-1/batch/b1/item/k1/1/task/c1', 'run-1', 'batch/b1/item/k1/1/task/c1'],
  ])('%s belongs to lead %s at path %j', (workflowId, lead, path) => {
    expect(leadRunIdOf(workflowId)).toBe(lead);
    expect(delegationPathOf(workflowId)).toBe(path);
  });

  it('cuts a long text and says how much it left out', () => {
    expect(streamText('short')).toBe('short');
    const long = 'x'.repeat(STREAM_TEXT_MAX + 5);
    expect(streamText(long)).toBe(`${'x'.repeat(STREAM_TEXT_MAX)}… [5 more characters]`);
  });
});
