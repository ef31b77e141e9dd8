/**
 * Guardrails (issue 31): what an `allow` from a built-in provider costs one tool call. Both run inside the
 * workflow with no activity (workflows/guardrails.ts), so the decision itself is the whole overhead: measured
 * here on the pure evaluation, per call, for the allowlist and for 20 rules whose patterns all miss (the worst
 * `allow`: every rule is tried), and once per agent for compiling the rules.
 */
import { performance } from 'node:perf_hooks';
import { builtinEvaluator, requestArgs, type GuardrailPolicy } from '../contracts/guardrail-rules';
import { formatTable, msRow, type BenchResult } from './stats';

const CALLS = 2000;

const allowlist: GuardrailPolicy = {
  provider: 'allowlist',
  allowed_tools: ['bash', 'ls', 'read_file', 'write_file', 'str_replace', 'task', 'github__*'],
  denied_tools: ['github__delete_repo'],
  fail_closed: true,
  unattended: 'deny',
};

const rules: GuardrailPolicy = {
  provider: 'rules',
  rules: Array.from({ length: 20 }, (_, i) => ({
    tool: i % 2 === 0 ? 'bash' : '*',
    args: { command: `\\bforbidden_${i}\\b|^curl\\s+.*evil${i}\\.example` },
    decision: 'deny' as const,
  })),
  fail_closed: true,
  unattended: 'deny',
};

function perCall(policy: GuardrailPolicy): number[] {
  const evaluate = builtinEvaluator(policy)!;
  const command = `cd /workspace && ${'ls -la src && '.repeat(20)}echo done`;
  const samples: number[] = [];
  for (let i = 0; i < CALLS; i += 1) {
    const started = performance.now();
    // What the workflow does per call: parse the arguments, decide.
    const decision = evaluate({
      tool: 'bash',
      args: requestArgs(JSON.stringify({ command: `${command} ${i}` })),
      call_id: `c${i}`,
      agent: 'lead',
      run_id: 'bench',
      user_id: 'default',
    });
    samples.push(performance.now() - started);
    if (decision.decision !== 'allow') throw new Error(`expected allow, got ${decision.decision}`);
  }
  return samples;
}

export function benchGuardrails(): Promise<BenchResult[]> {
  const compile: number[] = [];
  for (let i = 0; i < 50; i += 1) {
    const started = performance.now();
    builtinEvaluator(rules);
    compile.push(performance.now() - started);
  }
  return Promise.resolve([
    msRow('guardrails: allow per call (allowlist)', perCall(allowlist)),
    msRow('guardrails: allow per call (20 rules, none matching)', perCall(rules)),
    msRow('guardrails: compile 20 rules (once per agent run)', compile),
  ]);
}

if (require.main === module) {
  void benchGuardrails().then((results) => process.stdout.write(`${formatTable(results)}\n`));
}
