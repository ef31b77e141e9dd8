/**
 * The built-in guardrail providers, as pure functions over a run's settings (issue 31): the allowlist
 * (DeerFlow's `AllowlistProvider`) and first-match rules over a tool's name and arguments. A workflow evaluates
 * them itself — no activity, so an `allow` costs microseconds and the decision follows from the input alone,
 * which is in history. A custom provider (`module`) is evaluated by a local activity instead
 * (workflows/guardrails.ts). Pure: no Node APIs; rule patterns run on RE2 (contracts/patterns.ts), so no pattern
 * a user writes can pin a workflow thread.
 */
import { compileUserPattern, type UserPattern } from './patterns';
import type { GuardrailDecision, GuardrailDecisionKind, GuardrailRequest } from './guardrails';

/** One rule: the first whose tool and arguments match decides. */
export interface GuardrailRule {
  /** A tool name or a glob: `*` matches any characters (`*`, `github__*`, `write_*`). */
  tool: string;
  /** Argument name → RE2 pattern, searched in the argument's text (anchor with `^…$`); every one must match. */
  args?: Record<string, string>;
  decision: GuardrailDecisionKind;
  reason?: string;
  /** Names the rule in `policy_id` (default: `rules[<index>]`). */
  id?: string;
}

/** Where `ask` goes when no person is attached to approve (a batch item, an agent without an approver). */
export const UNATTENDED_MODES = ['deny', 'allow'] as const;
export type UnattendedMode = (typeof UNATTENDED_MODES)[number];

export const GUARDRAIL_PROVIDER_KINDS = ['allowlist', 'rules', 'module', 'none'] as const;
export type GuardrailProviderKind = (typeof GUARDRAIL_PROVIDER_KINDS)[number];

/** One agent's guardrails, resolved from the config. */
export interface GuardrailPolicy {
  /** `none`: every call allowed (an agent whose override says `enabled: false`). */
  provider: GuardrailProviderKind;
  /** allowlist: absent = every tool not denied; names or `<server>__*` / `*` globs. */
  allowed_tools?: string[];
  /** allowlist: always denied, whatever `allowed_tools` says. */
  denied_tools?: string[];
  /** rules: first match wins; no match → allow. */
  rules?: GuardrailRule[];
  /** module: the module's absolute path on the workers' machines, and the export that decides. */
  module?: string;
  export?: string;
  /** A module that throws or answers garbage: deny (true) or allow (false). */
  fail_closed: boolean;
  unattended: UnattendedMode;
}

/** A run's guardrails, carried in every workflow input of the run (lead, subagents, batches and their items). */
export interface RunGuardrailsSettings {
  /** How long an `ask` waits for a person (the approvals side reads it). */
  approval_timeout_seconds: number;
  /** The lead's policy, and every agent's without its own; absent: only the agents named in `agents`. */
  run?: GuardrailPolicy;
  /** Per-agent policies (`subagents.agents.<name>.guardrails`, `custom_agents.<name>.guardrails`): they replace `run`. */
  agents?: Record<string, GuardrailPolicy>;
  /** Set on a batch's items (and what they delegate): nobody waits on them, so `ask` goes to `unattended`. */
  no_approver?: true;
}

/** The lead agent's name in requests and per-agent lookups. */
export const LEAD_GUARDRAIL_AGENT = 'lead';

/** The policy an agent runs under, or undefined when none applies. */
export function policyFor(settings: RunGuardrailsSettings, agent: string): GuardrailPolicy | undefined {
  const own = settings.agents && Object.hasOwn(settings.agents, agent) ? settings.agents[agent] : undefined;
  const policy = own ?? settings.run;
  return policy === undefined || policy.provider === 'none' ? undefined : policy;
}

/** Longest rule pattern, in characters: RE2 runs in linear time, this bounds its memory and compile time. */
export const MAX_RULE_PATTERN_CHARS = 1000;

/** Why a tool glob cannot be used, or undefined. */
export function toolGlobProblem(glob: string): string | undefined {
  if (glob.trim() === '') return 'is empty (a tool name, or a glob such as github__*)';
  return /^[A-Za-z0-9_*.-]+$/.test(glob)
    ? undefined
    : 'is not a tool name or glob (letters, digits, _ - . and * only)';
}

/** Whether `name` matches a tool glob (`*` = any characters, the rest literal). */
export function toolGlobMatches(glob: string, name: string): boolean {
  if (!glob.includes('*')) return glob === name;
  const parts = glob.split('*');
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (!name.startsWith(first) || name.length < first.length + last.length || !name.endsWith(last))
    return false;
  let at = first.length;
  const end = name.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = name.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** Why a rule's argument pattern cannot be used (too long, or RE2 refuses it), or undefined. */
export function rulePatternProblem(pattern: string): string | undefined {
  if (pattern.length > MAX_RULE_PATTERN_CHARS) {
    return `is longer than ${MAX_RULE_PATTERN_CHARS} characters`;
  }
  const compiled = compileUserPattern(pattern);
  return 'problem' in compiled ? `is not a valid pattern: ${compiled.problem}` : undefined;
}

/** A call's arguments as a rule sees them: the parsed JSON object, or the raw text. */
export function requestArgs(raw: string): Record<string, unknown> | string {
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return parsed as Record<string, unknown>;
    }
  } catch {
    // not JSON: the raw text
  }
  return raw;
}

/** An argument's text for a pattern: strings as they are, anything else as JSON. */
function argumentText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

interface CompiledRule {
  rule: GuardrailRule;
  index: number;
  args: [name: string, pattern: UserPattern][];
}

/** A built-in provider, ready to decide calls (its patterns compiled once). */
export type BuiltinEvaluator = (request: GuardrailRequest) => GuardrailDecision;

function allowlistEvaluator(policy: GuardrailPolicy): BuiltinEvaluator {
  const denied = policy.denied_tools ?? [];
  const allowed = policy.allowed_tools;
  return (request) => {
    const deniedBy = denied.find((glob) => toolGlobMatches(glob, request.tool));
    if (deniedBy !== undefined) {
      return {
        decision: 'deny',
        reason: `tool ${request.tool} is denied (denied_tools: ${deniedBy})`,
        policy_id: 'allowlist',
      };
    }
    if (allowed !== undefined && !allowed.some((glob) => toolGlobMatches(glob, request.tool))) {
      return {
        decision: 'deny',
        reason: `tool ${request.tool} is not allowed (allowed_tools: ${allowed.join(', ') || 'none'})`,
        policy_id: 'allowlist',
      };
    }
    return { decision: 'allow', reason: 'allowed by the allowlist', policy_id: 'allowlist' };
  };
}

function compileRules(rules: readonly GuardrailRule[]): CompiledRule[] {
  return rules.map((rule, index) => ({
    rule,
    index,
    args: Object.entries(rule.args ?? {}).map(([name, source]): [string, UserPattern] => {
      const compiled = compileUserPattern(source);
      // The config check refused every pattern RE2 refuses; an input written by hand may still carry one.
      if ('problem' in compiled) throw new Error(`rules[${index}].args.${name}: ${compiled.problem}`);
      return [name, compiled];
    }),
  }));
}

function ruleMatches(compiled: CompiledRule, request: GuardrailRequest): boolean {
  if (!toolGlobMatches(compiled.rule.tool, request.tool)) return false;
  if (compiled.args.length === 0) return true;
  const { args } = request;
  if (typeof args === 'string') return false;
  return compiled.args.every(
    ([name, pattern]) => Object.hasOwn(args, name) && pattern.test(argumentText(args[name])),
  );
}

function rulesEvaluator(policy: GuardrailPolicy): BuiltinEvaluator {
  const compiled = compileRules(policy.rules ?? []);
  return (request) => {
    const match = compiled.find((candidate) => ruleMatches(candidate, request));
    if (match === undefined) return { decision: 'allow', reason: 'no rule matched', policy_id: 'rules' };
    const { rule, index } = match;
    return {
      decision: rule.decision,
      reason: rule.reason ?? `rule ${index} matched (tool ${rule.tool})`,
      policy_id: rule.id ?? `rules[${index}]`,
    };
  };
}

/** The evaluator of a built-in provider; undefined for a module (an activity decides) or `none`. */
export function builtinEvaluator(policy: GuardrailPolicy): BuiltinEvaluator | undefined {
  if (policy.provider === 'allowlist') return allowlistEvaluator(policy);
  if (policy.provider === 'rules') return rulesEvaluator(policy);
  return undefined;
}

/** The policy id a module's decisions carry when it names none, and its errors carry. */
export function modulePolicyId(policy: Pick<GuardrailPolicy, 'module' | 'export'>): string {
  return `module:${policy.module ?? '?'}#${policy.export ?? 'provider'}`;
}

/**
 * A module's answer checked: a decision, or why it is not one (the workflow then applies `fail_closed`).
 * `policy_id` may be left out (the module's name stands in).
 */
export function checkedDecision(
  value: unknown,
  fallbackPolicyId: string,
): GuardrailDecision | { problem: string } {
  if (value === null || typeof value !== 'object')
    return { problem: `answered ${describe(value)}, not a decision` };
  const { decision, reason, policy_id: policyId } = value as Record<string, unknown>;
  if (decision !== 'allow' && decision !== 'deny' && decision !== 'ask') {
    return { problem: `answered decision ${describe(decision)} (allow, deny or ask)` };
  }
  if (reason !== undefined && typeof reason !== 'string')
    return { problem: 'answered a reason that is not text' };
  if (policyId !== undefined && typeof policyId !== 'string') {
    return { problem: 'answered a policy_id that is not text' };
  }
  return {
    decision,
    reason: (reason as string | undefined)?.slice(0, 2000) || `decided by ${fallbackPolicyId}`,
    policy_id: (policyId as string | undefined)?.slice(0, 200) || fallbackPolicyId,
  };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Why an `ask` is denied where nobody can approve it (`unattended: deny`). */
export const UNATTENDED_DENY_REASON = 'no person is attached to approve it (guardrails.unattended: deny)';

/** The decision an `ask` becomes where nobody can approve it. */
export function unattendedDecision(policy: GuardrailPolicy, asked: GuardrailDecision): GuardrailDecision {
  return policy.unattended === 'deny'
    ? { decision: 'deny', reason: UNATTENDED_DENY_REASON, policy_id: asked.policy_id }
    : {
        decision: 'allow',
        reason: `${asked.reason}; allowed without approval (guardrails.unattended: allow)`,
        policy_id: asked.policy_id,
      };
}
