/**
 * `subagents list`: recent lead runs, newest first, read from the server's visibility store (no worker
 * needed). Status, stop reason and tokens come from the search attributes the workflows set
 * (`SubagentStatus`, `StopReason`, `TotalTokens`); a run from before them shows Temporal's execution status.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { STOP_REASON, SUBAGENT_STATUS, TOTAL_TOKENS, USER_ID } from '../contracts/search-attributes';
import { LEAD_RUN_STATUSES } from '../contracts/lead';
import { RUN_STOP_REASONS } from '../contracts/status';
import { loadCommandConfig, requireServer } from './command-setup';
import { connectClient } from '../client/connection';
import { parseFlags, stringFlag, UsageError } from './flags';
import {
  ageText,
  checkedUser,
  LISTING_FLAGS,
  listExecutions,
  listingLimit,
  oneOf,
  tableLines,
  visibilityQuery,
  type VisibilityFilter,
} from './visibility-listing';

/** What `--status` accepts: the lead's `SubagentStatus` values. */
export const LIST_STATUSES = ['queued', 'running', ...LEAD_RUN_STATUSES] as const;
const MAX_LIMIT = 1000;

/** The filter the flags ask for, checked against the contract's lists (and a user id against its rule). */
export function listFilter(
  status: string | undefined,
  stopReason: string | undefined,
  user?: string,
): VisibilityFilter {
  const checkedStatus = oneOf('status', status, LIST_STATUSES);
  const checkedStopReason = oneOf('stop-reason', stopReason, RUN_STOP_REASONS);
  const checkedUserId = checkedUser(user);
  return {
    workflowType: 'leadRunWorkflow',
    ...(checkedStatus && { status: checkedStatus }),
    ...(checkedStopReason && { stopReason: checkedStopReason }),
    ...(checkedUserId !== undefined && { user: checkedUserId }),
  };
}

export interface ListedRun {
  run_id: string;
  /** The run's `SubagentStatus`, else Temporal's execution status in lower case (`status_source` says which). */
  status: string;
  status_source: 'search_attribute' | 'execution';
  /** Temporal's status of the run's latest execution (RUNNING, COMPLETED, FAILED, …). */
  execution_status: string;
  stop_reason?: string;
  total_tokens?: number;
  /** Whose run it is (`UserId`); absent for a run from before it existed. */
  user_id?: string;
  started_at: string;
  closed_at?: string;
  /** Why part of the run's record could not be read here (`encrypted: key k2 not held`); absent when it could. */
  unreadable?: string;
}

/** One run of the listing, from its visibility record (`unreadable`: what of it this client cannot read). */
export function listedRun(info: WorkflowExecutionInfo, unreadable?: string): ListedRun {
  const attributes = info.typedSearchAttributes;
  const status = attributes.get(SUBAGENT_STATUS);
  const stopReason = attributes.get(STOP_REASON);
  const totalTokens = attributes.get(TOTAL_TOKENS);
  const userId = attributes.get(USER_ID);
  return {
    run_id: info.workflowId,
    status: status ?? info.status.name.toLowerCase(),
    status_source: status === undefined ? 'execution' : 'search_attribute',
    execution_status: info.status.name,
    ...(stopReason !== undefined && { stop_reason: stopReason }),
    ...(totalTokens !== undefined && { total_tokens: totalTokens }),
    ...(userId !== undefined && { user_id: userId }),
    started_at: info.startTime.toISOString(),
    ...(info.closeTime && { closed_at: info.closeTime.toISOString() }),
    ...(unreadable !== undefined && { unreadable }),
  };
}

/** The listing as a table; a status in parentheses is Temporal's, for a run without `SubagentStatus`. */
export function renderRunList(runs: readonly ListedRun[], now: number): string[] {
  if (runs.length === 0) return ['(no lead runs)'];
  // A NOTE column only when a run has one: what of it this client could not read.
  const noted = runs.some((run) => run.unreadable !== undefined);
  const header = ['RUN ID', 'STATUS', 'STOP REASON', 'TOKENS', 'AGE', ...(noted ? ['NOTE'] : [])];
  const rows = runs.map((run) => [
    run.run_id,
    run.status_source === 'execution' ? `(${run.status})` : run.status,
    run.stop_reason ?? '-',
    run.total_tokens === undefined ? '-' : String(run.total_tokens),
    ageText(now - Date.parse(run.started_at)),
    ...(noted ? [run.unreadable ?? ''] : []),
  ]);
  const lines = tableLines(header, rows, [3, 4]);
  if (runs.some((run) => run.status_source === 'execution'))
    lines.push("(status): Temporal's execution status, for runs that carry no SubagentStatus");
  return lines;
}

export async function listCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    { ...LISTING_FLAGS, 'stop-reason': { type: 'string' } },
    'list',
  );
  if (positionals.length > 0)
    throw new UsageError(`list: takes no arguments (${positionals.join(' ')}); filter with --status`);
  const filter = listFilter(
    stringFlag(values, 'status'),
    stringFlag(values, 'stop-reason'),
    stringFlag(values, 'user'),
  );
  const limit = listingLimit(values, MAX_LIMIT);
  const settings = await requireServer('list', loadCommandConfig(values));
  const { client, connection } = await connectClient(settings);
  try {
    const runs = (await listExecutions(client, 'list', visibilityQuery(filter), limit)).map(
      ({ info, unreadable }) => listedRun(info, unreadable),
    );
    if (values.json) process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    else process.stdout.write(`${renderRunList(runs, Date.now()).join('\n')}\n`);
    return 0;
  } finally {
    await connection.close();
  }
}
