import {
  approvalArgsLine,
  approvalRef,
  approvalTarget,
  approvalTimerSummary,
  approveCommandLine,
  approverProblem,
  denyCommandLine,
  denyReasonProblem,
  isApprovalUsageMistake,
  noteProblem,
} from '../../../contracts/approvals';

describe('a held call as a person reads it', () => {
  it('shows the value alone when the call has one argument of text', () => {
    expect(approvalArgsLine(JSON.stringify({ command: 'rm -rf build/' }))).toBe('rm -rf build/');
  });

  it('shows several arguments as JSON on one line', () => {
    expect(approvalArgsLine('{\n  "path": "a.txt",\n  "content": "x\\ny"\n}')).toBe(
      '{"path":"a.txt","content":"x\\ny"}',
    );
    expect(approvalArgsLine(JSON.stringify({ count: 3 }))).toBe('{"count":3}');
  });

  it('keeps arguments that are not JSON as sent, on one line, without control characters', () => {
    expect(approvalArgsLine('rm\n  -rf\tbuild/\u001b[31m')).toBe('rm -rf build/[31m');
  });

  it('caps a long call, and says it was cut', () => {
    const line = approvalArgsLine(JSON.stringify({ command: 'x'.repeat(900) }));
    expect([...line]).toHaveLength(500);
    expect(line.endsWith('…')).toBe(true);
  });

  it('names the wait’s timer by the call: `approval: bash rm -rf build/`, capped', () => {
    expect(approvalTimerSummary('bash', 'rm -rf build/')).toBe('approval: bash rm -rf build/');
    const long = approvalTimerSummary('bash', 'y'.repeat(300));
    expect(long.startsWith('approval: bash yyy')).toBe(true);
    expect([...long].length).toBeLessThanOrEqual(90);
  });
});

describe('refs and commands', () => {
  it('names the lead’s own calls a1, a subagent’s after its delegation ids', () => {
    expect(approvalRef('run-1', 'run-1', 'a1')).toBe('a1');
    expect(approvalRef('run-1', 'run-1/task/call_1', 'a2')).toBe('call_1/a2');
    expect(approvalRef('run-1', 'run-1/task/call_1/task/call_7', 'a1')).toBe('call_1/call_7/a1');
    expect(approvalTarget('run-1', 'call_1/call_7/a1')).toEqual({
      workflowId: 'run-1/task/call_1/task/call_7',
      id: 'a1',
    });
    expect(approvalTarget('run-1', 'a3')).toEqual({ workflowId: 'run-1', id: 'a3' });
  });

  it('writes the two commands, --call only when given', () => {
    expect(approveCommandLine('run-1')).toBe('subagents approve run-1');
    expect(approveCommandLine('run-1', 'call_1/a1', '--address h:1')).toBe(
      'subagents approve run-1 --call call_1/a1 --address h:1',
    );
    expect(denyCommandLine('run-1')).toBe('subagents deny run-1 --reason "<why>"');
    expect(denyCommandLine('run-1', 'a2')).toBe('subagents deny run-1 --call a2 --reason "<why>"');
  });
});

describe('what a decision must carry', () => {
  it('needs an approver', () => {
    expect(approverProblem('alice@host')).toBeUndefined();
    expect(approverProblem('')).toBe('the decision names no approver (by)');
    expect(approverProblem(undefined)).toBe('the decision names no approver (by)');
    expect(approverProblem('x'.repeat(201))).toBe("the approver's name is longer than 200 characters");
  });

  it('takes an approval without a note, never a deny without a reason', () => {
    expect(noteProblem(undefined)).toBeUndefined();
    expect(noteProblem('fine')).toBeUndefined();
    expect(noteProblem(3)).toBe('the note is not text');
    expect(noteProblem('n'.repeat(2001))).toBe('the note is 2001 characters long, above the 2000 allowed');
    expect(denyReasonProblem('too risky')).toBeUndefined();
    expect(denyReasonProblem(' \n')).toBe('the reason is empty (say why, with --reason: the agent reads it)');
    expect(denyReasonProblem(undefined)).toBe(
      'the reason is missing (say why, with --reason: the agent reads it)',
    );
  });

  it('tells a mistake in the request (exit 2) from the run’s state (exit 1)', () => {
    expect(isApprovalUsageMistake('InvalidDecision')).toBe(true);
    expect(isApprovalUsageMistake('UnknownApproval')).toBe(true);
    expect(isApprovalUsageMistake('AmbiguousApproval')).toBe(true);
    expect(isApprovalUsageMistake('NotWaitingForApproval')).toBe(false);
    expect(isApprovalUsageMistake('ApprovalClosed')).toBe(false);
  });
});
