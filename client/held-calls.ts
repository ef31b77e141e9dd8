/**
 * What a run waits on a person for, by any workflow id of the run: the tool calls held for a decision (a
 * guardrail's `ask`) and the questions asked (`ask_clarification`), of that workflow and the subagents under
 * it. Open workflows answer through their queries (a worker needed); a closed one waits on nobody.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import type { PendingApproval } from '../contracts/approvals';
import type { PendingQuestion } from '../contracts/clarification';
import { leadStatusQuery } from '../contracts/lead';
import { FORK_WORKFLOW_TYPES } from '../contracts/run-fork';
import { subagentProgressQuery } from '../contracts/queries';
import { askAndWait, isOpen, type QueryAsker } from './delegation-status';
import { identify, type IdKind } from './id-kinds';

/** The server's description of the lead run `leadId` while it is open, else undefined. */
async function openDescription(
  client: Client,
  leadId: string,
): Promise<WorkflowExecutionDescription | undefined> {
  const description = await client.workflow
    .getHandle(leadId)
    .describe()
    .catch(() => undefined);
  return description !== undefined && isOpen(description.status.name) ? description : undefined;
}

/** What `workflowId` names, open: its kind and the server's description; undefined once it has closed. */
async function openWorkflow(
  client: Client,
  workflowId: string,
): Promise<{ kind: IdKind; description: WorkflowExecutionDescription } | undefined> {
  const { kind, description } = await identify(client, workflowId);
  if (description === undefined)
    throw new WorkflowNotFoundError(`no workflow ${workflowId}`, workflowId, undefined);
  return isOpen(description.status.name) ? { kind, description } : undefined;
}

/**
 * The tool calls held for a person's decision (a guardrail's `ask`) by the workflow `workflowId` and the
 * subagents under it: a lead run's, a subagent's or a batch item's, each named by the ref its lead run decides
 * it by (`RunHandle.approve` / `.deny`). None once it has closed, and none of a batch itself (its items hold
 * theirs). Needs a worker while it is open, as queries do; WorkflowNotFoundError when no workflow has that id.
 */
export async function heldCalls(
  client: Client,
  workflowId: string,
  ask: QueryAsker = askAndWait,
): Promise<PendingApproval[]> {
  const open = await openWorkflow(client, workflowId);
  if (open === undefined) return [];
  const { kind, description } = open;
  const handle = client.workflow.getHandle(workflowId);
  const what = `${kind.kind === 'lead' ? 'run' : 'subagent'} ${workflowId}`;
  if (kind.kind === 'lead')
    return (await ask(what, description.taskQueue, () => handle.query(leadStatusQuery))).approvals ?? [];
  // A subagent's fork holds nothing while its first execution reads the original's state.
  if (kind.kind === 'subagent_fork' && description.type === FORK_WORKFLOW_TYPES.subagent) return [];
  if (kind.kind === 'subagent' || kind.kind === 'subagent_fork' || kind.kind === 'batch_item')
    return (
      (await ask(what, description.taskQueue, () => handle.query(subagentProgressQuery))).approvals ?? []
    );
  return [];
}

/**
 * The questions (`ask_clarification`) the workflow `workflowId` and the subagents under it wait on: a lead
 * run's (its own and its subagents') or a subagent's, each named by the ref `answer` on its lead run takes.
 * The lead run keeps every question of its tree, so a subagent's are read from it. None once it has closed,
 * and none of a batch or its items (unattended). Needs a worker while it is open; WorkflowNotFoundError when
 * no workflow has that id.
 */
export async function waitingQuestions(
  client: Client,
  workflowId: string,
  ask: QueryAsker = askAndWait,
): Promise<PendingQuestion[]> {
  const open = await openWorkflow(client, workflowId);
  if (open === undefined) return [];
  const { kind } = open;
  // A batch and its items are unattended: nothing there asks a person.
  if (kind.kind !== 'lead' && kind.kind !== 'subagent') return [];
  const leadId = kind.kind === 'lead' ? kind.id : kind.leadId;
  const lead = kind.kind === 'lead' ? open.description : await openDescription(client, leadId);
  if (lead === undefined) return [];
  const status = await ask(`run ${leadId}`, lead.taskQueue, () =>
    client.workflow.getHandle(leadId).query(leadStatusQuery),
  );
  const under = (question: PendingQuestion) =>
    kind.kind === 'lead' ||
    question.workflow_id === workflowId ||
    question.workflow_id.startsWith(`${workflowId}/`);
  return (status.questions ?? []).filter(under);
}
