import {
  builtinEvaluator,
  checkedDecision,
  policyFor,
  requestArgs,
  toolGlobMatches,
  unattendedDecision,
  UNATTENDED_DENY_REASON,
  type GuardrailPolicy,
} from '../../../contracts/guardrail-rules';
import type { GuardrailRequest } from '../../../contracts/guardrails';

function request(tool: string, args: Record<string, unknown> | string = {}): GuardrailRequest {
  return { tool, args, call_id: 'c1', agent: 'lead', run_id: 'r1', user_id: 'default' };
}

const base = { fail_closed: true, unattended: 'deny' as const };

describe('tool globs', () => {
  it.each([
    ['bash', 'bash', true],
    ['bash', 'bash2', false],
    ['*', 'anything', true],
    ['github__*', 'github__create_issue', true],
    ['github__*', 'gitlab__create_issue', false],
    ['write_*', 'write_file', true],
    ['*_file', 'read_file', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'acb', false],
    ['ab*ba', 'aba', false],
  ])('%s against %s → %s', (glob, name, expected) => {
    expect(toolGlobMatches(glob, name)).toBe(expected);
  });
});

describe('the allowlist provider', () => {
  const evaluate = builtinEvaluator({
    ...base,
    provider: 'allowlist',
    allowed_tools: ['bash', 'read_file', 'github__*'],
    denied_tools: ['github__delete_repo'],
  })!;

  it('allows what it lists, MCP globs included', () => {
    expect(evaluate(request('bash')).decision).toBe('allow');
    expect(evaluate(request('github__create_issue')).decision).toBe('allow');
  });

  it('denies what it does not list, and what denied_tools names whatever allowed_tools says', () => {
    expect(evaluate(request('write_file'))).toEqual({
      decision: 'deny',
      reason: 'tool write_file is not allowed (allowed_tools: bash, read_file, github__*)',
      policy_id: 'allowlist',
    });
    expect(evaluate(request('github__delete_repo'))).toEqual({
      decision: 'deny',
      reason: 'tool github__delete_repo is denied (denied_tools: github__delete_repo)',
      policy_id: 'allowlist',
    });
  });

  it('with denied_tools alone, allows everything else', () => {
    const deny = builtinEvaluator({ ...base, provider: 'allowlist', denied_tools: ['task'] })!;
    expect(deny(request('task')).decision).toBe('deny');
    expect(deny(request('bash')).decision).toBe('allow');
  });
});

describe('the rules provider', () => {
  const policy: GuardrailPolicy = {
    ...base,
    provider: 'rules',
    rules: [
      { tool: 'bash', args: { command: '\\brm\\s+-rf\\b' }, decision: 'deny', reason: 'no rm -rf' },
      { tool: 'bash', args: { command: '^git push' }, decision: 'ask', id: 'push' },
      { tool: 'write_file', args: { path: '^/etc/' }, decision: 'deny' },
      { tool: 'github__*', decision: 'ask', reason: 'GitHub writes need a person' },
    ],
  };
  const evaluate = builtinEvaluator(policy)!;

  it('decides by the first rule whose tool and arguments match', () => {
    expect(evaluate(request('bash', { command: 'cd x && rm -rf /' }))).toEqual({
      decision: 'deny',
      reason: 'no rm -rf',
      policy_id: 'rules[0]',
    });
    expect(evaluate(request('bash', { command: 'git push origin main' }))).toEqual({
      decision: 'ask',
      reason: 'rule 1 matched (tool bash)',
      policy_id: 'push',
    });
    expect(evaluate(request('github__create_issue')).policy_id).toBe('rules[3]');
  });

  it('allows when no rule matches, and a rule on an argument the call lacks does not match', () => {
    expect(evaluate(request('bash', { command: 'ls -la' }))).toEqual({
      decision: 'allow',
      reason: 'no rule matched',
      policy_id: 'rules',
    });
    expect(evaluate(request('write_file', { content: '/etc/passwd' })).decision).toBe('allow');
    expect(evaluate(request('bash', 'not json')).decision).toBe('allow');
  });

  it('matches non-text arguments by their JSON', () => {
    const numbers = builtinEvaluator({
      ...base,
      provider: 'rules',
      rules: [{ tool: '*', args: { count: '^[0-9]{4,}$' }, decision: 'deny' }],
    })!;
    expect(numbers(request('x', { count: 12345 })).decision).toBe('deny');
    expect(numbers(request('x', { count: 12 })).decision).toBe('allow');
  });

  it('runs patterns on RE2: a pathological pattern takes no time', () => {
    const evil = builtinEvaluator({
      ...base,
      provider: 'rules',
      rules: [{ tool: 'bash', args: { command: '(a+)+b' }, decision: 'deny' }],
    })!;
    const started = Date.now();
    expect(evil(request('bash', { command: 'a'.repeat(5000) })).decision).toBe('allow');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('refuses a pattern RE2 does not take when it is built', () => {
    expect(() =>
      builtinEvaluator({
        ...base,
        provider: 'rules',
        rules: [{ tool: 'bash', args: { c: '(?=x)' }, decision: 'deny' }],
      }),
    ).toThrow(/rules\[0\]\.args\.c/);
  });
});

describe('a module answer', () => {
  it('is a decision when it is one; policy_id and reason may be left out', () => {
    expect(checkedDecision({ decision: 'deny', reason: 'no' }, 'module:/p.js#provider')).toEqual({
      decision: 'deny',
      reason: 'no',
      policy_id: 'module:/p.js#provider',
    });
  });

  it('says what is wrong with garbage', () => {
    expect(checkedDecision(null, 'm')).toEqual({ problem: 'answered null, not a decision' });
    expect(checkedDecision({ decision: 'maybe' }, 'm')).toEqual({
      problem: 'answered decision "maybe" (allow, deny or ask)',
    });
  });
});

describe('an ask with nobody to approve it', () => {
  const asked = { decision: 'ask' as const, reason: 'pushes need a person', policy_id: 'push' };

  it('is denied with the unattended reason, or allowed', () => {
    expect(unattendedDecision({ ...base, provider: 'rules' }, asked)).toEqual({
      decision: 'deny',
      reason: UNATTENDED_DENY_REASON,
      policy_id: 'push',
    });
    expect(UNATTENDED_DENY_REASON).toBe('no person is attached to approve it (guardrails.unattended: deny)');
    expect(unattendedDecision({ ...base, unattended: 'allow', provider: 'rules' }, asked).decision).toBe(
      'allow',
    );
  });
});

describe('which policy an agent runs under', () => {
  const run: GuardrailPolicy = { ...base, provider: 'allowlist', denied_tools: ['task'] };
  const strict: GuardrailPolicy = { ...base, provider: 'allowlist', allowed_tools: ['read_file'] };

  it("is its own when it has one, else the run's; `none` is no policy", () => {
    const settings = {
      approval_timeout_seconds: 60,
      run,
      agents: { reviewer: strict, free: { ...base, provider: 'none' as const } },
    };
    expect(policyFor(settings, 'lead')).toBe(run);
    expect(policyFor(settings, 'reviewer')).toBe(strict);
    expect(policyFor(settings, 'free')).toBeUndefined();
    expect(policyFor({ approval_timeout_seconds: 60, agents: { reviewer: strict } }, 'lead')).toBeUndefined();
  });
});

describe("a call's arguments", () => {
  it('are the parsed object, or the raw text', () => {
    expect(requestArgs('{"command":"ls"}')).toEqual({ command: 'ls' });
    expect(requestArgs('[1]')).toBe('[1]');
    expect(requestArgs('oops')).toBe('oops');
  });
});
