/**
 * A lead run started with its prompt alone (contracts/minimal-lead-input.ts): the full input from the worker's
 * config, as `subagents run` builds it. A local activity, so the input the run goes on with is in its history.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { LeadRunInput } from '../contracts/lead';
import type { LeadInputFiller, LeadInputRequest } from '../contracts/minimal-lead-input';

export function createLeadInputActivities(fill: LeadInputFiller | undefined) {
  return {
    async fillLeadRunInput(request: LeadInputRequest): Promise<LeadRunInput> {
      if (!fill) {
        // Every worker of the task queue is made alike: a retry elsewhere would meet the same.
        throw ApplicationFailure.nonRetryable(
          'a lead run input of {"prompt"} alone needs a worker started from a config (`subagents worker`); ' +
            'this one has none: start the run with the full input (`subagents schema lead-input`)',
        );
      }
      return fill(request);
    },
  };
}
