/**
 * Listing workflows from the server's visibility store, one row at a time: a row whose memo this client cannot
 * decode (encrypted with a key it does not hold, or under a key that was rotated away) is listed without its
 * memo and marked, instead of ending the listing for every other row as the SDK's own iterator does.
 */
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { executionInfoFromRaw } from '@temporalio/client/lib/helpers';

export interface ListedExecution {
  info: WorkflowExecutionInfo;
  /** Why the row's memo could not be read (`encrypted: key k2 not held`); absent when it could. */
  unreadable?: string;
}

/** The workflows `query` finds, newest first as the server lists them, `pageSize` a page. */
export async function* listExecutions(
  client: Client,
  query: string,
  pageSize: number,
): AsyncGenerator<ListedExecution> {
  const { namespace, loadedDataConverter } = client.options;
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkflowExecutions({
      namespace,
      query,
      pageSize,
      ...(nextPageToken && { nextPageToken }),
    });
    for (const raw of page.executions ?? []) {
      let listed: ListedExecution;
      try {
        listed = { info: await executionInfoFromRaw(raw, loadedDataConverter, raw, namespace) };
      } catch (err) {
        const info = await executionInfoFromRaw({ ...raw, memo: null }, loadedDataConverter, raw, namespace);
        listed = { info, unreadable: unreadableReason(err) };
      }
      yield listed;
    }
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
}

/** A decoding failure in a few words: a key not held names the key. */
export function unreadableReason(err: unknown): string {
  if (err instanceof Error && err.name === 'MissingEncryptionKeyError' && 'keyId' in err)
    return `encrypted: key ${String(err.keyId)} not held`;
  const message = err instanceof Error ? err.message : String(err);
  return `unreadable: ${message.split('\n')[0]}`;
}
