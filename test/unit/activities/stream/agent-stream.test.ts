/**
 * An activity's stream: pieces of text coalesced into one event per write, in order, tagged with the lead
 * run and the delegation path; a bridge that fails loses events, never the activity, and is said once.
 */
import { AgentStream, StreamPublishing } from '../../../../activities/stream/agent-stream';
import type { StreamEvent } from '../../../../contracts/stream';

function recording(fail = false) {
  const published: StreamEvent[][] = [];
  const said: string[] = [];
  const publishing = new StreamPublishing(
    {
      publish: (_runId, events) => {
        if (fail) return Promise.reject(new Error('disk full'));
        published.push([...events]);
        return Promise.resolve();
      },
    },
    (line) => said.push(line),
  );
  return { publishing, published, said };
}

it('writes the first piece at once, coalesces the rest, keeps the order of kinds and tags each event', async () => {
  const { publishing, published } = recording();
  const stream = new AgentStream(publishing, 'run-1/task/part0', 2, 'general-purpose', 3);
  stream.emit('turn_started');
  stream.text('Hello ');
  // The first piece (with what was queued before it) is on its way without the coalescing's wait (40 ms).
  await new Promise((resolve) => setImmediate(resolve));
  expect(published.map((batch) => batch.map((e) => e.kind))).toEqual([['turn_started', 'text']]);
  stream.text('world');
  stream.toolCall('c1', 'ls');
  stream.text('!');
  await stream.flush();
  expect(published).toHaveLength(2);
  expect(published.flat().map((e) => [e.kind, e.text ?? e.tool_call?.name])).toEqual([
    ['turn_started', undefined],
    ['text', 'Hello '],
    ['text', 'world'],
    ['tool_call', 'ls'],
    ['text', '!'],
  ]);
  expect(published[1]).toHaveLength(3);
  expect(published[0][1]).toMatchObject({
    run_id: 'run-1',
    path: 'part0',
    workflow_id: 'run-1/task/part0',
    agent: 'general-purpose',
    turn: 3,
    attempt: 2,
  });
});

it('drops what a failing bridge cannot take, says so once, and never rejects', async () => {
  const { publishing, said } = recording(true);
  const stream = new AgentStream(publishing, 'run-1', 1, 'lead', 0);
  stream.text('one');
  await expect(stream.flush()).resolves.toBeUndefined();
  stream.text('two');
  await expect(stream.flush()).resolves.toBeUndefined();
  expect(said).toHaveLength(1);
  expect(said[0]).toContain('disk full');
});
