import { initialLoopState } from '../../../workflows/agent-loop';
import {
  recordRemoteRun,
  remoteEndError,
  remotePrompt,
  remoteRunEnd,
} from '../../../workflows/remote-subagent';
import { runOutcome } from '../../../workflows/run-lifecycle';
import { REMOTE_RUN_ENDS, type RemoteSubagentResult } from '../../../contracts/remote-subagent';

const remote = {
  provider: { type: 'acp' as const, name: 'local_acp', command: 'node', args: [], env: {} },
};

function result(fields: Partial<RemoteSubagentResult>): RemoteSubagentResult {
  return { end: 'completed', messages: [], ...fields };
}

describe('a remote run’s end as the subagent’s', () => {
  it('takes completed as the only success', () => {
    expect(remoteRunEnd(remote, result({ end: 'completed', text: 'Done.' }))).toEqual({ kind: 'answered' });
    for (const end of REMOTE_RUN_ENDS.filter((e) => e !== 'completed' && e !== 'input_required')) {
      const outcome = runOutcome(remoteRunEnd(remote, result({ end })) as never, 'Task cancelled by user');
      expect([end, outcome.status]).toEqual([
        end,
        end === 'timed_out' ? 'timed_out' : end === 'cancelled' ? 'cancelled' : 'failed',
      ]);
    }
  });

  it('names the provider, what the end means and the remote side’s reason', () => {
    expect(remoteEndError(remote, result({ end: 'max_tokens', error: 'stopped at 4096 tokens' }))).toBe(
      'local_acp (acp): the remote agent ran out of tokens (max_tokens): stopped at 4096 tokens',
    );
    expect(
      remoteRunEnd(
        { provider: { type: 'a2a', name: 'team_a2a', url: 'http://127.0.0.1:9' } },
        result({ end: 'failed', error: 'the build broke' }),
      ),
    ).toEqual({
      kind: 'remote_ended',
      status: 'failed',
      error: 'team_a2a (a2a): the remote agent failed: the build broke',
    });
    expect(remoteEndError(remote, result({ end: 'auth_required' }))).toBe(
      'local_acp (acp): the remote agent requires authentication',
    );
  });

  it('sends the persona before the prompt', () => {
    expect(remotePrompt('Fix it.', undefined)).toBe('Fix it.');
    expect(remotePrompt('Fix it.', 'You are careful.')).toBe('You are careful.\n\nFix it.');
  });
});

describe('a remote run in the subagent’s state', () => {
  it('keeps the text, the steps and the usage last reported (the total so far); absent usage stays absent', () => {
    const state = initialLoopState({ tail: [] }, 0);
    recordRemoteRun(
      state,
      result({
        text: 'All fixed.',
        messages: [
          { role: 'assistant', content: 'Reading.', tool_calls: [{ id: 't1', name: 'read', args: '{}' }] },
          { role: 'tool', tool_call_id: 't1', name: 'read', content: 'file text' },
        ],
      }),
      'local_acp (acp)',
    );
    expect(state).toMatchObject({
      turns: 1,
      last_text: 'All fixed.',
      model_name: 'local_acp (acp)',
      step_seq: 2,
    });
    expect(state.usage).toBeUndefined();
    expect(state.steps.map((step) => step.kind)).toEqual(['ai', 'tool']);

    recordRemoteRun(
      state,
      result({ text: 'Again.', usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7 } }),
      'local_acp (acp)',
    );
    expect(state.usage).toEqual({ input_tokens: 5, output_tokens: 2, total_tokens: 7 });
    expect(state.turns).toBe(2);

    // After a question, the same task reports its total so far: it replaces, it is not added twice.
    recordRemoteRun(
      state,
      result({ text: 'Answered.', usage: { input_tokens: 9, output_tokens: 4, total_tokens: 13 } }),
      'local_acp (acp)',
    );
    expect(state.usage).toEqual({ input_tokens: 9, output_tokens: 4, total_tokens: 13 });
  });

  it('says a resumption in the step log and the text', () => {
    const state = initialLoopState({ tail: [] }, 0);
    recordRemoteRun(state, result({ text: 'Done.', resumed: 'restarted' }), 'team_a2a (a2a)');
    expect(state.steps[0]).toMatchObject({ kind: 'ai' });
    expect(state.steps[0].text).toContain('the task was started again');
    expect(state.last_text).toMatch(/^Done\.\n\n\(Resumed: .*started again/);
  });
});
