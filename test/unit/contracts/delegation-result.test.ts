import {
  delegationMetadata,
  delegationToolMessage,
  depthRefusalText,
  refusedTaskMessage,
  subagentResultText,
} from '../../../contracts/delegation-result';
import type { SubagentResult } from '../../../contracts/subagent';

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
      metadata: { subagent_status: 'completed' },
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

  it('puts the structured fields under DeerFlow’s metadata keys', () => {
    expect(delegationMetadata(result)).toEqual({
      subagent_status: 'completed',
      subagent_stop_reason: 'token_capped',
      subagent_model_name: 'gpt-4o-mini',
      subagent_token_usage: usage,
      subagent_result_sha256: 'ab'.repeat(32),
      subagent_result_brief: 'The full answer.',
    });
  });

  it('carries a failed run’s error under subagent_error', () => {
    expect(delegationMetadata({ ...result, status: 'failed', error: 'Ran out of turns.' })).toMatchObject({
      subagent_status: 'failed',
      subagent_error: 'Ran out of turns.',
    });
  });

  it('marks a provider failure as an error fallback and leaves absent fields out', () => {
    const result: SubagentResult = { status: 'failed', error: 'HTTP 401', error_fallback: true, turns: 1 };
    expect(delegationMetadata(result)).toEqual({
      subagent_status: 'failed',
      deerflow_error_fallback: true,
      subagent_error: 'HTTP 401',
    });
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

function result(fields: Partial<SubagentResult> & Pick<SubagentResult, 'status'>): SubagentResult {
  return { turns: 3, ...fields };
}

const PARTIAL = '\n\nPartial result (the subagent stopped before finishing; this is incomplete):\n';

describe('subagentResultText', () => {
  it('renders a success', () => {
    expect(subagentResultText(result({ status: 'completed', result: 'Found 3 files.' }), 900)).toBe(
      'Task Succeeded. Result: Found 3 files.',
    );
  });

  it('names the cap of a capped success', () => {
    const capped = (stop_reason: SubagentResult['stop_reason']) =>
      subagentResultText(result({ status: 'completed', stop_reason, result: 'Partial notes.' }), 900);
    expect(capped('token_capped')).toBe('Task Succeeded (capped: token budget). Result: Partial notes.');
    expect(capped('turn_capped')).toBe('Task Succeeded (capped: turn budget). Result: Partial notes.');
    expect(capped('loop_capped')).toBe(
      'Task Succeeded (capped: repeated tool-call loop). Result: Partial notes.',
    );
  });

  it('renders a failure with its error, capped or not', () => {
    expect(subagentResultText(result({ status: 'failed', error: 'HTTP 401: bad key' }), 900)).toBe(
      'Task failed. Error: HTTP 401: bad key',
    );
    expect(
      subagentResultText(result({ status: 'failed', stop_reason: 'turn_capped', error: 'No text.' }), 900),
    ).toBe('Task failed (capped: turn budget). Error: No text.');
    expect(subagentResultText(result({ status: 'failed' }), 900)).toBe('Task failed.');
  });

  it('renders a cancellation', () => {
    expect(subagentResultText(result({ status: 'cancelled', error: 'Stopped from the CLI' }), 900)).toBe(
      'Task cancelled by user. Error: Stopped from the CLI',
    );
    expect(subagentResultText(result({ status: 'cancelled' }), 900)).toBe('Task cancelled by user.');
  });

  it('renders a timeout with the limit in seconds', () => {
    expect(subagentResultText(result({ status: 'timed_out', error: 'anything' }), 1800)).toBe(
      'Task timed out. Error: Execution timed out after 1800 seconds',
    );
  });

  it('appends a partial result to a run that did not complete, marked as partial', () => {
    expect(subagentResultText(result({ status: 'timed_out', result: 'Checked 2 of 5 modules.' }), 300)).toBe(
      `Task timed out. Error: Execution timed out after 300 seconds${PARTIAL}Checked 2 of 5 modules.`,
    );
    expect(
      subagentResultText(result({ status: 'cancelled', error: 'stop', result: 'Half done.' }), 300),
    ).toBe(`Task cancelled by user. Error: stop${PARTIAL}Half done.`);
    expect(subagentResultText(result({ status: 'failed', error: 'HTTP 400', result: 'Draft.' }), 300)).toBe(
      `Task failed. Error: HTTP 400${PARTIAL}Draft.`,
    );
    expect(subagentResultText(result({ status: 'timed_out', result: '  ' }), 300)).toBe(
      'Task timed out. Error: Execution timed out after 300 seconds',
    );
  });

  it('renders a polling timeout', () => {
    expect(subagentResultText(result({ status: 'polling_timed_out' }), 300)).toBe('Task polling timed out.');
  });
});
