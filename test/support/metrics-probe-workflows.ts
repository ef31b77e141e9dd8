/**
 * The project's workflows and one more, for the metrics test: a workflow that reports delegation ends, a lead
 * run end and admission waits through workflows/metrics.ts, as the delegating workflows do, so the test can
 * read them back from a worker's Prometheus endpoint.
 */
import type { SubagentResult } from '../../contracts/subagent';
import { recordAdmissionWait, recordDelegationEnd, recordLeadRunEnd } from '../../workflows/metrics';

export * from '../../workflows';

export interface MetricsProbeInput {
  delegations: { agent_type: string; result: Pick<SubagentResult, 'status' | 'stop_reason'> }[];
  admission_waits_ms: number[];
}

export async function metricsProbeWorkflow(input: MetricsProbeInput): Promise<void> {
  for (const { agent_type: agentType, result } of input.delegations) recordDelegationEnd(result, agentType);
  for (const waited of input.admission_waits_ms) recordAdmissionWait('subagents', 'granted', waited);
  recordLeadRunEnd({ status: 'completed' });
}
