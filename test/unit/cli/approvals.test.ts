import type { WorkflowClient } from '@temporalio/client';
import { cliApprover, decisionLine } from '../../../cli/approval-commands';
import { pendingApprovalLines } from '../../../cli/approvals';
import { ApprovalRefusedError, decisionTarget } from '../../../client/approvals';
import type { PendingApproval } from '../../../contracts/approvals';

const held = (ref: string, args: string, workflowId = 'run-1'): PendingApproval => ({
  ref,
  id: ref.split('/').pop() ?? ref,
  workflow_id: workflowId,
  asked_by: ref.includes('/') ? 'bash' : 'lead',
  tool: 'bash',
  args,
  call_id: 'call_x',
  reason: 'deletes files',
  policy_id: 'rules[0]',
  asked_at: '2026-01-01T00:00:00.000Z',
  expires_at: '2026-01-01T01:00:00.000Z',
  timeout_seconds: 3600,
});

describe('held calls in status and the live tree', () => {
  it('shows one call of the lead with the two commands, no --call', () => {
    expect(pendingApprovalLines('run-1', [held('a1', 'rm -rf build/')])).toEqual([
      'approval a1 (lead): bash rm -rf build/ — deletes files (rules[0]); denied at 2026-01-01T01:00:00.000Z if undecided',
      '  approve: subagents approve run-1',
      '  deny:    subagents deny run-1 --reason "<why>"',
    ]);
  });

  it('names each call when several wait, and a subagent’s always', () => {
    const lines = pendingApprovalLines(
      'run-1',
      [held('a1', 'rm a'), held('call_1/a1', 'rm b', 'run-1/task/call_1')],
      '--address h:1',
    );
    expect(lines).toContain('  approve: subagents approve run-1 --call a1 --address h:1');
    expect(lines).toContain(
      '  deny:    subagents deny run-1 --call call_1/a1 --reason "<why>" --address h:1',
    );
    expect(pendingApprovalLines('run-1', [held('call_1/a1', 'rm b')])[1]).toBe(
      '  approve: subagents approve run-1 --call call_1/a1',
    );
    expect(pendingApprovalLines('run-1', undefined)).toEqual([]);
  });
});

describe('where a decision goes', () => {
  const run = (pending: PendingApproval[]) => ({
    runId: 'run-1',
    leadWorkflowId: 'run-1',
    client: {} as WorkflowClient,
    pending: async () => pending,
  });

  it('to the one call waiting when none is named, in the workflow that holds it', async () => {
    expect(await decisionTarget(run([held('call_1/a1', 'rm b', 'run-1/task/call_1')]), undefined)).toEqual({
      workflowId: 'run-1/task/call_1',
      id: 'a1',
    });
  });

  it('to the lead when none waits (it says so in its words)', async () => {
    expect(await decisionTarget(run([]), undefined)).toEqual({ workflowId: 'run-1' });
  });

  it('refuses to choose among several, listing them', async () => {
    const err = await decisionTarget(run([held('a1', 'rm a'), held('a2', 'rm b')]), undefined).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApprovalRefusedError);
    expect((err as ApprovalRefusedError).kind).toBe('AmbiguousApproval');
    expect((err as ApprovalRefusedError).isUsageMistake).toBe(true);
    expect((err as Error).message).toBe(
      'run run-1 holds 2 calls for approval (a1 (lead): bash rm a; a2 (lead): bash rm b): name one with --call',
    );
  });

  it('by the name given, checked for shape first', async () => {
    expect(await decisionTarget(run([]), ' call_1/call_2/a3 ')).toEqual({
      workflowId: 'run-1/task/call_1/task/call_2',
      id: 'a3',
    });
    const err = await decisionTarget(run([]), 'a 1').catch((e: unknown) => e);
    expect((err as ApprovalRefusedError).kind).toBe('UnknownApproval');
  });
});

describe('the CLI’s words', () => {
  it('records the deciding user as $USER@host', () => {
    expect(cliApprover({ USER: 'alice' }, 'box')).toBe('alice@box');
    expect(cliApprover({ LOGNAME: 'bob' }, 'box')).toBe('bob@box');
  });

  it('says what the run recorded and what happens next', () => {
    const base = {
      ref: 'a1',
      approval_id: 'a1',
      workflow_id: 'run-1',
      asked_by: 'lead',
      tool: 'bash',
      args: 'rm -rf build/',
      by: 'alice@box',
      at: '2026-01-01T00:00:00.000Z',
    };
    expect(decisionLine('run-1', { ...base, decision: 'approved' })).toBe(
      'run-1: a1 (lead: bash rm -rf build/) approved by alice@box at 2026-01-01T00:00:00.000Z; the call runs',
    );
    expect(decisionLine('run-1', { ...base, decision: 'denied', note: 'not\ntoday' })).toBe(
      'run-1: a1 (lead: bash rm -rf build/) denied by alice@box at 2026-01-01T00:00:00.000Z (not today); ' +
        'the agent is told why and goes on',
    );
  });
});
