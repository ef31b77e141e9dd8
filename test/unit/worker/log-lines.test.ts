import { runInNewContext } from 'node:vm';
import type { LogEntry } from '@temporalio/worker';
import { SUBAGENT_TIMED_OUT_PREFIX } from '../../../contracts/subagent';
import { logLines } from '../../../worker/runtime';

const AT = 1_700_000_000_000n * 1_000_000n;
const TIME = new Date(1_700_000_000_000).toISOString();

/** What the Rust core forwards when a query's caller stopped waiting before the worker answered. */
const QUERY_NOT_FOUND: LogEntry = {
  level: 'WARN',
  message: 'Query not found when attempting to respond to it',
  timestampNanos: AT,
  meta: {
    sdkComponent: 'core',
    target: 'temporalio_sdk_core::worker::workflow',
    error:
      'Status { code: NotFound, message: "query task not found, or already expired", details: b"\\x08\\x05", ' +
      'metadata: MetadataMap { headers: {"content-type": "application/grpc", "server": "temporal"} }, ' +
      'source: None }'.repeat(3),
  },
};

/** What workflows/admission/leases.ts logs when a worker's lease expires. */
const LEASE_GIVEN_UP: LogEntry = {
  level: 'WARN',
  message: 'admission lease given up: its worker stopped reporting',
  timestampNanos: AT,
  meta: {
    sdkComponent: 'workflow',
    lease: 'lease-7',
    identity: '4242@host-a',
    spare: 2,
    namespace: 'default',
    taskQueue: 'subagents',
    workflowId: 'subagents-admission/subagents',
    workflowType: 'admissionWorkflow',
    runId: '0190-aaaa',
  },
};

describe('logLines', () => {
  it('says a late query answer in one readable line, the SDK text only at DEBUG', () => {
    const lines = logLines(QUERY_NOT_FOUND, 'WARN');
    expect(lines).toEqual([
      `${TIME} [WARN] a query was answered after its caller had stopped waiting (a busy worker answers late; ` +
        'nothing is lost, the next query is answered)',
    ]);
    expect(lines[0]).not.toMatch(/Status|NotFound/);
    const debug = logLines(QUERY_NOT_FOUND, 'DEBUG');
    expect(debug).toHaveLength(2);
    expect(debug[0]).toBe(lines[0]);
    expect(debug[1]).toMatch(
      /^\S+ \[DEBUG\] Query not found when attempting to respond to it \{.*code: NotFound/,
    );
  });

  it('says a given-up admission lease in one line naming the worker and the slots', () => {
    expect(logLines(LEASE_GIVEN_UP, 'INFO')).toEqual([
      `${TIME} [WARN] admission on task queue "subagents": 4242@host-a stopped reporting, so its lease is ` +
        'given up and its 2 spare slots are free again',
    ]);
    expect(logLines(LEASE_GIVEN_UP, 'TRACE')[1]).toMatch(
      /^\S+ \[DEBUG\] admission lease given up: its worker stopped reporting \{.*lease: 'lease-7'/,
    );
  });

  it("leaves out a subagent's reported timeout, its error from this realm or from a workflow context's", () => {
    const failed = (error: unknown): LogEntry => ({
      level: 'WARN',
      message: 'Workflow failed',
      timestampNanos: AT,
      meta: { sdkComponent: 'worker', workflowType: 'subagentWorkflow', error },
    });
    const text = `${SUBAGENT_TIMED_OUT_PREFIX}Execution timed out after 1 seconds`;
    // A worker running its workflows in the main thread logs the workflow context's Error: another realm's.
    const otherRealm: unknown = runInNewContext('new Error(text)', { text });
    expect(otherRealm instanceof Error).toBe(false);
    expect(logLines(failed(new Error(text)), 'INFO')).toEqual([]);
    expect(logLines(failed(otherRealm), 'INFO')).toEqual([]);
    expect(logLines(failed(new Error('something else broke')), 'INFO')).toHaveLength(1);
  });

  it('prints any other log whole, on one line, and leaves out the activities-only warning', () => {
    const other: LogEntry = {
      level: 'ERROR',
      message: 'Something else',
      timestampNanos: AT,
      meta: { sdkComponent: 'core', detail: 'x' },
    };
    expect(logLines(other, 'WARN')).toEqual([
      `${TIME} [ERROR] Something else { sdkComponent: 'core', detail: 'x' }`,
    ]);
    const warning = {
      ...other,
      level: 'WARN' as const,
      message: 'No workflows registered, not polling for workflow tasks',
    };
    expect(logLines(warning, 'WARN')).toEqual([]);
  });
});
