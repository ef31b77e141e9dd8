import {
  applyBatchEnd,
  countForRun,
  renderLedgerForPrompt,
  startBatchEntry,
  startEntry,
} from '../../../../workflows/delegation/ledger';

const T0 = '2025-01-01T00:00:00.000Z';
const T1 = '2025-01-01T00:05:00.000Z';

function withBatch() {
  const tasks = startEntry(
    [],
    {
      id: 't1',
      runId: 'run-1',
      description: 'Survey',
      subagentType: 'general-purpose',
      workflowId: 'run-1/task/t1',
    },
    T0,
  );
  return startBatchEntry(
    tasks,
    {
      id: 'b1',
      runId: 'run-1',
      description: 'Review requirements',
      subagentType: 'general-purpose',
      workflowId: 'run-1/batch/b1',
      items: 40,
    },
    T0,
  );
}

describe('batch ledger entries', () => {
  it('adds a running batch entry with its item count, not counted toward max_total_per_run', () => {
    const ledger = withBatch();
    expect(ledger[1]).toEqual({
      id: 'b1',
      run_id: 'run-1',
      kind: 'batch',
      description: 'Review requirements',
      subagent_type: 'general-purpose',
      status: 'in_progress',
      batch: { total: 40 },
      created_at: T0,
      updated_at: T0,
      workflow_id: 'run-1/batch/b1',
    });
    expect(countForRun(ledger, 'run-1')).toBe(1);
  });

  it('records the end once: a second end never overwrites the first', () => {
    const ended = applyBatchEnd(
      withBatch(),
      'b1',
      { status: 'completed', counts: { total: 40, completed: 38, failed: 2, cancelled: 0 } },
      T1,
    );
    expect(ended[1]).toMatchObject({
      status: 'completed',
      batch: { total: 40, completed: 38, failed: 2 },
      updated_at: T1,
    });
    const again = applyBatchEnd(ended, 'b1', { status: 'failed', counts: { total: 40 }, error: 'late' }, T1);
    expect(again[1]).toEqual(ended[1]);
  });

  it('shows the lead a running batch with its id and the tools that follow it, then its counts', () => {
    const running = renderLedgerForPrompt(withBatch(), 4000);
    expect(running).toContain(
      '- [in_progress] batch b1: 40 general-purpose items "Review requirements" — still running; follow it ' +
        'with batch_status, read answers with read_batch_result.',
    );
    const ended = applyBatchEnd(
      withBatch(),
      'b1',
      { status: 'cancelled', counts: { total: 40, completed: 10, failed: 1, cancelled: 29 } },
      T1,
    );
    expect(renderLedgerForPrompt(ended, 4000)).toContain(
      '- [cancelled] batch b1: 40 general-purpose items "Review requirements" — 10 completed, 1 failed, ' +
        '29 cancelled. Read answers with read_batch_result.',
    );
  });
});
