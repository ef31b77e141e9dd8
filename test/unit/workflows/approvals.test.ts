import { decisionRequestProblem } from '../../../workflows/approvals';

describe('the decision Updates’ validators, before any call is looked up', () => {
  it('takes an approval with or without a note, and a deny with a reason', () => {
    expect(decisionRequestProblem({ kind: 'approve', request: { by: 'alice' } })).toBeUndefined();
    expect(
      decisionRequestProblem({ kind: 'approve', request: { by: 'alice', note: 'ok', approval_id: 'a1' } }),
    ).toBeUndefined();
    expect(decisionRequestProblem({ kind: 'deny', request: { by: 'alice', reason: 'no' } })).toBeUndefined();
  });

  it('refuses a deny without a reason, a decision without an approver, an empty call id', () => {
    expect(decisionRequestProblem({ kind: 'deny', request: { by: 'alice', reason: '' } })).toBe(
      'the reason is empty (say why, with --reason: the agent reads it)',
    );
    expect(decisionRequestProblem({ kind: 'approve', request: { by: ' ' } })).toBe(
      'the decision names no approver (by)',
    );
    expect(decisionRequestProblem({ kind: 'approve', request: { by: 'a', approval_id: '' } })).toBe(
      'the call id is empty',
    );
    expect(decisionRequestProblem({ kind: 'approve', request: null as unknown as { by: string } })).toBe(
      'the decision is not an object',
    );
  });
});
