/**
 * Custom search attributes this project sets on its workflows, so the Web UI and `temporal workflow list`
 * can filter runs and delegations. The dev server registers them at start; a cluster operator registers them
 * once with `temporal operator search-attribute create`.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
export const SEARCH_ATTRIBUTES = {
  /** The lead run a workflow belongs to (the lead's own id on the lead). */
  LeadRunId: 'Keyword',
  /** `lead`, `general-purpose`, `bash`, or a custom agent's name. */
  SubagentType: 'Keyword',
  /** 0 for the lead, parent's depth + 1 for a child. */
  DelegationDepth: 'Int',
  SubagentStatus: 'Keyword',
  StopReason: 'Keyword',
  TotalTokens: 'Int',
} as const;

const LEAD_RUN_ID = defineSearchAttributeKey('LeadRunId', SearchAttributeType.KEYWORD);
const SUBAGENT_TYPE = defineSearchAttributeKey('SubagentType', SearchAttributeType.KEYWORD);
const DELEGATION_DEPTH = defineSearchAttributeKey('DelegationDepth', SearchAttributeType.INT);

/** The search attributes of a lead run (type `lead`, depth 0) or of one of its delegations. */
export function runSearchAttributes(runId: string, agentType: string, depth: number): SearchAttributePair[] {
  return [
    { key: LEAD_RUN_ID, value: runId },
    { key: SUBAGENT_TYPE, value: agentType },
    { key: DELEGATION_DEPTH, value: depth },
  ];
}
