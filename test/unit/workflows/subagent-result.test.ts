import { createHash } from 'node:crypto';
import type { ChatMessage } from '../../../contracts/messages';
import {
  finishSubagent,
  lastAssistantText,
  NO_RESPONSE_TEXT,
  type FinishSubagentInput,
} from '../../../workflows/subagent-result';
import { subagentResultText } from '../../../contracts/delegation-result';

const task: ChatMessage[] = [
  { role: 'system', content: 'You are a subagent.' },
  { role: 'user', content: 'Count the files.' },
];

/** The run's own messages stand for its last answer, as the workflow tracks it turn by turn. */
function finish(
  fields: Partial<Omit<FinishSubagentInput, 'finalText'>> & { transcript?: ChatMessage[] },
): ReturnType<typeof finishSubagent> {
  const { transcript = task, ...rest } = fields;
  return finishSubagent({
    status: 'completed',
    finalText: lastAssistantText(transcript),
    timeoutSeconds: 900,
    turns: 2,
    ...rest,
  });
}

const withText: ChatMessage[] = [
  ...task,
  {
    role: 'assistant',
    content: 'So far: 12 files in src.',
    tool_calls: [{ id: 'c1', name: 'ls', args: '{}' }],
  },
  { role: 'tool', tool_call_id: 'c1', name: 'ls', content: 'a b c' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'c2', name: 'ls', args: '{"path":"x"}' }] },
];

describe('finishSubagent', () => {
  it('completes with the final answer, its brief and its digest', () => {
    const transcript: ChatMessage[] = [...task, { role: 'assistant', content: 'There are 14 files.' }];
    expect(
      finish({
        transcript,
        modelName: 'gpt-4o-mini',
        tokenUsage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
      }),
    ).toEqual({
      status: 'completed',
      result: 'There are 14 files.',
      result_brief: 'There are 14 files.',
      result_sha256: createHash('sha256').update('There are 14 files.').digest('hex'),
      model_name: 'gpt-4o-mini',
      token_usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
      turns: 2,
    });
  });

  it('keeps a capped run with usable text from an earlier turn as completed plus its stop reason', () => {
    for (const stopReason of ['token_capped', 'turn_capped', 'loop_capped'] as const) {
      const outcome = finish({ transcript: withText, stopReason });
      expect(outcome).toMatchObject({
        status: 'completed',
        stop_reason: stopReason,
        result: 'So far: 12 files in src.',
      });
      expect(outcome.error).toBeUndefined();
    }
  });

  it('fails a capped run that produced no text, keeping the stop reason', () => {
    const silent: ChatMessage[] = [
      ...task,
      { role: 'assistant', content: '  ', tool_calls: [{ id: 'c', name: 'ls', args: '{}' }] },
    ];
    const outcome = finish({ transcript: silent, stopReason: 'turn_capped' });
    expect(outcome).toEqual({
      status: 'failed',
      stop_reason: 'turn_capped',
      error: 'The subagent used up its turn budget before producing any text.',
      turns: 2,
    });
    expect(subagentResultText(outcome, 900)).toBe(
      'Task failed (capped: turn budget). Error: The subagent used up its turn budget before producing any text.',
    );
  });

  it('brings a long result back as a brief of at most 2,000 characters and the digest of the whole', () => {
    const long = 'word '.repeat(2000);
    const outcome = finish({ transcript: [...task, { role: 'assistant', content: long }] });
    expect(outcome.result).toBe(long);
    expect(outcome.result_brief!.length).toBeLessThanOrEqual(2000);
    expect(outcome.result_brief!.startsWith('word word')).toBe(true);
    expect(outcome.result_sha256).toBe(createHash('sha256').update(long).digest('hex'));
  });

  it('says so when a normal finish produced no text at all', () => {
    expect(finish({})).toMatchObject({ status: 'completed', result: NO_RESPONSE_TEXT });
  });

  it('fails on a provider error fallback, never completes', () => {
    const outcome = finish({
      transcript: withText,
      errorFallback: { message: 'HTTP 401: invalid API key', status: 401 },
    });
    expect(outcome).toMatchObject({
      status: 'failed',
      error: 'HTTP 401: invalid API key',
      error_fallback: true,
    });
    expect(outcome.result).toBe('So far: 12 files in src.');
  });

  it('times out with the limit in the error and the text so far as a partial result', () => {
    const outcome = finish({ status: 'timed_out', transcript: withText, timeoutSeconds: 1800 });
    expect(outcome).toMatchObject({
      status: 'timed_out',
      error: 'Execution timed out after 1800 seconds',
      result: 'So far: 12 files in src.',
    });
  });

  it('passes a cancellation and its reason through', () => {
    expect(finish({ status: 'cancelled', error: 'Cancelled from the CLI' })).toEqual({
      status: 'cancelled',
      error: 'Cancelled from the CLI',
      turns: 2,
    });
  });
});
