/**
 * `evaluateGuardrailModule`: a custom guardrail provider (`guardrails.provider.use: ./policy.js#provider`) asked
 * about one tool call. The module is loaded with Node's `require`, as a graph agent's is (activities/graph/), so
 * it is JavaScript (TypeScript compiled to .js); its export is an object with `evaluate(request)`, or the
 * function itself, answering a decision or a promise of one. What it answers is checked in the workflow; what it
 * throws is handed back as text (the workflow applies `fail_closed`), never retried: a policy that failed once
 * would likely fail again, and a call must not wait on it.
 */
import type { GuardrailModuleAnswer, GuardrailModuleInput } from '../contracts/guardrails';

type Evaluate = (request: GuardrailModuleInput['request']) => unknown;

function evaluatorOf(module: Record<string, unknown>, name: string): Evaluate | string {
  const exported = Object.hasOwn(module, name) ? module[name] : undefined;
  if (typeof exported === 'function') return exported as Evaluate;
  if (exported !== null && typeof exported === 'object') {
    const evaluate = (exported as { evaluate?: unknown }).evaluate;
    if (typeof evaluate === 'function') return (request) => (evaluate as Evaluate).call(exported, request);
  }
  if (exported === undefined) {
    return `has no export "${name}" (its exports: ${Object.keys(module).join(', ') || 'none'})`;
  }
  return `export "${name}" is neither a function nor an object with evaluate(request)`;
}

export async function evaluateGuardrailModule(input: GuardrailModuleInput): Promise<GuardrailModuleAnswer> {
  const where = `guardrail provider ${input.module}#${input.export}`;
  let module: Record<string, unknown>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the path comes from config, as a graph module's
    module = require(input.module) as Record<string, unknown>;
  } catch (err) {
    return { error: `${where} cannot be loaded: ${(err as Error).message.split('\n')[0]}` };
  }
  const evaluate = evaluatorOf(module, input.export);
  if (typeof evaluate === 'string') return { error: `${where} ${evaluate}` };
  try {
    const answer: unknown = await evaluate(input.request);
    // Only plain data crosses into history: a decision is a small JSON object.
    return {
      answer: answer === undefined ? null : (JSON.parse(JSON.stringify(answer) ?? 'null') as unknown),
    };
  } catch (err) {
    return { error: `${where} threw: ${err instanceof Error ? err.message : String(err)}`.slice(0, 2000) };
  }
}

/** The guardrail activities of a worker. */
export function createGuardrailActivities() {
  return { evaluateGuardrailModule };
}
