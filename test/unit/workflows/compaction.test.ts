import { keptFrom } from '../../../activities/summarize';
import type { ChatMessage } from '../../../contracts/messages';
import { CHARS_PER_TOKEN, estimatedPromptTokens, needsCompaction } from '../../../workflows/compaction';

const settings = { trigger_tokens: 1000, keep_messages: 4 };
const user = (content: string): ChatMessage => ({ role: 'user', content });

describe('estimatedPromptTokens', () => {
  it('adds what was appended since to what the provider counted last', () => {
    const state = { transcript: { tail: [user('x'.repeat(400))] }, turns: 3, last_prompt_tokens: 900 };
    expect(estimatedPromptTokens(state)).toBe(900 + 400 / CHARS_PER_TOKEN);
  });

  it('estimates from characters, stored prefix included, when no provider counted', () => {
    const state = {
      transcript: { stored: { key: 'k', count: 8, chars: 3600 }, tail: [user('abcd')] },
      turns: 3,
    };
    expect(estimatedPromptTokens(state)).toBe(901);
  });
});

describe('needsCompaction', () => {
  const big = { transcript: { tail: [user('x'.repeat(4000))] }, turns: 4 };
  it('fires at the trigger, never when summarization is off', () => {
    expect(needsCompaction(big, settings)).toBe(true);
    expect(needsCompaction(big, undefined)).toBe(false);
    expect(needsCompaction({ ...big, transcript: { tail: [user('x')] } }, settings)).toBe(false);
  });

  it('after a compaction, waits until the prompt has grown by a quarter of the trigger', () => {
    // What is kept is itself past the trigger: compacting at every turn would gain nothing.
    const kept = { transcript: { tail: [] }, turns: 9, last_prompt_tokens: 1100, compaction_floor: 1100 };
    expect(needsCompaction(kept, settings)).toBe(false);
    expect(needsCompaction({ ...kept, last_prompt_tokens: 1349 }, settings)).toBe(false);
    expect(needsCompaction({ ...kept, last_prompt_tokens: 1350 }, settings)).toBe(true);
  });

  it('waits after a failed summary', () => {
    expect(needsCompaction({ ...big, compaction_retry_turn: 6 }, settings)).toBe(false);
    expect(needsCompaction({ ...big, turns: 6, compaction_retry_turn: 6 }, settings)).toBe(true);
  });
});

describe('keptFrom', () => {
  const transcript: ChatMessage[] = [
    { role: 'system', content: 's' },
    user('task'),
    { role: 'assistant', content: 'a', tool_calls: [{ id: '1', name: 'ls', args: '{}' }] },
    { role: 'tool', tool_call_id: '1', name: 'ls', content: 'r1' },
    {
      role: 'assistant',
      content: 'b',
      tool_calls: [
        { id: '2', name: 'ls', args: '{}' },
        { id: '3', name: 'ls', args: '{}' },
      ],
    },
    { role: 'tool', tool_call_id: '2', name: 'ls', content: 'r2' },
    { role: 'tool', tool_call_id: '3', name: 'ls', content: 'r3' },
    { role: 'assistant', content: 'c' },
  ];

  it('keeps the last messages, never a tool result without its call', () => {
    expect(keptFrom(transcript, 2, 2)).toBe(4);
    expect(keptFrom(transcript, 2, 1)).toBe(7);
    expect(keptFrom(transcript, 2, 3)).toBe(4);
  });

  it('never reaches back past the task', () => {
    expect(keptFrom(transcript, 2, 50)).toBe(2);
  });
});
