/**
 * `readForkPoint`: the state of an original lead run, or of one of its subagents, at the end of one of its turns,
 * read from its recorded history through the worker's client (never by replaying it in the fork): the transcript
 * the next model call was sent (or, after the last turn, its request and answer), the delegations a lead's turns
 * made with their results, the usage they cost, and the newest workspace save at that point. A fork's history
 * holds this one result, so nothing in it depends on the original's.
 */
import * as path from 'node:path';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { workflowResult } from '../../contracts/closing';
import { leadLedgerQuery, type LeadRunResult } from '../../contracts/lead';
import type { SubagentInput } from '../../contracts/subagent';
import type { LedgerEntry } from '../../contracts/ledger';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../../contracts/messages';
import {
  FORK_FAILURE_TYPE,
  FORKABLE_WORKFLOW_TYPES,
  forkedNames,
  forkTurnProblem,
  type ForkPoint,
} from '../../contracts/run-fork';
import type { Transcript } from '../../contracts/transcript';
import type { WorkspacePlacement } from '../../contracts/workspace';
import type { WorkspaceHost } from '../workspace/host';
import { readRunRecords, readSaves, type ModelCallRecord, type RunRecords, type SaveRecord } from './history';

/** How a run ended, in the words `resume` accepts: a run that ended without its answer. */
const RESUMABLE: readonly string[] = ['FAILED', 'TIMED_OUT', 'TERMINATED'];

function refuse(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: FORK_FAILURE_TYPE, nonRetryable: true });
}

/** A turn that answered with no tool call and no provider error: nothing of it is still to run. */
function answered(call: ModelCallRecord | undefined): boolean {
  return call?.result !== undefined && !call.result.error_fallback && call.result.tool_calls.length === 0;
}

/** Turns the original completed: every one whose next call was made, and a last one that answered. */
function completedTurns(calls: readonly ModelCallRecord[]): number {
  if (calls.length === 0) return 0;
  return answered(calls[calls.length - 1]) ? calls.length : calls.length - 1;
}

/** The transcript at the end of `turn`, and when that turn ended (epoch ms; Infinity: the run's last). */
function transcriptAt(
  calls: readonly ModelCallRecord[],
  turn: number,
): { transcript: Transcript; endMs: number } {
  const next = calls[turn];
  if (next) return { transcript: sentTranscript(next.input), endMs: next.scheduledAtMs };
  // After the last turn, which answered: its request, then its answer.
  const last = calls[turn - 1];
  const sent = sentTranscript(last.input);
  const answer = { role: 'assistant' as const, content: last.result?.content ?? '' };
  return { transcript: { ...sent, tail: [...sent.tail, answer] }, endMs: Infinity };
}

/** The transcript a model call was sent: its stored prefix, a `fork` child's first call's source, its messages. */
function sentTranscript(input: ModelCallRecord['input']): Transcript {
  const { transcript_ref: stored, fork_from: forkFrom, messages } = input;
  return {
    ...(stored && { stored }),
    ...(!stored && forkFrom && { fork_from: forkFrom }),
    tail: [...messages],
  };
}

function usageOf(calls: readonly ModelCallRecord[]): TokenUsage | undefined {
  let usage: TokenUsage | undefined;
  for (const call of calls) if (call.result?.usage) usage = addUsage(usage ?? ZERO_USAGE, call.result.usage);
  return usage;
}

/** The original's ledger: its result's once it ended, its query's while it runs (none when it has neither). */
async function originalLedger(client: Client, runId: string, status: string): Promise<LedgerEntry[]> {
  const handle = client.workflow.getHandle(runId);
  try {
    if (status === 'RUNNING') return await handle.query(leadLedgerQuery);
    const result = await workflowResult<LeadRunResult | undefined>(handle);
    return result?.ledger ?? [];
  } catch {
    // Terminated (no result), or no worker to answer the query: the kept turns' results are in the transcript.
    return [];
  }
}

/** The newest save made by the end of the turn, the lead's own or one of its delegations'. */
async function manifestAt(
  client: Client,
  lead: readonly SaveRecord[],
  delegations: readonly LedgerEntry[],
  endMs: number,
): Promise<string | undefined> {
  const saves = [...lead];
  for (const entry of delegations) saves.push(...(await readSaves(client, entry.workflow_id)));
  let newest: SaveRecord | undefined;
  for (const record of saves) {
    if (record.atMs > endMs) continue;
    if (!newest || record.save.seq > newest.save.seq) newest = record;
  }
  return newest?.save.manifest;
}

export interface ForkPointRequest {
  run_id: string;
  /** Absent: the last completed turn of a run that ended without its answer (`resume`). */
  turn?: number;
}

/** What a fork keeps besides the transcript: a lead's delegations, the task's place, the workspace save. */
interface KeptSide {
  ledger: LedgerEntry[];
  taskIndex: number;
  manifest?: string;
}

/** A lead's kept turns: the delegations they made (reused), the newest save of the run by then. */
async function leadSide(
  client: Client,
  runId: string,
  status: string,
  records: RunRecords,
  endMs: number,
): Promise<KeptSide> {
  const ledger = (await originalLedger(client, runId, status))
    .filter((entry) => Date.parse(entry.created_at) <= endMs)
    .map((entry) => ({ ...entry, reused: true as const }));
  const manifest = await manifestAt(client, records.saves, ledger, endMs);
  return { ledger, taskIndex: 1, ...(manifest !== undefined && { manifest }) };
}

/**
 * A subagent's kept turns: no ledger (what they delegated is in the transcript as results), the task where
 * `subagentWorkflow` puts it (after its system message and a `fork` child's messages), and the newest save of
 * its run's workspace by then: its own, its lead's, or a sibling delegation's (they share the folder).
 */
async function subagentSide(
  client: Client,
  subagentId: string,
  records: RunRecords,
  endMs: number,
): Promise<KeptSide> {
  const input = records.input as Partial<SubagentInput> | undefined;
  if (input?.remote !== undefined || input?.agent?.graph !== undefined)
    throw refuse(
      `subagent ${subagentId} runs ${input.remote ? 'on a remote provider' : 'a graph agent'}: its turns are ` +
        'not model calls in its history, so it does not fork by turn (rerun its delegation instead)',
    );
  const leadId = input?.run_id;
  let lead: { saves: SaveRecord[]; ledger: LedgerEntry[] } = { saves: [], ledger: [] };
  if (leadId !== undefined && leadId !== subagentId) {
    try {
      const status = (await client.workflow.getHandle(leadId).describe()).status.name;
      lead = { saves: await readSaves(client, leadId), ledger: await originalLedger(client, leadId, status) };
    } catch {
      // A lead whose history is gone (retention): the subagent's own saves still count.
    }
  }
  const manifest = await manifestAt(client, [...lead.saves, ...records.saves], lead.ledger, endMs);
  const forkMessages = (input?.fork_messages ?? []).filter((message) => message.role !== 'system');
  return { ledger: [], taskIndex: 1 + forkMessages.length, ...(manifest !== undefined && { manifest }) };
}

/** Reads the fork point of `request.run_id`, a lead run or a subagent (see the file's comment). */
export async function readForkPoint(request: ForkPointRequest): Promise<ForkPoint> {
  const { client } = Context.current();
  const id = request.run_id;
  const description = await client.workflow.getHandle(id).describe();
  const status = description.status.name;
  const kind = FORKABLE_WORKFLOW_TYPES[description.type];
  if (kind === undefined)
    throw refuse(`${id} is a ${description.type}, not a lead run or a subagent: only those fork`);
  const names = forkedNames(kind, id);
  if (request.turn === undefined && !RESUMABLE.includes(status))
    throw refuse(
      `${names.original} is ${status.toLowerCase()}: resume continues a failed or timed-out run ` +
        '(fork --turn N reruns any run from a turn)',
    );
  const records = await readRunRecords(client, id);
  const completed = completedTurns(records.calls);
  const turn = request.turn ?? Math.max(0, records.calls.length - 1);
  const problem = forkTurnProblem(turn, completed, id, kind);
  if (problem !== undefined) throw refuse(problem);
  const { transcript, endMs } = transcriptAt(records.calls, turn);
  const side =
    kind === 'lead'
      ? await leadSide(client, id, status, records, endMs)
      : await subagentSide(client, id, records, endMs);
  const usage = usageOf(records.calls.slice(0, turn));
  return {
    kind,
    turn,
    original_status: status.toLowerCase(),
    transcript,
    task_index: side.taskIndex,
    ...(usage && { reused_usage: usage }),
    ledger: side.ledger,
    original_input: records.input,
    ...(side.manifest !== undefined && { workspace_manifest: side.manifest }),
  };
}

export interface RestoreForkWorkspaceInput {
  /** The fork's run id: whose workspace the restored folder becomes. */
  run_id: string;
  /** The original's workspace folder: the fork's is a new one beside it. */
  original: string;
  manifest: string;
}

/** The fork's own folder beside the original's: `<original>.fork-<fork run id, path-safe>`. */
export function forkWorkspaceDir(original: string, runId: string): string {
  return `${path.resolve(original)}.fork-${runId.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
}

export function createForkActivities(workspaces: WorkspaceHost) {
  return {
    readForkPoint,
    /** Restores the original's save into the fork's new folder and places it on this host (its home). */
    async restoreForkWorkspace(
      input: RestoreForkWorkspaceInput,
    ): Promise<{ workspace: string; placement: WorkspacePlacement }> {
      const workspace = forkWorkspaceDir(input.original, input.run_id);
      const placement = await workspaces.placeRestored(input.run_id, workspace, input.manifest);
      return { workspace, placement };
    },
  };
}
