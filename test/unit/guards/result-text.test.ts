import type { SubagentResult } from '../../../contracts/subagent';
import { subagentResultText } from '../../../workflows/pure/result-text';

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
