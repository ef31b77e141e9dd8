/** The serve command's tokens and its SSE frames. */
import { parseServeTokens, sseFrame } from '../../../client/live-server';

it('reads name:token pairs, a token alone naming "token"', () => {
  expect([...parseServeTokens('alice:t1, bob:t2,lonely')]).toEqual([
    ['t1', 'alice'],
    ['t2', 'bob'],
    ['lonely', 'token'],
  ]);
  expect(parseServeTokens(undefined).size).toBe(0);
});

it('frames an entry as one data line of JSON, with its id when it has one', () => {
  const event = { kind: 'text' as const, run_id: 'r', path: '', workflow_id: 'r', at: 'now', text: 'a\nb' };
  expect(sseFrame({ id: '42', event })).toBe(`id: 42\ndata: ${JSON.stringify(event)}\n\n`);
  expect(sseFrame({ id: '', event })).toBe(`data: ${JSON.stringify(event)}\n\n`);
});
