/**
 * An ACP agent's permission requests (`session/request_permission`), decided by the run's guardrail policy for
 * the subagent: its built-in evaluator (allowlist or rules) over a request built from the tool call. Nobody can
 * be asked from inside the activity, so an `ask`, a module policy or no policy at all refuses: deny by default.
 *
 * What the rules see: `tool` is the call's ACP kind (read, edit, delete, move, search, execute, think, fetch,
 * switch_mode, other); `args` are the fields of its raw input, with `title` (the agent's words for the call)
 * added when the input has no field of that name. Pure.
 */
import { builtinEvaluator, type GuardrailPolicy } from '../../../contracts/guardrail-rules';
import type { GuardrailDecision, GuardrailRequest } from '../../../contracts/guardrails';
import type { Acp } from './sdk';
import type { AcpToolCallInfo } from './step-log';

/** How the worker answered one request, and the step that records it. */
export interface PermissionAnswer {
  outcome: Acp.RequestPermissionOutcome;
  allowed: boolean;
  /** The step log's line: what was asked, the decision and why, the option answered. */
  step: string;
}

/** Who asks: the provider (its name stands for the agent in the request) and the delegation. */
export interface PermissionAsker {
  provider: string;
  delegation_id: string;
}

export const NO_POLICY_REASON =
  'no guardrail policy applies to this subagent, and an ACP agent is refused every permission by default';
export const MODULE_POLICY_REASON =
  'the guardrail policy is a module, which cannot decide inside the ACP activity: refused';

/** The guardrail request for a tool call the agent asks permission for. */
export function permissionGuardrailRequest(
  toolCallId: string,
  info: AcpToolCallInfo,
  asker: PermissionAsker,
): GuardrailRequest {
  const { rawInput, title } = info;
  let args: Record<string, unknown>;
  if (rawInput !== null && typeof rawInput === 'object' && !Array.isArray(rawInput)) {
    args = { ...(rawInput as Record<string, unknown>) };
  } else {
    args = rawInput === undefined ? {} : { input: rawInput };
  }
  if (title !== undefined && !Object.hasOwn(args, 'title')) args.title = title;
  return {
    tool: info.kind ?? 'other',
    args,
    call_id: toolCallId,
    agent: `acp:${asker.provider}`,
    run_id: asker.delegation_id,
    user_id: '',
  };
}

/** Decides the agent's permission requests of one run under `policy` (its rules compiled once). */
export function permissionDecider(
  policy: GuardrailPolicy | undefined,
  asker: PermissionAsker,
): (request: Acp.RequestPermissionRequest, known: AcpToolCallInfo | undefined) => PermissionAnswer {
  const evaluate = policy === undefined ? undefined : builtinEvaluator(policy);
  return (request, known) => {
    const info = mergeInfo(known, request.toolCall);
    const decision = decide(
      policy,
      evaluate,
      permissionGuardrailRequest(request.toolCall.toolCallId, info, asker),
    );
    return answer(request.options, decision, info);
  };
}

function decide(
  policy: GuardrailPolicy | undefined,
  evaluate: ((request: GuardrailRequest) => GuardrailDecision) | undefined,
  request: GuardrailRequest,
): GuardrailDecision {
  if (policy === undefined) return { decision: 'deny', reason: NO_POLICY_REASON, policy_id: 'acp-default' };
  if (evaluate === undefined)
    return { decision: 'deny', reason: MODULE_POLICY_REASON, policy_id: 'acp-default' };
  const decided = evaluate(request);
  if (decided.decision !== 'ask') return decided;
  return {
    decision: 'deny',
    reason: `${decided.reason}; the policy asks a person, and nobody can be asked from inside the ACP activity: refused`,
    policy_id: decided.policy_id,
  };
}

/** The option that carries `decision`: a one-time one first (the narrowest), else the standing one. */
function pick(
  options: readonly Acp.PermissionOption[],
  kinds: readonly Acp.PermissionOptionKind[],
): Acp.PermissionOption | undefined {
  for (const kind of kinds) {
    const option = options.find((candidate) => candidate.kind === kind);
    if (option !== undefined) return option;
  }
  return undefined;
}

const ALLOW_KINDS = ['allow_once', 'allow_always'] as const;
const REJECT_KINDS = ['reject_once', 'reject_always'] as const;

function answer(
  options: readonly Acp.PermissionOption[],
  decision: GuardrailDecision,
  info: AcpToolCallInfo,
): PermissionAnswer {
  const wanted = decision.decision === 'allow';
  // An allow the agent offers no option for is a refusal; a refusal it offers none for cancels the request.
  const chosen = (wanted ? pick(options, ALLOW_KINDS) : undefined) ?? pick(options, REJECT_KINDS);
  const allowed = chosen !== undefined && (chosen.kind === 'allow_once' || chosen.kind === 'allow_always');
  const what = `${info.kind ?? 'other'} "${info.title ?? 'untitled'}"`;
  const answered =
    chosen === undefined ? 'answered cancelled (no option to refuse)' : `answered "${chosen.name}"`;
  const unoffered = wanted && !allowed ? ' (the agent offered no option to allow it)' : '';
  return {
    outcome:
      chosen === undefined ? { outcome: 'cancelled' } : { outcome: 'selected', optionId: chosen.optionId },
    allowed,
    step: `${allowed ? 'allowed' : 'refused'} ${what}${unoffered}: ${decision.reason} [${decision.policy_id}]; ${answered}`,
  };
}

/** What the request says of the call over what the turn said of it before. */
function mergeInfo(known: AcpToolCallInfo | undefined, update: Acp.ToolCallUpdate): AcpToolCallInfo {
  const info: AcpToolCallInfo = { ...known };
  if (typeof update.title === 'string') info.title = update.title;
  if (typeof update.kind === 'string') info.kind = update.kind;
  if (typeof update.name === 'string') info.name = update.name;
  if (update.rawInput !== undefined) info.rawInput = update.rawInput;
  return info;
}
