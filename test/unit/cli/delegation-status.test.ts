/**
 * `status` of a subagent's fork: it reads as a subagent's, names where it came from, and lists the calls it holds
 * without offering `approve`/`deny` commands that would not take its id.
 */
import { delegationStatusLines } from '../../../cli/delegation-status';
import type { PendingApproval } from '../../../contracts/approvals';
import type { DelegationStatus } from '../../../client/delegation-status';

const held: PendingApproval = {
  ref: 'a1',
  id: 'a1',
  workflow_id: 'run-2',
  asked_by: 'general-purpose',
  tool: 'bash',
  args: 'rm -rf build/',
  call_id: 'call_1',
  reason: 'deletes files',
  policy_id: 'rules[0]',
  asked_at: '2026-12-08T01:00:00Z',
  expires_at: '2026-12-08T01:10:00Z',
  timeout_seconds: 600,
};

const status = (kind: DelegationStatus['kind'], extra: Partial<DelegationStatus>): DelegationStatus => ({
  workflow_id: 'run-2',
  kind,
  is:
    kind === 'subagent_fork'
      ? 'a fork of subagent run-1/task/b, a run of its own'
      : 'a subagent of run run-1',
  state: 'open',
  execution_status: 'RUNNING',
  progress: { state: 'running', turns: 2, last_seq: 4, approvals: [held] },
  see: ['its steps: subagents steps run-2'],
  ...extra,
});

describe('delegationStatusLines', () => {
  it("lists a fork's held calls, and says approve and deny do not take its id", () => {
    const lines = delegationStatusLines(status('subagent_fork', { forked_from: 'run-1/task/b' }));
    expect(lines[0]).toBe('run-2: running, 2 turns');
    expect(lines).toContain('run-2 waits for a person: 1 tool call held for approval');
    expect(lines.some((line) => line.startsWith('approval a1 (general-purpose): bash rm -rf build/'))).toBe(
      true,
    );
    expect(lines.some((line) => line.includes('subagents approve'))).toBe(false);
    expect(lines).toContain(
      "approve and deny do not take a fork's id yet: the calls are denied when their time runs out",
    );
    expect(lines).toContain(
      'run-2 is a fork of subagent run-1/task/b, a run of its own; its steps: subagents steps run-2',
    );
  });

  it("offers a subagent's held calls to its lead run's approve and deny", () => {
    const lines = delegationStatusLines(status('subagent', { lead_run_id: 'run-1' }));
    expect(lines.some((line) => line.includes('subagents approve run-1'))).toBe(true);
  });
});
