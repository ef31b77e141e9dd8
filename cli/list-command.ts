/**
 * `subagents list`: recent lead runs, newest first, read from the server's visibility store (no worker
 * needed). Status, stop reason and tokens come from the search attributes the workflows set
 * (`SubagentStatus`, `StopReason`, `TotalTokens`); a run from before them shows Temporal's execution status.
 */
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { STOP_REASON, SUBAGENT_STATUS, TOTAL_TOKENS, USER_ID } from '../contracts/search-attributes';
import { userIdProblem } from '../contracts/user';
import { LEAD_RUN_STATUSES } from '../contracts/lead';
import { RUN_STOP_REASONS } from '../contracts/status';
import { loadCommandConfig, requireServer } from './command-setup';
import { connectClient } from '../client/connection';
import { listExecutions } from '../client/visibility';
import { integerFlag, parseFlags, stringFlag, UsageError, type FlagSpec } from './flags';

/** What `--status` accepts: the lead's `SubagentStatus` values. */
export const LIST_STATUSES = ['queued', 'running', ...LEAD_RUN_STATUSES] as const;
const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 1000;

export interface ListFilter {
  status?: string;
  stopReason?: string;
  /** Runs of this user only (`UserId`). */
  user?: string;
}

/** The flag's value when it is one of `accepted`; else a UsageError naming them. */
function oneOf(flag: string, value: string | undefined, accepted: readonly string[]): string | undefined {
  if (value === undefined || accepted.includes(value)) return value;
  throw new UsageError(`--${flag}: ${JSON.stringify(value)} is not one of ${accepted.join(', ')}`);
}

/** The filter the flags ask for, checked against the contract's lists (and a user id against its rule). */
export function listFilter(
  status: string | undefined,
  stopReason: string | undefined,
  user?: string,
): ListFilter {
  const checkedStatus = oneOf('status', status, LIST_STATUSES);
  const checkedStopReason = oneOf('stop-reason', stopReason, RUN_STOP_REASONS);
  const userProblem = user === undefined ? undefined : userIdProblem(user);
  if (userProblem !== undefined) throw new UsageError(`--user: ${JSON.stringify(user)} ${userProblem}`);
  return {
    ...(checkedStatus && { status: checkedStatus }),
    ...(checkedStopReason && { stopReason: checkedStopReason }),
    ...(user !== undefined && { user }),
  };
}

/**
 * The visibility query for lead runs matching `filter` (values come from fixed lists, a user id from letters,
 * digits and `._@-`: nothing to escape).
 */
export function listQuery(filter: ListFilter): string {
  return [
    `WorkflowType = 'leadRunWorkflow'`,
    ...(filter.status ? [`SubagentStatus = '${filter.status}'`] : []),
    ...(filter.stopReason ? [`StopReason = '${filter.stopReason}'`] : []),
    ...(filter.user ? [`UserId = '${filter.user}'`] : []),
  ].join(' AND ');
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

/** 45s, 12m, 3h, 2d: how long ago, to the largest whole unit. */
export function ageText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
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
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column].length)),
  );
  const render = (row: string[]) =>
    row
      .map((cell, column) =>
        column === 3 || column === 4 ? cell.padStart(widths[column]) : cell.padEnd(widths[column]),
      )
      .join('  ')
      .trimEnd();
  const lines = [render(header), ...rows.map(render)];
  if (runs.some((run) => run.status_source === 'execution'))
    lines.push("(status): Temporal's execution status, for runs that carry no SubagentStatus");
  return lines;
}

/** The server refused the query: most often a search attribute it does not have registered. */
function refusedQuery(err: unknown, query: string): Error {
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  if (!/SubagentStatus|StopReason|TotalTokens|UserId|search attribute/i.test(message)) return err as Error;
  return new UsageError(
    `list: the server refused ${JSON.stringify(query)} (${message}); register the search attributes with ` +
      '`temporal operator search-attribute create --name SubagentStatus --type Keyword --name StopReason ' +
      '--type Keyword --name TotalTokens --type Int --name UserId --type Keyword` (the dev server registers them ' +
      'itself)',
  );
}

export async function listCommand(args: string[]): Promise<number> {
  const spec: FlagSpec = {
    status: { type: 'string' },
    'stop-reason': { type: 'string' },
    user: { type: 'string' },
    limit: { type: 'string' },
  };
  const { values, positionals } = parseFlags(args, spec, 'list');
  if (positionals.length > 0)
    throw new UsageError(`list: takes no arguments (${positionals.join(' ')}); filter with --status`);
  const filter = listFilter(
    stringFlag(values, 'status'),
    stringFlag(values, 'stop-reason'),
    stringFlag(values, 'user'),
  );
  const limit = integerFlag(values, 'limit', 1, MAX_LIMIT) ?? DEFAULT_LIMIT;
  const settings = await requireServer('list', loadCommandConfig(values));
  const { client, connection } = await connectClient(settings);
  const query = listQuery(filter);
  try {
    const runs: ListedRun[] = [];
    try {
      // Visibility lists the newest first; the page size keeps one page for a small limit.
      for await (const { info, unreadable } of listExecutions(client, query, Math.min(limit, 100))) {
        runs.push(listedRun(info, unreadable));
        if (runs.length >= limit) break;
      }
    } catch (err) {
      throw refusedQuery(err, query);
    }
    runs.sort((a, b) => b.started_at.localeCompare(a.started_at));
    if (values.json) process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    else process.stdout.write(`${renderRunList(runs, Date.now()).join('\n')}\n`);
    return 0;
  } finally {
    await connection.close();
  }
}
