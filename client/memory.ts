/**
 * A user's memory, read and changed from a client (`subagents memory show|forget|clear`): a query of the user's
 * memory workflow (`memory/<user_id>`), or an Update of it. A user who has no memory workflow has no facts;
 * forgetting or clearing then changes nothing.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  memoryChangeUpdate,
  memoryFactsQuery,
  memoryWorkflowId,
  type MemoryChangeResult,
  type MemoryFact,
  type MemoryOp,
} from '../contracts/memory';

/** `userId`'s facts, most recent last; none when the user has no memory. */
export async function memoryFacts(client: Client, userId: string): Promise<MemoryFact[]> {
  try {
    return await client.workflow.getHandle(memoryWorkflowId(userId)).query(memoryFactsQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return [];
    throw err;
  }
}

/** A person's change to `userId`'s memory (`forget`, `clear`); undefined when the user has no memory. */
async function changeMemory(
  client: Client,
  userId: string,
  op: MemoryOp,
): Promise<MemoryChangeResult | undefined> {
  const opId = `cli/${randomUUID()}`;
  try {
    return await client.workflow.getHandle(memoryWorkflowId(userId)).executeUpdate(memoryChangeUpdate, {
      args: [{ op_id: opId, op, source_run: 'cli', at: new Date().toISOString() }],
      updateId: opId,
    });
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/** Forgets one fact: `deleted`, or `error` (`Fact not found: …`); undefined when the user has no memory. */
export function forgetFact(
  client: Client,
  userId: string,
  factId: string,
): Promise<MemoryChangeResult | undefined> {
  return changeMemory(client, userId, { kind: 'delete', fact_id: factId });
}

/** Forgets every fact of the user: how many there were (0 when the user has no memory). */
export async function clearMemory(client: Client, userId: string): Promise<number> {
  const result = await changeMemory(client, userId, { kind: 'clear' });
  return result && 'count' in result ? result.count : 0;
}
