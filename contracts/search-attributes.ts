/**
 * Custom search attributes this project sets on its workflows, so the Web UI and `temporal workflow list`
 * can filter runs and delegations by who they are and how they went. The dev server registers them at start;
 * a cluster operator registers them once with `temporal operator search-attribute create` (docs/deployment.md).
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { DEFAULT_USER_ID } from './user';

export const SEARCH_ATTRIBUTES = {
  /** The lead run a workflow belongs to (the lead's own id on the lead). */
  LeadRunId: 'Keyword',
  /** `lead`, `general-purpose`, `bash`, `batch`, or a custom agent's name. */
  SubagentType: 'Keyword',
  /** 0 for the lead, parent's depth + 1 for a child. */
  DelegationDepth: 'Int',
  /**
   * How it stands: `running` from its start (`queued` while it waits for a slot), then its outcome
   * (`completed`, `failed`, `cancelled`, `timed_out`; a batch: `completed`, `failed` when any item failed, or
   * `cancelled`).
   */
  SubagentStatus: 'Keyword',
  /** Its stop reason when a guard or a limit stopped it (`token_capped`, …); absent otherwise. */
  StopReason: 'Keyword',
  /** Tokens it used, once it ended (the lead: its own and its subagents'); absent when none were reported. */
  TotalTokens: 'Int',
  /** Whose run it is (contracts/user.ts): the lead's, on every delegation; `default` when none was given. */
  UserId: 'Keyword',
  /** A batch's items that ended failed (their last attempt), once it ended with any; absent otherwise. */
  FailedItems: 'Int',
  /**
   * What its tokens cost in USD once it ended (`models[].pricing`; the lead: its own calls and its
   * delegations', as `TotalTokens`); absent when no call was priced.
   */
  TotalCostUsd: 'Double',
  /** A fork's (or a resume's) original lead run (docs/fork.md); absent on a run from its first turn. */
  ForkedFrom: 'Keyword',
  /**
   * The original's lead turns a fork kept (`0`: none), as text: a namespace holds only 3 Int attributes (the dev
   * server's limit), all taken. Absent on a run from its first turn.
   */
  ForkTurn: 'Keyword',
} as const;

export const LEAD_RUN_ID = defineSearchAttributeKey('LeadRunId', SearchAttributeType.KEYWORD);
export const SUBAGENT_TYPE = defineSearchAttributeKey('SubagentType', SearchAttributeType.KEYWORD);
export const DELEGATION_DEPTH = defineSearchAttributeKey('DelegationDepth', SearchAttributeType.INT);
export const SUBAGENT_STATUS = defineSearchAttributeKey('SubagentStatus', SearchAttributeType.KEYWORD);
export const STOP_REASON = defineSearchAttributeKey('StopReason', SearchAttributeType.KEYWORD);
export const TOTAL_TOKENS = defineSearchAttributeKey('TotalTokens', SearchAttributeType.INT);
export const USER_ID = defineSearchAttributeKey('UserId', SearchAttributeType.KEYWORD);
export const FAILED_ITEMS = defineSearchAttributeKey('FailedItems', SearchAttributeType.INT);
export const TOTAL_COST_USD = defineSearchAttributeKey('TotalCostUsd', SearchAttributeType.DOUBLE);
export const FORKED_FROM = defineSearchAttributeKey('ForkedFrom', SearchAttributeType.KEYWORD);
export const FORK_TURN = defineSearchAttributeKey('ForkTurn', SearchAttributeType.KEYWORD);

/**
 * The search attributes a lead run (type `lead`, depth 0) or one of its delegations starts with; `userId` is
 * the run's user (absent: `default`).
 */
export function runSearchAttributes(
  runId: string,
  agentType: string,
  depth: number,
  userId: string = DEFAULT_USER_ID,
): SearchAttributePair[] {
  return [
    { key: LEAD_RUN_ID, value: runId },
    { key: SUBAGENT_TYPE, value: agentType },
    { key: DELEGATION_DEPTH, value: depth },
    { key: SUBAGENT_STATUS, value: 'running' },
    { key: USER_ID, value: userId },
  ];
}
