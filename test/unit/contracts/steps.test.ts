import { buildStep, SUBAGENT_STEP_MAX_CHARS } from '../../../contracts/steps';

describe('buildStep', () => {
  it('records an assistant turn with its tool calls', () => {
    const step = buildStep(3, {
      role: 'assistant',
      content: 'Reading the file.',
      tool_calls: [{ id: 'c1', name: 'read_file', args: '{"path":"a.txt"}' }],
    });
    expect(step).toEqual({
      seq: 3,
      kind: 'ai',
      text: 'Reading the file.',
      truncated: false,
      tool_calls: [{ id: 'c1', name: 'read_file', args: '{"path":"a.txt"}', args_truncated: false }],
    });
  });

  it('records an assistant answer with no tool calls', () => {
    expect(buildStep(1, { role: 'assistant', content: 'Done.' })).toEqual({
      seq: 1,
      kind: 'ai',
      text: 'Done.',
      truncated: false,
      tool_calls: [],
    });
  });

  it('records a tool result with its call id, tool name and error flag', () => {
    expect(
      buildStep(4, { role: 'tool', tool_call_id: 'c1', name: 'bash', content: 'exit 2', is_error: true }),
    ).toEqual({
      seq: 4,
      kind: 'tool',
      text: 'exit 2',
      truncated: false,
      tool_call_id: 'c1',
      name: 'bash',
      is_error: true,
    });
    expect(buildStep(5, { role: 'tool', tool_call_id: 'c2', name: 'ls', content: 'a.txt' })).toMatchObject({
      is_error: false,
    });
  });

  it('caps text and each call’s arguments at 8,192 characters and flags the cut', () => {
    const big = 'x'.repeat(SUBAGENT_STEP_MAX_CHARS + 100);
    const args = JSON.stringify({ path: 'big.txt', content: big });
    const step = buildStep(1, {
      role: 'assistant',
      content: big,
      tool_calls: [
        { id: 'w', name: 'write_file', args },
        { id: 'l', name: 'ls', args: '{}' },
      ],
    });
    if (step.kind !== 'ai') throw new Error('expected an ai step');
    expect(SUBAGENT_STEP_MAX_CHARS).toBe(8192);
    expect(step.text).toBe(big.slice(0, 8192));
    expect(step.truncated).toBe(true);
    expect(step.tool_calls[0].args).toBe(args.slice(0, 8192));
    expect(step.tool_calls[0].args_truncated).toBe(true);
    expect(step.tool_calls[1]).toEqual({ id: 'l', name: 'ls', args: '{}', args_truncated: false });

    const toolStep = buildStep(2, { role: 'tool', tool_call_id: 'w', name: 'read_file', content: big });
    expect([toolStep.text.length, toolStep.truncated]).toEqual([8192, true]);
  });

  it('names the deferred tools a tool_search result promoted', () => {
    const message = { role: 'tool' as const, tool_call_id: 'c2', name: 'tool_search', content: '[…]' };
    expect(buildStep(5, message, ['github__create_issue'])).toMatchObject({
      kind: 'tool',
      promoted: ['github__create_issue'],
    });
    expect(buildStep(5, message, [])).not.toHaveProperty('promoted');
    expect(buildStep(5, message)).not.toHaveProperty('promoted');
  });
});
