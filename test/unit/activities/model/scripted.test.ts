import { utimesSync, writeFileSync } from 'node:fs';
import { CancelledFailure } from '@temporalio/common';
// The providers themselves: transcript storage around them is tested in test/unit/transcripts.test.ts.
import { ModelProviders } from '../../../../activities/model';
import { SCRIPT_EXHAUSTED_TEXT } from '../../../../activities/model/scripted';
import type { ChatMessage } from '../../../../contracts/messages';
import { activityEnv, callModelIn, modelInput, retryableFailureOf, tempDir, writeScript } from './fixtures';

/** One worker's providers: what they keep between calls (parsed scripts, non-streaming endpoints) holds here. */
const providers = new ModelProviders();

const dir = tempDir();

function scripted(scriptFile?: string) {
  return { provider: 'scripted' as const, model: 'demo', ...(scriptFile ? { script_file: scriptFile } : {}) };
}

const ask = (text: string): ChatMessage[] => [
  { role: 'system', content: 'You are a test.' },
  { role: 'user', content: text },
];

/** The transcript after `turns` completed assistant turns (each with one tool call and its result). */
function afterTurns(text: string, turns: number): ChatMessage[] {
  const messages = ask(text);
  for (let t = 0; t < turns; t++) {
    messages.push({ role: 'assistant', content: '', tool_calls: [{ id: `c${t}`, name: 'ls', args: '{}' }] });
    messages.push({ role: 'tool', tool_call_id: `c${t}`, name: 'ls', content: 'a.txt' });
  }
  return messages;
}

describe('scripted model: turns', () => {
  const file = writeScript(dir, {
    scripts: [
      {
        turns: [
          {
            content: 'reading',
            tool_calls: [
              { name: 'read_file', args: { path: 'a.txt' } },
              { name: 'bash', args: '{"command": "ls', id: 'my-id' },
            ],
            usage: { input_tokens: 10, output_tokens: 5 },
          },
          { content: 'done', usage: { input_tokens: 20, output_tokens: 2, total_tokens: 30 } },
        ],
      },
    ],
  });

  it('picks the turn from the number of assistant messages already in the transcript', async () => {
    const first = await providers.call(modelInput(scripted(file), ask('go')));
    expect(first.content).toBe('reading');
    expect(first.tool_calls).toEqual([
      { id: 'call_0_0', name: 'read_file', args: '{"path":"a.txt"}' },
      { id: 'my-id', name: 'bash', args: '{"command": "ls' },
    ]);
    expect(first.usage).toEqual({ input_tokens: 10, output_tokens: 5, total_tokens: 15 });
    expect(first.finish_reason).toBe('tool_calls');
    expect(first.model_name).toBe('scripted/demo');

    const second = await providers.call(modelInput(scripted(file), afterTurns('go', 1)));
    expect(second).toEqual({
      content: 'done',
      tool_calls: [],
      usage: { input_tokens: 20, output_tokens: 2, total_tokens: 30 },
      model_name: 'scripted/demo',
      finish_reason: 'stop',
    });
  });

  it('answers the fixed final text without tools once the turns run out', async () => {
    const result = await providers.call(modelInput(scripted(file), afterTurns('go', 2)));
    expect(result.content).toBe(SCRIPT_EXHAUSTED_TEXT);
    expect(result.tool_calls).toEqual([]);
    expect(result.error_fallback).toBeUndefined();
  });

  it('repeats the last turn with fresh tool call ids when repeat_last is set', async () => {
    const looping = writeScript(
      dir,
      {
        scripts: [
          {
            repeat_last: true,
            turns: [{ content: 'again', tool_calls: [{ name: 'ls', args: { path: '.' } }] }],
          },
        ],
      },
      'loop.yaml',
    );
    const fifth = await providers.call(modelInput(scripted(looping), afterTurns('go', 4)));
    expect(fifth.content).toBe('again');
    expect(fifth.tool_calls).toEqual([{ id: 'call_4_0', name: 'ls', args: '{"path":"."}' }]);
  });

  it('leaves usage absent when the turn states none, and passes a finish_reason through', async () => {
    const capped = writeScript(
      dir,
      { scripts: [{ turns: [{ content: 'cut off', finish_reason: 'length' }] }] },
      'length.yaml',
    );
    const result = await providers.call(modelInput(scripted(capped), ask('go')));
    expect(result).not.toHaveProperty('usage');
    expect(result.finish_reason).toBe('length');
  });
});

describe('scripted model: matching scripts', () => {
  const file = writeScript(
    dir,
    {
      scripts: [
        { agent: 'lead', prompt_contains: 'report', turns: [{ content: 'lead report' }] },
        { agent: 'lead', repeat_last: true, turns: [{ content: 'lead other' }] },
        { agent: 'bash', turns: [{ content: 'bash child' }] },
      ],
    },
    'matching.yaml',
  );

  it('uses the first script whose agent and prompt_contains both fit', async () => {
    const run = (agent: string, text: string) =>
      providers.call(modelInput(scripted(file), ask(text), { agent })).then((r) => r.content);
    expect(await run('lead', 'write the report')).toBe('lead report');
    expect(await run('lead', 'something else')).toBe('lead other');
    expect(await run('bash', 'write the report')).toBe('bash child');
  });

  it('matches prompt_contains against the first user message, not later ones', async () => {
    const messages: ChatMessage[] = [
      ...ask('something else'),
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'now the report' },
    ];
    const result = await providers.call(modelInput(scripted(file), messages));
    expect(result.content).toBe('lead other');
  });

  it('fails the call, naming the agent, when no script matches', async () => {
    const result = await providers.call(
      modelInput(scripted(file), ask('hello'), { agent: 'general-purpose' }),
    );
    expect(result.content).toBe('');
    expect(result.error_fallback?.message).toContain('no script matches agent "general-purpose"');
    expect(result.error_fallback?.message).toContain(file);
  });
});

describe('scripted model: provider errors', () => {
  const file = writeScript(
    dir,
    {
      scripts: [
        {
          agent: 'flaky',
          turns: [
            {
              content: 'finally',
              fail_attempts: [
                { status: 429, message: 'rate limited' },
                { status: 503, message: 'overloaded' },
              ],
            },
          ],
        },
        {
          agent: 'refused',
          turns: [{ content: 'never', fail_attempts: [{ status: 401, message: 'bad key' }] }],
        },
        {
          agent: 'broken',
          turns: [{ error: { status: 400, message: 'bad request: messages[1] is invalid' } }],
        },
        { agent: 'down', turns: [{ error: { status: 500, message: 'internal error' } }] },
        { agent: 'offline', turns: [{ error: { message: 'connection reset' } }] },
      ],
    },
    'errors.yaml',
  );
  const input = (agent: string) => modelInput(scripted(file), ask('go'), { agent });

  it('fails attempt k with fail_attempts entry k as a retryable failure, then succeeds', async () => {
    const first = await retryableFailureOf(callModelIn(activityEnv(1), input('flaky')));
    expect(first.message).toContain('rate limited');
    expect(first.message).toContain('429');
    const second = await retryableFailureOf(callModelIn(activityEnv(2), input('flaky')));
    expect(second.message).toContain('overloaded');
    const third = await callModelIn(activityEnv(3), input('flaky'));
    expect(third.content).toBe('finally');
  });

  it('classifies a non-retryable status in fail_attempts as an error fallback', async () => {
    const result = await callModelIn(activityEnv(1), input('refused'));
    expect(result.error_fallback).toEqual({ message: 'bad key', status: 401 });
    expect((await callModelIn(activityEnv(2), input('refused'))).content).toBe('never');
  });

  it('returns an error turn with a non-retryable status as error_fallback with the message', async () => {
    expect(await providers.call(input('broken'))).toEqual({
      content: '',
      tool_calls: [],
      model_name: 'scripted/demo',
      error_fallback: { message: 'bad request: messages[1] is invalid', status: 400 },
    });
  });

  it('throws an error turn with a 5xx status, or none (a network error), as retryable', async () => {
    expect((await retryableFailureOf(providers.call(input('down')))).message).toContain('internal error');
    expect((await retryableFailureOf(providers.call(input('offline')))).message).toContain(
      'connection reset',
    );
  });
});

describe('scripted model: no script file', () => {
  it('answers without tools with a text derived from the last user message', async () => {
    const messages: ChatMessage[] = [...ask('first question'), { role: 'assistant', content: 'hm' }];
    messages.push({ role: 'user', content: 'Summarise   the\nlogs' });
    const result = await providers.call(modelInput(scripted(), messages));
    expect(result).toEqual({
      content: 'Scripted answer to: Summarise the logs',
      tool_calls: [],
      model_name: 'scripted/demo',
      finish_reason: 'stop',
    });
    expect(await providers.call(modelInput(scripted(), messages))).toEqual(result);
  });
});

describe('scripted model: invalid script files', () => {
  const fallbackOf = async (file: string) => {
    const result = await providers.call(modelInput(scripted(file), ask('go')));
    expect(result.content).toBe('');
    return result.error_fallback?.message ?? '';
  };

  it('names the file and the misspelt key, with the keys accepted there', async () => {
    const file = writeScript(
      dir,
      'scripts:\n  - promt_contains: x\n    turns: [{ content: a }]\n',
      'typo.yaml',
    );
    const message = await fallbackOf(file);
    expect(message).toContain(file);
    expect(message).toContain('scripts[0].promt_contains: unknown key');
    expect(message).toContain('accepted: agent, prompt_contains, repeat_last, turns');
  });

  it('names the file and the key holding a value of the wrong type', async () => {
    const file = writeScript(
      dir,
      '{"scripts": [{"turns": [{"usage": {"input_tokens": "ten", "output_tokens": 1}}]}]}',
      'types.json',
    );
    const message = await fallbackOf(file);
    expect(message).toContain(file);
    expect(message).toContain('scripts[0].turns[0].usage.input_tokens');
  });

  it('says when the file is missing or not YAML', async () => {
    expect(await fallbackOf(`${dir}/missing.yaml`)).toMatch(/missing\.yaml: cannot read it \(ENOENT\)/);
    const bad = writeScript(dir, 'scripts: [unclosed', 'bad.yaml');
    expect(await fallbackOf(bad)).toContain(`model script ${bad}: not valid YAML or JSON`);
  });

  it('reads a changed file again', async () => {
    const file = writeScript(dir, { scripts: [{ turns: [{ content: 'old' }] }] }, 'changing.yaml');
    expect((await providers.call(modelInput(scripted(file), ask('go')))).content).toBe('old');
    writeFileSync(file, 'scripts: [{ turns: [{ content: new text }] }]\n');
    const later = new Date(Date.now() + 5000);
    utimesSync(file, later, later);
    expect((await providers.call(modelInput(scripted(file), ask('go')))).content).toBe('new text');
  });
});

describe('scripted model: delays', () => {
  const file = writeScript(dir, { scripts: [{ turns: [{ content: 'slow', delay_ms: 1200 }] }] }, 'slow.yaml');

  it('heartbeats while it waits out delay_ms', async () => {
    const env = activityEnv();
    let heartbeats = 0;
    env.on('heartbeat', () => heartbeats++);
    const result = await callModelIn(env, modelInput(scripted(file), ask('go')));
    expect(result.content).toBe('slow');
    expect(heartbeats).toBeGreaterThanOrEqual(1);
  });

  it('stops promptly when the activity is cancelled', async () => {
    const env = activityEnv();
    const started = Date.now();
    const call = callModelIn(env, modelInput(scripted(file), ask('go')));
    setTimeout(() => env.cancel(), 100);
    await expect(call).rejects.toBeInstanceOf(CancelledFailure);
    expect(Date.now() - started).toBeLessThan(800);
  });
});
