/**
 * Custom search attributes this project sets on its workflows, so the Web UI and `temporal workflow list`
 * can filter runs and delegations. The dev server registers them at start; a cluster operator registers them
 * once with `temporal operator search-attribute create`.
 */
export const SEARCH_ATTRIBUTES = {
  /** The lead run a workflow belongs to (the lead's own id on the lead). */
  LeadRunId: 'Keyword',
  /** `lead`, `general-purpose`, `bash`, or a custom agent's name. */
  SubagentType: 'Keyword',
  /** 0 for the lead, parent's depth + 1 for a child. */
  DelegationDepth: 'Int',
} as const;

export type SearchAttributeName = keyof typeof SEARCH_ATTRIBUTES;
