/**
 * A user's memory from outside the workflow sandbox, through the worker's own client: the `<memory>` block a
 * lead is told as it starts (a query of `memory/<user_id>`), a search (`memory_search`), and a change (the other
 * three tools): an Update-with-Start, so the user's first fact starts the workflow. A retried attempt sends the
 * same change id, and the workflow answers it as it did the first time: nothing is applied twice. And, for
 * `mode: middleware`, the extraction: one model call over the conversations the memory workflow queued.
 */
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowNotFoundError, type Client } from '@temporalio/client';
import {
  MEMORY_WORKFLOW_TYPE,
  memoryBlock,
  memoryChangeUpdate,
  memoryFactsQuery,
  memoryWorkflowId,
  searchFacts,
  type MemoryChange,
  type MemoryChangeResult,
  type MemoryFact,
  type MemoryWorkflowInput,
} from '../../contracts/memory';
import {
  extractionUserMessage,
  MEMORY_EXTRACTION_AGENT,
  MEMORY_EXTRACTION_PROMPT,
  readExtraction,
  type MemoryExtraction,
  type MemoryExtractionRequest,
} from '../../contracts/memory-extraction';
import type { ModelProviders } from '../model';
import { whileHeartbeating } from '../activity-context';

/** A user's facts; none when the user has no memory workflow yet. */
export async function readFacts(client: Client, userId: string): Promise<MemoryFact[]> {
  try {
    return await client.workflow.getHandle(memoryWorkflowId(userId)).query(memoryFactsQuery);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return [];
    throw err;
  }
}

/** Sends `change` to the user's memory workflow, starting it (on `taskQueue`) when the user has none. */
export async function changeMemory(
  client: Client,
  taskQueue: string,
  request: { user_id: string; max_facts: number; change: MemoryChange },
): Promise<MemoryChangeResult> {
  const args: [MemoryWorkflowInput] = [{ user_id: request.user_id, max_facts: request.max_facts }];
  const start = new WithStartWorkflowOperation(MEMORY_WORKFLOW_TYPE, {
    workflowId: memoryWorkflowId(request.user_id),
    taskQueue,
    args,
    workflowIdConflictPolicy: 'USE_EXISTING',
    staticSummary: `memory of user ${request.user_id}`,
  });
  return client.workflow.executeUpdateWithStart(memoryChangeUpdate, {
    args: [request.change],
    // The server drops a second Update with this id within one execution; the workflow remembers across them.
    updateId: request.change.op_id,
    startWorkflowOperation: start,
  });
}

export interface MemoryContextRequest {
  user_id: string;
  max_injection_tokens: number;
}

export interface MemorySearchRequest {
  user_id: string;
  query: string;
  category?: string;
  limit: number;
}

export interface MemoryChangeRequest {
  user_id: string;
  max_facts: number;
  change: MemoryChange;
}

/**
 * How long a read, and a change, may wait for the memory workflow's worker: past it the memory is unavailable,
 * and the run goes on without it (DeerFlow's `fail_open` read, `log_and_drop` write), rather than wait for good
 * on a task queue no worker polls any more.
 */
const READ_DEADLINE_MS = 30_000;
const CHANGE_DEADLINE_MS = 45_000;

function unavailable(what: string, err: unknown): string {
  const reason = err instanceof Error ? err.message : String(err);
  Context.current().log.warn(`memory ${what} failed: ${reason}`);
  return `memory unavailable: ${reason}`;
}

/**
 * The extraction (`mode: middleware`): DeerMem's instructions, the facts kept and the queued conversations, in
 * one call of the run's model; its answer read as DeerMem's JSON and filtered by its write gate and
 * `fact_confidence_threshold`. A provider's transient error is thrown (the workflow's retry policy rides it out);
 * an answer that cannot be used is an `error`, which the workflow logs and drops.
 */
async function extractMemory(
  providers: ModelProviders,
  request: MemoryExtractionRequest,
): Promise<MemoryExtraction | { error: string }> {
  const { settings } = request;
  const reply = await whileHeartbeating(() =>
    providers.call({
      model: settings.model,
      agent_name: MEMORY_EXTRACTION_AGENT,
      messages: [
        { role: 'system', content: MEMORY_EXTRACTION_PROMPT },
        { role: 'user', content: extractionUserMessage(request.facts, request.conversations) },
      ],
      tools: [],
      turn_index: 0,
    }),
  );
  if (reply.error_fallback) return { error: `model ${settings.model.name}: ${reply.error_fallback.message}` };
  try {
    const read = readExtraction(reply.content, settings.fact_confidence_threshold);
    return { ...read, ...(reply.usage && { usage: reply.usage }) };
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return { error: `model ${settings.model.name} did not answer in DeerMem's JSON: ${reason}` };
  }
}

/** The memory activities of a worker; `providers` make the extraction's model call. */
export function createMemoryActivities(providers: ModelProviders) {
  const read = (userId: string) => {
    const { client } = Context.current();
    return client.withDeadline(Date.now() + READ_DEADLINE_MS, () => readFacts(client, userId));
  };
  return {
    /** The `<memory>` block for a lead that starts now ('' when the user has no fact, or it cannot be read). */
    async memoryContext(
      request: MemoryContextRequest,
    ): Promise<{ block: string; facts: number; error?: string }> {
      try {
        const facts = await read(request.user_id);
        return { block: memoryBlock(facts, request.max_injection_tokens), facts: facts.length };
      } catch (err) {
        return { block: '', facts: 0, error: unavailable('read', err) };
      }
    },
    /** `memory_search`: the facts that match, most confident first. */
    async memorySearch(request: MemorySearchRequest): Promise<MemoryFact[] | { error: string }> {
      try {
        return searchFacts(await read(request.user_id), request);
      } catch (err) {
        return { error: unavailable('search', err) };
      }
    },
    /** `memory_add`, `memory_update`, `memory_delete`: one change, applied once. */
    async memoryChange(request: MemoryChangeRequest): Promise<MemoryChangeResult> {
      const context = Context.current();
      try {
        return await context.client.withDeadline(Date.now() + CHANGE_DEADLINE_MS, () =>
          changeMemory(context.client, context.info.taskQueue, request),
        );
      } catch (err) {
        return { error: unavailable('change', err) };
      }
    },
    /** `mode: middleware`: the facts a model finds in the conversations queued in a user's memory workflow. */
    extractMemory: (request: MemoryExtractionRequest) => extractMemory(providers, request),
  };
}
