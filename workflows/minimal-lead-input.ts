/**
 * A lead run started by another client with its prompt alone (`{"prompt": "…"}`): its first act is a local
 * activity that returns the full input from the worker's config, recorded in history, so a replay (and every
 * execution after a continue-as-new, which carries the full input) goes on with the same input.
 */
import { patched, workflowInfo } from '@temporalio/workflow';
import { localActivities } from './local-activities';
import type { ProjectActivities } from '../activities';
import type { LeadRunInput } from '../contracts/lead';
import { isMinimalLeadRunInput, type MinimalLeadRunInput } from '../contracts/minimal-lead-input';

/** Histories recorded before a minimal input was filled: such a run failed its input check at once. */
export const MINIMAL_LEAD_INPUT_PATCH = 'lead-minimal-input';

const { fillLeadRunInput } = localActivities<ProjectActivities>({
  startToCloseTimeout: '1 minute',
  // A worker without a config refuses at once (non-retryable); a transient fault retries.
  retry: { maximumAttempts: 5 },
});

/** The input the run goes on with: the full one as given, or the minimal one filled by the worker. */
export async function completeLeadRunInput(input: LeadRunInput | MinimalLeadRunInput): Promise<LeadRunInput> {
  if (!isMinimalLeadRunInput(input) || !patched(MINIMAL_LEAD_INPUT_PATCH)) return input as LeadRunInput;
  const runId = input.run_id ?? workflowInfo().workflowId;
  return fillLeadRunInput({ prompt: input.prompt, run_id: runId });
}
