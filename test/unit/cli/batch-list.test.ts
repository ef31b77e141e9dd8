/** The pure parts of `batch list` and of the listing it shares with `list`: filters, rows, marks, the table. */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { TypedSearchAttributes, type SearchAttributePair } from '@temporalio/common';
import {
  batchListFilter,
  listedBatch,
  renderBatchList,
  type ListedBatch,
} from '../../../cli/batch-list-command';
import { refusedQuery, tableLines, unreadableText, visibilityQuery } from '../../../cli/visibility-listing';
import { UsageError } from '../../../cli/flags';
import { FAILED_ITEMS, LEAD_RUN_ID, SUBAGENT_STATUS, USER_ID } from '../../../contracts/search-attributes';
import { MissingEncryptionKeyError } from '../../../payloads/encryption-codec';

/** A visibility record with what `listedBatch` reads; the rest of the SDK's shape plays no part. */
function record(
  workflowId: string,
  status: 'RUNNING' | 'COMPLETED' | 'TERMINATED',
  attributes: SearchAttributePair[],
): WorkflowExecutionInfo {
  const fields: Pick<
    WorkflowExecutionInfo,
    'workflowId' | 'startTime' | 'closeTime' | 'typedSearchAttributes'
  > & { status: { name: string } } = {
    workflowId,
    status: { name: status },
    startTime: new Date('2025-01-01T00:00:00.000Z'),
    ...(status !== 'RUNNING' && { closeTime: new Date('2025-01-01T00:01:00.000Z') }),
    typedSearchAttributes: new TypedSearchAttributes(attributes),
  };
  return fields as WorkflowExecutionInfo;
}

describe('batch list', () => {
  it('checks the filters against the contract and builds the query', () => {
    expect(visibilityQuery(batchListFilter('failed', 'alice@example.org'))).toBe(
      "WorkflowType = 'batchWorkflow' AND ExecutionStatus != 'ContinuedAsNew' AND " +
        "SubagentStatus = 'failed' AND UserId = 'alice@example.org'",
    );
    expect(visibilityQuery(batchListFilter(undefined, undefined))).toBe(
      "WorkflowType = 'batchWorkflow' AND ExecutionStatus != 'ContinuedAsNew'",
    );
    expect(() => batchListFilter('timed_out', undefined)).toThrow(
      new UsageError('--status: "timed_out" is not one of running, completed, cancelled, failed'),
    );
    expect(() => batchListFilter(undefined, "x' OR 1=1")).toThrow(/^--user: "x' OR 1=1" is not a user id/);
  });

  it('reads a row from the search attributes: status, failed items, user, the lead run that started it', () => {
    expect(
      listedBatch(
        record('run-1/batch/review', 'COMPLETED', [
          { key: SUBAGENT_STATUS, value: 'failed' },
          { key: FAILED_ITEMS, value: 2 },
          { key: USER_ID, value: 'alice' },
          { key: LEAD_RUN_ID, value: 'run-1' },
        ]),
      ),
    ).toEqual({
      batch_id: 'run-1/batch/review',
      status: 'failed',
      status_source: 'search_attribute',
      execution_status: 'COMPLETED',
      failed_items: 2,
      user_id: 'alice',
      lead_run_id: 'run-1',
      started_at: '2025-01-01T00:00:00.000Z',
      closed_at: '2025-01-01T00:01:00.000Z',
    });
    // `batch start`'s batch is its own LeadRunId: no lead run.
    const own = listedBatch(
      record('batch-1', 'RUNNING', [
        { key: SUBAGENT_STATUS, value: 'running' },
        { key: LEAD_RUN_ID, value: 'batch-1' },
      ]),
    );
    expect(own).toMatchObject({ status: 'running', status_source: 'search_attribute' });
    expect(own.lead_run_id).toBeUndefined();
    // Terminated: it reported no end, its attribute still says running; Temporal's status is the truth.
    expect(
      listedBatch(record('batch-2', 'TERMINATED', [{ key: SUBAGENT_STATUS, value: 'running' }])),
    ).toMatchObject({ status: 'terminated', status_source: 'execution' });
  });

  it('names the key of a result it cannot decrypt, wherever the error carries it', () => {
    const missing = new MissingEncryptionKeyError('k-1234', 'payload is encrypted with key k-1234, …');
    expect(unreadableText(missing)).toBe('encrypted: key k-1234 not held');
    expect(unreadableText(new Error('decoding the result', { cause: missing }))).toBe(
      'encrypted: key k-1234 not held',
    );
    expect(unreadableText(new Error('payload blob abc is missing\nmore'))).toBe(
      'unreadable: payload blob abc is missing',
    );
  });

  it('renders a table: counts of closed batches, marks for a running one and an unread one', () => {
    const now = Date.parse('2025-01-01T01:00:00.000Z');
    const base = {
      status_source: 'search_attribute' as const,
      user_id: 'default',
      started_at: '2025-01-01T00:59:15.000Z',
    };
    const batches: ListedBatch[] = [
      { ...base, batch_id: 'batch-4', status: 'running', execution_status: 'RUNNING' },
      {
        ...base,
        batch_id: 'batch-3',
        status: 'failed',
        execution_status: 'COMPLETED',
        failed_items: 1,
        counts_unknown: 'encrypted: key k1 not held',
      },
      {
        ...base,
        batch_id: 'run-1/batch/review',
        status: 'failed',
        execution_status: 'COMPLETED',
        items: { completed: 4, failed: 1, cancelled: 0, total: 5 },
        failed_items: 1,
        user_id: 'alice',
        lead_run_id: 'run-1',
        started_at: '2025-01-01T00:00:00.000Z',
      },
      {
        ...base,
        batch_id: 'batch-1',
        status: 'terminated',
        status_source: 'execution',
        execution_status: 'TERMINATED',
        counts_unknown: 'terminated: test over',
        started_at: '2024-12-30T00:00:00.000Z',
      },
    ];
    expect(renderBatchList(batches, now)).toEqual([
      'BATCH ID            STATUS        DONE/FAILED/TOTAL  USER     LEAD RUN  AGE  NOTE',
      'batch-4             running                       -  default  -         45s',
      'batch-3             failed                    ?/1/?  default  -         45s  encrypted: key k1 not held',
      'run-1/batch/review  failed                    4/1/5  alice    run-1      1h',
      'batch-1             (terminated)                  ?  default  -          2d  terminated: test over',
      '-: still running; its counts: subagents batch status <batch-id>',
      "(status): Temporal's execution status, for batches that reported no end of their own",
    ]);
    expect(renderBatchList([batches[2]], now)[0]).toBe(
      'BATCH ID            STATUS  DONE/FAILED/TOTAL  USER   LEAD RUN  AGE',
    );
    expect(renderBatchList([], now)).toEqual(['(no batches)']);
  });
});

describe('the listing both commands share', () => {
  it('aligns the columns asked for to the right', () => {
    expect(
      tableLines(
        ['NAME', 'N', 'NOTE'],
        [
          ['a', '10', ''],
          ['bb', '2', 'x'],
        ],
        [1],
      ),
    ).toEqual(['NAME   N  NOTE', 'a     10', 'bb     2  x']);
  });

  it('explains a refused query when the server names a search attribute, on the error or its cause', () => {
    const query = "WorkflowType = 'batchWorkflow' AND UserId = 'x'";
    const refused = refusedQuery(
      'batch list',
      new Error('Failed to list workflows', {
        cause: new Error('3 INVALID_ARGUMENT: invalid query: invalid search attribute: UserId'),
      }),
      query,
    );
    expect(refused).toBeInstanceOf(UsageError);
    expect(refused.message).toBe(
      `batch list: the server refused ${JSON.stringify(query)} (3 INVALID_ARGUMENT: invalid query: invalid ` +
        'search attribute: UserId); register the search attributes with `temporal operator search-attribute ' +
        'create --name LeadRunId --type Keyword --name SubagentType --type Keyword --name DelegationDepth ' +
        '--type Int --name SubagentStatus --type Keyword --name StopReason --type Keyword --name TotalTokens ' +
        '--type Int --name UserId --type Keyword --name FailedItems --type Int --name TotalCostUsd --type Double ' +
        '--name ForkedFrom --type Keyword --name ForkTurn --type Keyword` (the dev server registers them itself)',
    );
    const other = new Error('14 UNAVAILABLE: connection refused');
    expect(refusedQuery('list', other, query)).toBe(other);
  });
});
