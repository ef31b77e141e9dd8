import type { SubagentResult } from '../../../contracts/subagent';
import {
  delegationMetadata,
  delegationToolMessage,
  depthRefusalText,
  refusedTaskMessage,
} from '../../../workflows/lead/delegation-text';

describe('delegationToolMessage', () => {
  function answer(fields: Partial<SubagentResult> & Pick<SubagentResult, 'status'>, timeoutSeconds = 900) {
    return delegationToolMessage('call_7', { turns: 3, ...fields }, timeoutSeconds);
  }

  it('answers the task call with DESIGN §4’s text', () => {
    expect(answer({ status: 'completed', result: 'Found 3 files.' })).toEqual({
      role: 'tool',
      tool_call_id: 'call_7',
      name: 'task',
      content: 'Task Succeeded. Result: Found 3 files.',
      is_error: false,
    });
    expect(answer({ status: 'completed', stop_reason: 'turn_capped', result: 'Half.' }).content).toBe(
      'Task Succeeded (capped: turn budget). Result: Half.',
    );
    expect(answer({ status: 'failed', stop_reason: 'turn_capped', error: 'No text.' }).content).toBe(
      'Task failed (capped: turn budget). Error: No text.',
    );
    expect(answer({ status: 'cancelled', error: 'Task cancelled by user' }).content).toBe(
      'Task cancelled by user. Error: Task cancelled by user',
    );
    expect(answer({ status: 'timed_out' }, 1800).content).toBe(
      'Task timed out. Error: Execution timed out after 1800 seconds',
    );
  });

  it('marks every outcome but completed as an error result, a capped completion included as success', () => {
    expect(answer({ status: 'completed', stop_reason: 'token_capped', result: 'Some.' }).is_error).toBe(
      false,
    );
    for (const status of ['failed', 'cancelled', 'timed_out', 'polling_timed_out'] as const) {
      expect(answer({ status }).is_error).toBe(true);
    }
  });
});

describe('delegationMetadata', () => {
  const usage = { input_tokens: 100, output_tokens: 20, total_tokens: 120 };

  it('puts the structured fields under DeerFlow’s metadata keys', () => {
    const result: SubagentResult = {
      status: 'completed',
      stop_reason: 'token_capped',
      result: 'The full answer.',
      result_brief: 'The full answer.',
      result_sha256: 'ab'.repeat(32),
      model_name: 'gpt-4o-mini',
      token_usage: usage,
      turns: 7,
    };
    expect(delegationMetadata(result)).toEqual({
      subagent_status: 'completed',
      subagent_stop_reason: 'token_capped',
      subagent_model_name: 'gpt-4o-mini',
      subagent_token_usage: usage,
      result_sha256: 'ab'.repeat(32),
      result_brief: 'The full answer.',
    });
  });

  it('marks a provider failure as an error fallback and leaves absent fields out', () => {
    const result: SubagentResult = { status: 'failed', error: 'HTTP 401', error_fallback: true, turns: 1 };
    expect(delegationMetadata(result)).toEqual({ subagent_status: 'failed', deerflow_error_fallback: true });
  });
});

describe('depthRefusalText', () => {
  it('names the depth limit and tells the model to do the work itself', () => {
    expect(depthRefusalText(1)).toBe(
      'Task refused: the delegation depth limit (max_depth = 1) is reached; do this work directly.',
    );
  });

  it('becomes an error result for the call, with the task tool still answering it', () => {
    expect(refusedTaskMessage('call_9', depthRefusalText(2))).toEqual({
      role: 'tool',
      tool_call_id: 'call_9',
      name: 'task',
      content: 'Task refused: the delegation depth limit (max_depth = 2) is reached; do this work directly.',
      is_error: true,
    });
  });
});
