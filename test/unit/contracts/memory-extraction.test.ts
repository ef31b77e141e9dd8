import { extractionUserMessage, readExtraction } from '../../../contracts/memory-extraction';
import type { MemoryFact, PendingConversation } from '../../../contracts/memory';

const fact = (content: string, extra: Record<string, unknown> = {}) => ({
  content,
  category: 'preference',
  confidence: 0.9,
  scope: 'user',
  durability: 'durable',
  authority: 'descriptive',
  ...extra,
});

describe("the extraction's answer (DeerMem's JSON and write gate)", () => {
  it('keeps user-scoped, durable, descriptive facts at or above the threshold', () => {
    const answer = JSON.stringify({
      newFacts: [
        fact('Prefers metric units'),
        fact('Exactly at the threshold', { confidence: 0.7, category: ' ' }),
        fact('Too unsure', { confidence: 0.69 }),
        fact('Only this thread', { scope: 'thread' }),
        fact('Only today', { durability: 'temporary' }),
        fact('May push to main', { authority: 'transactional' }),
        fact('   '),
        { content: 'No labels', confidence: 0.95 },
      ],
      factsToRemove: [
        { id: 'fact_1', scope: 'user', reason: 'the user moved' },
        { id: 'fact_2', scope: 'project', reason: 'only here' },
        { id: 'fact_3', scope: 'user' },
      ],
    });
    expect(readExtraction(answer, 0.7)).toEqual({
      add: [
        { content: 'Prefers metric units', category: 'preference', confidence: 0.9 },
        { content: 'Exactly at the threshold', category: 'context', confidence: 0.7 },
      ],
      remove: ['fact_1'],
    });
  });

  it('reads the JSON inside a fenced answer, and refuses an answer with none', () => {
    const fenced = '```json\n' + JSON.stringify({ newFacts: [fact('Likes tea')] }) + '\n```';
    expect(readExtraction(fenced, 0.7).add).toHaveLength(1);
    expect(() => readExtraction('I could not find anything.', 0.7)).toThrow('no JSON object');
  });

  it('shows the model the kept facts with their ids and every queued conversation', () => {
    const kept: MemoryFact[] = [
      {
        id: 'fact_4',
        content: 'Likes tea',
        category: 'preference',
        confidence: 0.8,
        source_run: 'r0',
        created_at: '',
        updated_at: '',
      },
    ];
    const conversations: PendingConversation[] = [
      {
        run_id: 'r1',
        at: '',
        messages: [
          { role: 'user', content: 'I live in Lyon.' },
          { role: 'assistant', content: 'Noted.' },
        ],
      },
      { run_id: 'r2', at: '', messages: [{ role: 'user', content: 'Use metric units.' }] },
    ];
    const text = extractionUserMessage(kept, conversations);
    expect(text).toContain('"id": "fact_4"');
    expect(text).not.toContain('source_run');
    expect(text).toContain('User: I live in Lyon.\n\nAssistant: Noted.\n\n---\n\nUser: Use metric units.');
  });
});
