/**
 * Guardrails in an agent's run (issue 31): every tool call the skills' policy let through is decided before it
 * runs — by a built-in provider here in the workflow (pure: contracts/guardrail-rules.ts), or by the run's
 * module in a local activity whose answer is in history. A denial is the call's tool result
 * (`deniedToolText`), never a run; an `ask` goes to the agent's approver (workflows/approvals.ts) or, with none
 * attached, becomes what `unattended` says.
 *
 * Gated by the input's `guardrails` field, not a `patched()` marker: only a starter that knows guardrails sets it,
 * and only when a policy is in force, so every history from before (or of a run without guardrails) has none and
 * takes no decision, while a run that has it always did; the input is part of history, so a replay decides as the
 * run did. Built-in decisions follow from the input alone, a module's from its recorded local activity, a person's
 * from the approvals side's recorded Update: a replay never asks again, and since the decisions of a response are
 * all taken before any of its calls start, a crash never runs a call that was denied.
 */
import { ActivityFailure, isCancellation, log } from '@temporalio/workflow';
import { localActivities } from './local-activities';
import type { ProjectActivities } from '../activities';
import {
  builtinEvaluator,
  checkedDecision,
  modulePolicyId,
  requestArgs,
  unattendedDecision,
  type BuiltinEvaluator,
  type GuardrailPolicy,
  type RunGuardrailsSettings,
} from '../contracts/guardrail-rules';
import {
  approvalTimedOutReason,
  deniedToolText,
  personDeniedReason,
  type ApprovalOutcome,
  type GuardrailDecision,
  type GuardrailRequest,
} from '../contracts/guardrails';
import type { ToolCall, ToolMessage } from '../contracts/messages';
import type { ScreenedCall } from '../contracts/run-skills';
import { recordGuardrailDecision } from './metrics';

// A policy may read a file or ask a service: a local activity (one marker in history), not retried — what it
// threw is its answer, and `fail_closed` decides what that means.
const { evaluateGuardrailModule } = localActivities<ProjectActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 1 },
});

/** Who is asking: the run, its user, and the agent whose calls these are. */
export interface GuardrailSubject {
  runId: string;
  userId: string;
  agent: string;
}

/** The asking side, as the agent loop holds it (workflows/agent-loop.ts `approvals`). */
export interface Approver {
  ask(call: ToolCall, decision: GuardrailDecision): Promise<ApprovalOutcome>;
}

/** What the run's event log hears of the decisions: a call kept from running, one a person approved. */
export interface DecisionListener {
  denied(call: ToolCall, decision: GuardrailDecision): void;
  approved(call: ToolCall, decision: GuardrailDecision, approval: { by: string; note?: string }): void;
}

/** The guardrails of one agent's run. */
export class AgentGuardrails {
  private readonly builtin: BuiltinEvaluator | undefined;
  private readonly builtinProblem: string | undefined;

  constructor(
    private readonly policy: GuardrailPolicy,
    private readonly settings: RunGuardrailsSettings,
    private readonly subject: GuardrailSubject,
    private readonly listener?: DecisionListener,
  ) {
    try {
      this.builtin = builtinEvaluator(policy);
    } catch (err) {
      // A pattern RE2 refuses reached the input (the config check refuses them): fail_closed decides.
      this.builtinProblem = err instanceof Error ? err.message : String(err);
    }
  }

  /**
   * A response's calls decided, in the model's order, on top of what the skills' policy said (`screened`): a call
   * it refused is not asked about. Returns the screen with each denied call's refusal filled in.
   */
  async screen(
    calls: readonly ToolCall[],
    screened: readonly ScreenedCall[] | undefined,
    approver: Approver | undefined,
  ): Promise<ScreenedCall[]> {
    const attended = this.settings.no_approver ? undefined : approver;
    return Promise.all(
      calls.map(async (call, i): Promise<ScreenedCall> => {
        const before = screened?.[i] ?? {};
        if (before.refusal !== undefined) return before;
        const decided = await this.decide(call, attended);
        if (decided.decision === 'allow') return before;
        this.listener?.denied(call, decided);
        const refusal: ToolMessage = {
          role: 'tool',
          tool_call_id: call.id,
          name: call.name,
          content: deniedToolText(call.name, decided.reason, decided.policy_id),
          is_error: true,
        };
        return { ...before, refusal };
      }),
    );
  }

  /** One call's final decision: allow or deny (an `ask` answered by a person, or by `unattended`). */
  private async decide(call: ToolCall, approver: Approver | undefined): Promise<GuardrailDecision> {
    const request: GuardrailRequest = {
      tool: call.name,
      args: requestArgs(call.args),
      call_id: call.id,
      agent: this.subject.agent,
      run_id: this.subject.runId,
      user_id: this.subject.userId,
    };
    const decision = await this.evaluate(request);
    recordGuardrailDecision(decision, call.name);
    if (decision.decision !== 'ask') return decision;
    if (approver === undefined) return unattendedDecision(this.policy, decision);
    const outcome = await approver.ask(call, decision);
    if (outcome.approved) {
      this.listener?.approved(call, decision, {
        by: outcome.by ?? 'a person',
        ...(outcome.note !== undefined && { note: outcome.note }),
      });
      return { ...decision, decision: 'allow' };
    }
    const reason =
      outcome.how === 'timed_out'
        ? approvalTimedOutReason(this.settings.approval_timeout_seconds)
        : personDeniedReason(outcome.by, outcome.note);
    return { decision: 'deny', reason, policy_id: decision.policy_id };
  }

  /** The provider's decision; a provider that fails is `fail_closed`'s. */
  private async evaluate(request: GuardrailRequest): Promise<GuardrailDecision> {
    if (this.builtin) {
      try {
        return this.builtin(request);
      } catch (err) {
        return this.failed(err instanceof Error ? err.message : String(err), this.policy.provider);
      }
    }
    if (this.builtinProblem !== undefined) return this.failed(this.builtinProblem, this.policy.provider);
    const policyId = modulePolicyId(this.policy);
    try {
      const answered = await evaluateGuardrailModule.executeWithOptions(
        {
          startToCloseTimeout: '30 seconds',
          retry: { maximumAttempts: 1 },
          summary: `guardrail: ${request.tool}`,
        },
        [{ module: this.policy.module ?? '', export: this.policy.export ?? 'provider', request }],
      );
      if ('error' in answered) return this.failed(answered.error, policyId);
      const checked = checkedDecision(answered.answer, policyId);
      return 'problem' in checked
        ? this.failed(`guardrail provider ${policyId} ${checked.problem}`, policyId)
        : checked;
    } catch (err) {
      if (!(err instanceof ActivityFailure) || isCancellation(err)) throw err;
      return this.failed(
        `guardrail provider ${policyId} failed: ${err.cause?.message ?? err.message}`,
        policyId,
      );
    }
  }

  private failed(problem: string, policyId: string): GuardrailDecision {
    log.warn('guardrail provider failed', {
      agent: this.subject.agent,
      problem,
      fail_closed: this.policy.fail_closed,
    });
    return this.policy.fail_closed
      ? {
          decision: 'deny',
          reason: `the guardrail provider failed (${problem}); guardrails.fail_closed`,
          policy_id: policyId,
        }
      : {
          decision: 'allow',
          reason: `the guardrail provider failed (${problem}); allowed (fail_closed: false)`,
          policy_id: policyId,
        };
  }
}
