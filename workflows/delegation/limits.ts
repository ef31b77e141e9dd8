/**
 * The lead's delegation limits (DeerFlow's SubagentLimitMiddleware), checked on each response before any
 * child starts, so a refused call leaves no half-made child behind.
 */
import type { AssistantMessage, ToolCall } from '../../contracts/messages';
import { TASK_TOOL_NAME } from '../../contracts/tools';

/** Appended to the assistant message when a response asks for delegations after the run's total is spent. */
export const SUBAGENT_LIMIT_NOTE =
  '[SUBAGENT LIMIT REACHED] The subagent delegation limit for this run has been reached. Continue using the ' +
  'subagent results already collected, execute remaining simple work directly, or summarize the remaining ' +
  'work instead of launching more subagents.';

export interface DelegationLimits {
  /** `task` calls one response may contain. */
  maxConcurrent: number;
  /** Delegations the run may make in total. */
  maxTotalPerRun: number;
  /** This run's delegations before this response (its ledger entries). */
  usedThisRun: number;
  /** Which calls delegate (default: `task`); tool loads share the limits with it. */
  isDelegation?: (call: ToolCall) => boolean;
}

const isTaskCall = (call: ToolCall): boolean => call.name === TASK_TOOL_NAME;

export interface DelegationLimitOutcome {
  /** The response with the calls that may not run removed. */
  message: AssistantMessage;
  /** The removed `task` calls, in the order the model issued them. */
  dropped: ToolCall[];
  /** The run's total was already spent: every `task` call is gone and the run ends (`subagent_limit_capped`). */
  capped: boolean;
  /** One line per gate that removed calls, for the worker's log. */
  log: string[];
}

function ids(calls: readonly ToolCall[]): string {
  return calls.map((call) => call.id).join(', ');
}

function taskCalls(count: number): string {
  return `${count} ${TASK_TOOL_NAME} ${count === 1 ? 'call' : 'calls'}`;
}

/** The message with only `keep` among its delegation calls; other tool calls stay where they were. */
function keepTaskCalls(
  message: AssistantMessage,
  keep: readonly ToolCall[],
  isDelegation: (call: ToolCall) => boolean,
): AssistantMessage {
  const calls = (message.tool_calls ?? []).filter((call) => !isDelegation(call) || keep.includes(call));
  const { tool_calls: _all, ...rest } = message;
  return calls.length > 0 ? { ...rest, tool_calls: calls } : rest;
}

/**
 * Applies the per-response concurrency limit and the per-run total to one response. Excess calls are removed
 * silently (a log line only); a response that asks for delegations after the total was already spent loses
 * every `task` call, gets the limit note, and ends the run as `subagent_limit_capped`.
 */
export function applyDelegationLimits(
  message: AssistantMessage,
  limits: DelegationLimits,
): DelegationLimitOutcome {
  const isDelegation = limits.isDelegation ?? isTaskCall;
  const tasks = (message.tool_calls ?? []).filter(isDelegation);
  if (tasks.length === 0) return { message, dropped: [], capped: false, log: [] };

  const { maxConcurrent, maxTotalPerRun, usedThisRun } = limits;
  const totals = `max_total_per_run = ${maxTotalPerRun}, ${usedThisRun} used before this response`;
  if (usedThisRun >= maxTotalPerRun) {
    const stripped = keepTaskCalls(message, [], isDelegation);
    const content =
      stripped.content === '' ? SUBAGENT_LIMIT_NOTE : `${stripped.content}\n\n${SUBAGENT_LIMIT_NOTE}`;
    return {
      message: { ...stripped, content },
      dropped: tasks,
      capped: true,
      log: [
        `removed ${taskCalls(tasks.length)}: the per-run total is spent (${totals}); ` +
          `the run stops as subagent_limit_capped: ${ids(tasks)}`,
      ],
    };
  }

  const log: string[] = [];
  const concurrent = tasks.slice(0, Math.max(0, maxConcurrent));
  const overConcurrency = tasks.slice(concurrent.length);
  if (overConcurrency.length > 0) {
    log.push(
      `dropped ${taskCalls(overConcurrency.length)} of ${tasks.length} beyond the per-response limit ` +
        `(max_concurrent = ${maxConcurrent}): ${ids(overConcurrency)}`,
    );
  }
  const kept = concurrent.slice(0, maxTotalPerRun - usedThisRun);
  const overTotal = concurrent.slice(kept.length);
  if (overTotal.length > 0) {
    log.push(
      `dropped ${taskCalls(overTotal.length)} beyond the per-run total (${totals}): ${ids(overTotal)}`,
    );
  }
  const dropped = [...overConcurrency, ...overTotal];
  if (dropped.length === 0) return { message, dropped, capped: false, log };
  return {
    message: keepTaskCalls(message, kept, isDelegation),
    dropped: tasks.filter((call) => dropped.includes(call)),
    capped: false,
    log,
  };
}

/** Whether a lead at `depth` may start a child: the child's depth (`depth + 1`) must not pass `maxDepth`. */
export function delegationDepthAllows(depth: number, maxDepth: number): boolean {
  return depth + 1 <= maxDepth;
}
