/**
 * Guardrails on tool calls (issue 31): a provider decides each call before it runs — allow, deny, or ask a
 * person — and the decision is workflow state, so a replay never asks again and a crash never runs a denied
 * call. This module holds the shapes the deciding side (the providers, `workflows/guardrails.ts`) and the asking
 * side (approvals, `workflows/approvals.ts`) share, and the exact texts the model reads. Pure: workflow code
 * may import it.
 */

export const GUARDRAIL_DECISIONS = ['allow', 'deny', 'ask'] as const;
export type GuardrailDecisionKind = (typeof GUARDRAIL_DECISIONS)[number];

/** What a provider is asked about one tool call. */
export interface GuardrailRequest {
  /** The tool's name as the model called it (`bash`, `task`, `<server>__<tool>` for MCP). */
  tool: string;
  /** The call's arguments: the parsed JSON object, or the raw text when it is not one. */
  args: Record<string, unknown> | string;
  /** The model's id for the call. */
  call_id: string;
  /** `lead`, or the subagent's type. */
  agent: string;
  /** The lead run's id and this run's user. */
  run_id: string;
  user_id: string;
}

/** A provider's answer. */
export interface GuardrailDecision {
  decision: GuardrailDecisionKind;
  /** Why, in words a model (and a person approving) can act on. */
  reason: string;
  /** Which policy decided: the provider's name and, for rules, the rule's index or id. */
  policy_id: string;
}

/** How an `ask` ended. */
export interface ApprovalOutcome {
  approved: boolean;
  /** `approved`, `denied` by a person, or `timed_out` (no decision came within approval_timeout_seconds). */
  how: 'approved' | 'denied' | 'timed_out';
  /** Who decided (the CLI's user or the client's identity); absent on a timeout. */
  by?: string;
  /** ISO 8601 (workflow clock). */
  at: string;
  /** The approver's note, or the denier's reason. */
  note?: string;
}

/** The tool result of a denied call: what the model reads instead of the tool's output. */
export function deniedToolText(tool: string, reason: string, policyId: string): string {
  return `Guardrail denied: ${tool} — ${reason} (${policyId})`;
}

/** The reason a call a person denied is denied with (the model reads it). */
export function personDeniedReason(by: string | undefined, note: string | undefined): string {
  return `denied by ${by ?? 'a person'}${note ? `: ${note}` : ''}`;
}

/** The reason an `ask` that timed out is denied with. */
export function approvalTimedOutReason(timeoutSeconds: number): string {
  return `no decision came within ${timeoutSeconds} s`;
}

/** What the guardrail module activity is asked: one call, for the module at `module` (absolute) and its export. */
export interface GuardrailModuleInput {
  module: string;
  export: string;
  request: GuardrailRequest;
}

/** What the module answered (checked in the workflow), or why it gave no answer (it threw, or did not load). */
export type GuardrailModuleAnswer = { answer: unknown } | { error: string };
