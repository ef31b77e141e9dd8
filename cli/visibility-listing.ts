/**
 * What `subagents list` and `subagents batch list` share: the filter flags checked against their lists, the
 * visibility query they make, the listing loop (newest first, at most `limit`), the server's refusal of a
 * query explained, and the table they print. Read from the server's visibility store: no worker needed.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { executionInfoFromRaw } from '@temporalio/client/lib/helpers';
import { failureText } from '../client/id-kinds';
import { MissingEncryptionKeyError } from '../payloads/encryption-codec';
import { SEARCH_ATTRIBUTES } from '../contracts/search-attributes';
import { userIdProblem } from '../contracts/user';
import { integerFlag, UsageError, type FlagSpec, type FlagValues } from './flags';

/** The flags every listing takes (`list` adds `--stop-reason`). */
export const LISTING_FLAGS: FlagSpec = {
  status: { type: 'string' },
  user: { type: 'string' },
  limit: { type: 'string' },
};

/** Rows a listing shows unless `--limit` says otherwise. */
export const DEFAULT_LISTING_LIMIT = 20;

/** `--limit`, from 1 to `max`, else the default. */
export function listingLimit(values: FlagValues, max: number): number {
  return integerFlag(values, 'limit', 1, max) ?? DEFAULT_LISTING_LIMIT;
}

/** The flag's value when it is one of `accepted`; else a UsageError naming them. */
export function oneOf(
  flag: string,
  value: string | undefined,
  accepted: readonly string[],
): string | undefined {
  if (value === undefined || accepted.includes(value)) return value;
  throw new UsageError(`--${flag}: ${JSON.stringify(value)} is not one of ${accepted.join(', ')}`);
}

/** `--user`'s value when it is a user id (contracts/user.ts); else a UsageError saying why not. */
export function checkedUser(user: string | undefined): string | undefined {
  const problem = user === undefined ? undefined : userIdProblem(user);
  if (problem !== undefined) throw new UsageError(`--user: ${JSON.stringify(user)} ${problem}`);
  return user;
}

export interface VisibilityFilter {
  /** The workflow type listed (`leadRunWorkflow`, `batchWorkflow`). */
  workflowType: string;
  /** `SubagentStatus`. */
  status?: string;
  /** `StopReason`. */
  stopReason?: string;
  /** `UserId`. */
  user?: string;
}

/**
 * The visibility query for `filter` (values come from fixed lists, a user id from letters, digits and `._@-`:
 * nothing to escape). A workflow that continued as new leaves a closed execution behind under the same id,
 * its search attributes as they stood: only the latest execution is listed.
 */
export function visibilityQuery(filter: VisibilityFilter): string {
  return [
    `WorkflowType = '${filter.workflowType}'`,
    `ExecutionStatus != 'ContinuedAsNew'`,
    ...(filter.status ? [`SubagentStatus = '${filter.status}'`] : []),
    ...(filter.stopReason ? [`StopReason = '${filter.stopReason}'`] : []),
    ...(filter.user ? [`UserId = '${filter.user}'`] : []),
  ].join(' AND ');
}

const ATTRIBUTE_NAMES = Object.keys(SEARCH_ATTRIBUTES);

/**
 * The server refused the query (most often: a search attribute it does not have registered) as a UsageError
 * that says how to register them; any other failure as it is. The server's words may be on a cause.
 */
export function refusedQuery(command: string, err: unknown, query: string): Error {
  const words: string[] = [];
  for (let at: unknown = err; at instanceof Error; at = at.cause) words.push(at.message.split('\n')[0]);
  const said = words.find(
    (line) => /search attribute/i.test(line) || ATTRIBUTE_NAMES.some((name) => line.includes(name)),
  );
  if (said === undefined) return err instanceof Error ? err : new Error(String(err));
  const create = Object.entries(SEARCH_ATTRIBUTES)
    .map(([name, type]) => `--name ${name} --type ${type}`)
    .join(' ');
  return new UsageError(
    `${command}: the server refused ${JSON.stringify(query)} (${said}); register the search attributes with ` +
      `\`temporal operator search-attribute create ${create}\` (the dev server registers them itself)`,
  );
}

/** A listed execution, and why its memo could not be read here when it could not. */
export interface ListedExecution {
  info: WorkflowExecutionInfo;
  /** `encrypted: key k2 not held` (or `unreadable: …`): the row is listed without its memo. */
  unreadable?: string;
}

/**
 * At most `limit` executions matching `query`, newest start first. The SDK's `list()` decodes each memo with the
 * client's codecs, so a single memo sealed with a key this client does not hold (or one a rotation dropped)
 * would end the whole listing: here each row is decoded on its own, and one that does not decode is listed
 * without its memo and marked.
 */
export async function listExecutions(
  client: Client,
  command: string,
  query: string,
  limit: number,
): Promise<ListedExecution[]> {
  const { namespace, loadedDataConverter } = client.options;
  const found: ListedExecution[] = [];
  let nextPageToken: Uint8Array | undefined;
  let page: Awaited<ReturnType<Client['workflowService']['listWorkflowExecutions']>>;
  do {
    try {
      // Visibility lists the newest first; the page size keeps one page for a small limit.
      page = await client.workflowService.listWorkflowExecutions({
        namespace,
        query,
        pageSize: Math.min(limit, 100),
        ...(nextPageToken && { nextPageToken }),
      });
    } catch (err) {
      throw refusedQuery(command, err, query);
    }
    for (const raw of page.executions) {
      try {
        found.push({ info: await executionInfoFromRaw(raw, loadedDataConverter, raw, namespace) });
      } catch (err) {
        const info = await executionInfoFromRaw({ ...raw, memo: null }, loadedDataConverter, raw, namespace);
        found.push({ info, unreadable: unreadableText(err) });
      }
      if (found.length >= limit) break;
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken && found.length < limit);
  return found.sort((a, b) => b.info.startTime.getTime() - a.info.startTime.getTime());
}

/** Why a record could not be read, in a few words: the key it is sealed with, or the failure's first line. */
export function unreadableText(err: unknown): string {
  for (let at: unknown = err; at instanceof Error; at = at.cause) {
    if (at instanceof MissingEncryptionKeyError) return `encrypted: key ${at.keyId} not held`;
  }
  return `unreadable: ${failureText(err)}`;
}

/** 45s, 12m, 3h, 2d: how long ago, to the largest whole unit. */
export function ageText(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

/** Rows under a header, columns two spaces apart; the columns at `right` aligned right (numbers). */
export function tableLines(
  header: readonly string[],
  rows: readonly string[][],
  right: readonly number[],
): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => row[column].length)),
  );
  const render = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        right.includes(column) ? cell.padStart(widths[column]) : cell.padEnd(widths[column]),
      )
      .join('  ')
      .trimEnd();
  return [render(header), ...rows.map(render)];
}
