/** The scripted model quoting what tools returned (`{{tool_result}}`), so a scripted answer cannot hide a broken tool. */
import { ModelProviders } from '../../../../activities/model';
import type { ChatMessage } from '../../../../contracts/messages';
import { modelInput, tempDir, writeScript } from './fixtures';

/** One worker's providers: what they keep between calls (parsed scripts, non-streaming endpoints) holds here. */
const providers = new ModelProviders();

const dir = tempDir();

const file = writeScript(
  dir,
  {
    scripts: [
      {
        turns: [
          {
            content: 'Counting.',
            tool_calls: [
              { name: 'bash', id: 'count', args: { command: 'wc -l notes.md' } },
              { name: 'ls', id: 'list', args: { path: '.' } },
            ],
          },
          { content: 'Files:\n{{tool_result}}\nLines: {{tool_result:count}} (again: {{tool_result:count}})' },
          { content: 'Missing: {{tool_result:nope}}' },
        ],
      },
    ],
  },
  'quotes.yaml',
);

const scripted = { provider: 'scripted' as const, model: 'demo', script_file: file };

/** The transcript after the first turn, with what the two tools returned. */
function afterTools(count: string, list: string): ChatMessage[] {
  return [
    { role: 'system', content: 'You are a test.' },
    { role: 'user', content: 'count' },
    {
      role: 'assistant',
      content: 'Counting.',
      tool_calls: [
        { id: 'count', name: 'bash', args: '{}' },
        { id: 'list', name: 'ls', args: '{}' },
      ],
    },
    { role: 'tool', tool_call_id: 'count', name: 'bash', content: count },
    { role: 'tool', tool_call_id: 'list', name: 'ls', content: list },
  ];
}

describe('scripted model: quoting tool results', () => {
  it('puts in the last tool result, or the one of a tool call id, exactly as returned', async () => {
    const result = await providers.call(
      modelInput(scripted, afterTools('3 notes.md\n[exit code: 0]', 'notes.md\n$1 $& $$')),
    );
    expect(result.content).toBe(
      'Files:\nnotes.md\n$1 $& $$\nLines: 3 notes.md\n[exit code: 0] (again: 3 notes.md\n[exit code: 0])',
    );
  });

  it('so a broken tool shows in the answer', async () => {
    const broken = 'bash is unavailable: no sandbox could start (…)';
    const result = await providers.call(modelInput(scripted, afterTools(broken, 'notes.md')));
    expect(result.content).toContain(`Lines: ${broken}`);
  });

  it('fails the call, without retry, when the quoted result is not in the transcript', async () => {
    const messages: ChatMessage[] = [
      ...afterTools('3', 'notes.md'),
      { role: 'assistant', content: 'Files: …' },
    ];
    const result = await providers.call(modelInput(scripted, messages));
    expect(result.content).toBe('');
    expect(result.error_fallback?.message).toBe(
      `model script ${file}: agent "lead", turn 3: {{tool_result:nope}}: no such tool result in the transcript ` +
        '(tool call ids: count, list)',
    );
  });
});
