import type { ToolCall, ToolMessage } from '../../../contracts/messages';
import type { AgentLoopConfig, AgentLoopState, LoopPlugins } from '../../../workflows/agent-loop';
import { runOutcome, slotLabel, SLOT_LABEL_MAX_CHARS } from '../../../workflows/run-lifecycle';
import { ToolCalls } from '../../../workflows/tool-calls';

const CANCELLED = 'Run cancelled by user';

describe('runOutcome: one reading of a run end for the lead and every subagent', () => {
  it('completes an answer, and fails one cut off or refused, naming the cut-off as the run stop', () => {
    expect(runOutcome({ kind: 'answered', finishReason: 'stop' }, CANCELLED)).toEqual({
      status: 'completed',
    });
    expect(runOutcome({ kind: 'answered' }, CANCELLED)).toEqual({ status: 'completed' });
    const cut = runOutcome({ kind: 'answered', finishReason: 'length' }, CANCELLED);
    expect(cut).toMatchObject({ status: 'failed', runStopReason: 'model_length_capped' });
    expect(cut.error).toContain('cut off');
    const refused = runOutcome({ kind: 'answered', finishReason: 'content_filter' }, CANCELLED);
    expect(refused.status).toBe('failed');
    expect(refused.runStopReason).toBeUndefined();
  });

  it("keeps a guard's cap as the stop reason, the delegation limit as the run's own", () => {
    expect(runOutcome({ kind: 'guard_stopped', stopReason: 'turn_capped' }, CANCELLED)).toEqual({
      status: 'completed',
      stopReason: 'turn_capped',
    });
    expect(runOutcome({ kind: 'delegation_capped' }, CANCELLED)).toEqual({
      status: 'completed',
      runStopReason: 'subagent_limit_capped',
    });
  });

  it('marks a provider error and retries that ran out as the error fallback', () => {
    const error = { message: '401 bad key', status: 401 };
    expect(runOutcome({ kind: 'error_fallback', error }, CANCELLED)).toEqual({
      status: 'failed',
      error: '401 bad key',
      errorFallback: error,
    });
    expect(runOutcome({ kind: 'activity_failed', message: '503 again' }, CANCELLED)).toEqual({
      status: 'failed',
      error: '503 again',
      errorFallback: { message: '503 again' },
    });
  });

  it("leaves the clock's words to the workflow and says a cancel in the workflow's words", () => {
    expect(runOutcome({ kind: 'timed_out' }, CANCELLED)).toEqual({ status: 'timed_out' });
    expect(runOutcome({ kind: 'cancelled' }, 'Task cancelled by user')).toEqual({
      status: 'cancelled',
      error: 'Task cancelled by user',
    });
  });
});

describe('slotLabel', () => {
  it('names the agent and its task on one line', () => {
    expect(slotLabel('general-purpose', 'Count  the\nfiles')).toBe('general-purpose: Count the files');
  });

  it('cuts a long task to one length for every agent, with an ellipsis', () => {
    const label = slotLabel('lead', 'x'.repeat(500));
    expect(label).toHaveLength(SLOT_LABEL_MAX_CHARS);
    expect(label.startsWith('lead: xxx')).toBe(true);
    expect(label.endsWith('…')).toBe(true);
  });
});

describe('ToolCalls.inCallOrder', () => {
  const config = { sandbox: { bash_timeout_seconds: 60 } } as unknown as AgentLoopConfig;
  const state = {} as AgentLoopState;
  const call = (id: string, name: string): ToolCall => ({ id, name, args: '{}' });
  const answer = (c: ToolCall): ToolMessage => ({
    role: 'tool',
    tool_call_id: c.id,
    name: c.name,
    content: `ran ${c.id}`,
  });

  it('gives the claimed calls to their plugin and returns one result per call, by position', async () => {
    const calls = [call('a', 'task'), call('a', 'task'), call('b', 'task')];
    const seen: ToolCall[][] = [];
    const claimer: LoopPlugins['claimedCalls'] = {
      claims: () => true,
      run: async (claimed) => {
        seen.push(claimed);
        return claimed.map(answer);
      },
    };
    const tools = new ToolCalls(state, config);
    const results = tools.inCallOrder(calls, await tools.start(calls, claimer));
    expect(seen).toEqual([calls]);
    // Two calls with one id still get a result each, in the model's order.
    expect(results.map(({ result }) => result.content)).toEqual(['ran a', 'ran a', 'ran b']);
  });

  it('refuses to go on when a plugin returns fewer results than calls', async () => {
    const calls = [call('a', 'task'), call('b', 'task')];
    const claimer: LoopPlugins['claimedCalls'] = {
      claims: () => true,
      run: async (claimed) => claimed.slice(0, 1).map(answer),
    };
    const tools = new ToolCalls(state, config);
    const settled = await tools.start(calls, claimer);
    expect(() => tools.inCallOrder(calls, settled)).toThrow('no result for tool call b (task)');
  });
});
