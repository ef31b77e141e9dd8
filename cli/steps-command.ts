/**
 * `subagents steps <run-id> <task-id> [--follow]`: a subagent's step log, as the client reads it
 * (client/subagent-steps.ts: an open subagent's queries, a running graph's checkpoint, a closed one's
 * history), rendered as lines of text or JSON.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { SubagentStep } from '../contracts/steps';
import { subagentResult } from '../client/api';
import {
  closedSubagentSteps,
  latestBatchItemAttempt,
  openSubagentSteps,
  subagentWorkflowId,
} from '../client/subagent-steps';
import { askWorker, QUERY_DEADLINE_MS } from '../client/worker-liveness';
import { loadCommandConfig, requireServer } from './command-setup';
import { connectClient } from '../client/connection';
import { parseFlags, stringFlag, UsageError, type FlagSpec } from './flags';
import { identify, kindText } from '../client/id-kinds';
import { InspectionError, noWorkerMessage } from './inspect-commands';
import { outcomeLine } from './outcome-lines';

const FOLLOW_POLL_MS = 500;
/** Characters of a step's text and of a call's arguments on a line of text output. */
const LINE_CHARS = 160;

function oneLine(text: string, max = LINE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** A step as lines of text: an assistant turn with its tool calls, or a tool's result. */
export function stepLines(step: SubagentStep): string[] {
  const cut = step.truncated ? ' (cut)' : '';
  if (step.kind === 'tool') {
    const error = step.is_error ? ' error' : '';
    const promoted = step.promoted ? ` (promoted: ${step.promoted.join(', ')})` : '';
    const skill = step.activated_skill ? ` (skill ${step.activated_skill} active)` : '';
    return [
      `${step.seq} tool ${step.name} [${step.tool_call_id}]${error}${promoted}${skill}: ${oneLine(step.text)}${cut}`,
    ];
  }
  if (step.kind === 'approval') {
    const who = step.by !== undefined ? ` by ${oneLine(step.by, 80)}` : '';
    const note = step.note !== undefined ? `: ${oneLine(step.note)}` : '';
    return [
      `${step.seq} approval ${step.name} [${step.tool_call_id}] ${step.decision}${who} at ${step.at}${note}`,
    ];
  }
  return [
    `${step.seq} ai: ${step.text.trim() ? oneLine(step.text) : '(no text)'}${cut}`,
    ...step.tool_calls.map(
      (call) => `    → ${call.name} [${call.id}] ${oneLine(call.args, LINE_CHARS - 20)}`,
    ),
  ];
}

/**
 * The subagent whose steps `steps <first> [second]` asks for: `<run> <task>` (or a subagent's id and a
 * nested task), a subagent's or a batch item's own id, or `<batch> <key>` (that item's latest attempt).
 */
async function stepsWorkflowId(
  client: Client,
  address: string,
  first: string,
  second: string | undefined,
): Promise<string> {
  const { kind } = await identify(client, first);
  if (kind.kind === 'unknown') throw new UsageError(`steps: no run or subagent ${first} on ${address}`);
  if (second === undefined) {
    if (kind.kind === 'subagent' || kind.kind === 'subagent_fork' || kind.kind === 'batch_item') return first;
    if (kind.kind === 'lead')
      throw new UsageError(
        `steps: give a task id too: subagents steps ${first} <task-id> (task ids: subagents ledger ${first})`,
      );
    if (kind.kind === 'batch')
      throw new UsageError(
        `steps: ${first} is ${kindText(kind)}: give an item's key too: subagents steps ${first} <key> ` +
          `(keys: subagents batch status ${first})`,
      );
  } else {
    if (kind.kind === 'lead' || kind.kind === 'subagent') return subagentWorkflowId(first, second);
    if (kind.kind === 'batch') {
      const latest = await latestBatchItemAttempt(client, first, second);
      if (latest === undefined)
        throw new UsageError(
          `steps: batch ${first} has no item ${second} that has started (keys: subagents batch status ${first})`,
        );
      return latest;
    }
  }
  throw new UsageError(`steps: ${first} is ${kindText(kind)}: it has no steps (lead runs: subagents list)`);
}

export async function stepsCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseFlags(
    args,
    { follow: { type: 'boolean' } } satisfies FlagSpec,
    'steps',
  );
  if (positionals.length < 1 || positionals.length > 2)
    throw new UsageError(
      "steps: give a run id and a task id, or a subagent's id: subagents steps <run-id> <task-id>",
    );
  const asJson = values.json === true;
  const settings = await requireServer('steps', loadCommandConfig(values));
  const { client, connection } = await connectClient(settings);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const say = (line: string) => process.stderr.write(`${line}\n`);
  try {
    const workflowId = await stepsWorkflowId(client, settings.address, positionals[0], positionals[1]);
    const handle = client.workflow.getHandle(workflowId);
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (err instanceof WorkflowNotFoundError)
        throw new UsageError(
          `steps: no subagent ${workflowId} on ${settings.address} (task ids: subagents ledger ${positionals[0]})`,
        );
      throw err;
    }
    const status = description.status.name;
    if (status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW') {
      const closed = await closedSubagentSteps(client, handle);
      if (asJson) {
        out(
          JSON.stringify(
            { workflow_id: workflowId, source: 'history', execution_status: status, ...closed },
            null,
            2,
          ),
        );
        return 0;
      }
      for (const step of closed.steps) for (const line of stepLines(step)) out(line);
      for (const what of closed.missing) out(`(missing: ${what})`);
      out(
        closed.result
          ? outcomeLine(workflowId, closed.result)
          : `${workflowId}: ${status.toLowerCase()}: ${closed.error}`,
      );
      return 0;
    }
    const noWorker = (silentForMs?: number) =>
      noWorkerMessage({
        command: 'steps',
        runId: `subagent ${workflowId}`,
        address: settings.address,
        namespace: settings.namespace,
        taskQueue: description.taskQueue,
        configFile: stringFlag(values, 'config'),
        ...(silentForMs !== undefined && { silentForMs }),
      });
    // Whether a worker polls is asked once; one that dies while this follows shows as no answer in time.
    let seenLive = false;
    const within = async <T>(read: () => Promise<T>) => {
      const asked = await askWorker(client, settings.namespace, description.taskQueue, read, { seenLive });
      seenLive = true;
      if (asked.answered) return asked.value;
      throw new InspectionError(noWorker(asked.why === 'no_answer' ? QUERY_DEADLINE_MS : undefined));
    };
    let seen = 0;
    let unreadable = false;
    for (;;) {
      const { source, progress, steps, unavailable } = await openSubagentSteps(client, handle, seen, within);
      if (unavailable !== undefined && !unreadable) {
        say(`subagents: ${workflowId}: ${unavailable}`);
        unreadable = true;
      }
      if (!values.follow && asJson) {
        out(JSON.stringify({ workflow_id: workflowId, source, progress, steps }, null, 2));
        return 0;
      }
      for (const step of steps) {
        seen = step.seq;
        // Followed: one JSON line per step, as `events --follow` prints events.
        if (asJson) out(JSON.stringify(step));
        else for (const line of stepLines(step)) out(line);
      }
      if (!values.follow) return 0;
      if (progress.state === 'finished' && seen >= progress.last_seq) {
        const result = await subagentResult(handle);
        if (asJson) say(outcomeLine(workflowId, result));
        else out(outcomeLine(workflowId, result));
        return 0;
      }
      await new Promise((resolve) => setTimeout(resolve, FOLLOW_POLL_MS));
    }
  } catch (err) {
    if (!(err instanceof InspectionError)) throw err;
    say(`subagents: ${err.message}`);
    return 1;
  } finally {
    await connection.close();
  }
}
