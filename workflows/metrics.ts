/**
 * The metrics a workflow knows first: how a delegation and a lead run ended, how long a slot request waited.
 * Emitted through the SDK's workflow metric meter, which hands them to the worker's runtime by a sink and
 * drops them while a workflow replays: a worker that replays a history counts nothing twice, and emitting
 * adds no command to history (replay-safe wherever it is called). The worker adds `namespace`, `task_queue`
 * and `workflow_type` to each.
 *
 * The instruments are made at each call, never at import: the module is preloaded outside any workflow
 * (worker/worker.ts, PRELOADED_MODULES), where the meter may not be used.
 */
import { metricMeter } from '@temporalio/workflow';
import type { AdmissionPool } from '../contracts/admission';
import type { ApprovalEnd } from '../contracts/approvals';
import type { LeadRunResult } from '../contracts/lead';
import type { GuardrailDecision } from '../contracts/guardrails';
import {
  ADMISSION_WAIT_SECONDS,
  APPROVAL_WAIT_SECONDS,
  DELEGATIONS,
  GUARDRAIL_DECISIONS_METRIC,
  LEAD_RUNS,
  NO_STOP_REASON,
} from '../contracts/metrics';
import type { SubagentResult } from '../contracts/subagent';

/** A delegation that ended, as the delegating workflow took its result: status, stop reason, agent type. */
export function recordDelegationEnd(
  result: Pick<SubagentResult, 'status' | 'stop_reason' | 'admission_failure'>,
  agentType: string,
): void {
  metricMeter.createCounter(DELEGATIONS, 'delegations', 'Delegations that ended').add(1, {
    agent_type: agentType,
    status: result.status,
    stop_reason: result.stop_reason ?? NO_STOP_REASON,
    admission_failure: result.admission_failure === true ? 'true' : 'false',
  });
}

/** A lead run that ended, by its result's status and stop reason. */
export function recordLeadRunEnd(result: Pick<LeadRunResult, 'status' | 'stop_reason'>): void {
  metricMeter.createCounter(LEAD_RUNS, 'runs', 'Lead runs that ended').add(1, {
    status: result.status,
    stop_reason: result.stop_reason ?? NO_STOP_REASON,
  });
}

/**
 * A slot request's wait, from the request to its answer (`granted` or `refused`), on the workflow clock (it
 * moves with each workflow task, so a wait is known to within one task).
 */
export function recordAdmissionWait(
  pool: AdmissionPool,
  outcome: 'granted' | 'refused',
  waitedMs: number,
): void {
  metricMeter
    .createHistogram(ADMISSION_WAIT_SECONDS, 'float', 's', 'Execution slot waits, request to answer')
    .record(Math.max(0, waitedMs) / 1000, { pool, outcome });
}

/** A guardrail's decision on one tool call (the provider's: an `ask` counts as `ask`, however it was answered). */
export function recordGuardrailDecision(decision: GuardrailDecision, tool: string): void {
  metricMeter
    .createCounter(GUARDRAIL_DECISIONS_METRIC, 'decisions', 'Guardrail decisions on tool calls')
    .add(1, { decision: decision.decision, tool, policy: decision.policy_id });
}

/** A tool call's wait for a person's decision (a guardrail's `ask`), from the ask to its end, on the workflow clock. */
export function recordApprovalWait(tool: string, outcome: ApprovalEnd, waitedMs: number): void {
  metricMeter
    .createHistogram(APPROVAL_WAIT_SECONDS, 'float', 's', 'Tool calls held for approval, ask to decision')
    .record(Math.max(0, waitedMs) / 1000, { tool, outcome });
}
