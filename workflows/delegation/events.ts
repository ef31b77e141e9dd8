/**
 * The lead's event log as pure functions: append-only, numbered from 1, read with an `after_seq` cursor.
 * Plain JSON, so the log lives in workflow state and crosses continue-as-new as is.
 */
import type {
  NewTaskEvent,
  TaskEvent,
  TaskTerminalEvent,
  TerminalTaskEventType,
} from '../../contracts/events';
import type { SubagentStatus } from '../../contracts/status';
import { RESULT_BRIEF_MAX_CHARS, type SubagentResult } from '../../contracts/subagent';
import { truncateHeadTail } from '../../contracts/text';

const TERMINAL_EVENT_BY_STATUS: Record<SubagentStatus, TerminalTaskEventType> = {
  completed: 'task_completed',
  failed: 'task_failed',
  cancelled: 'task_cancelled',
  timed_out: 'task_timed_out',
  // The seeds' events have no separate polling timeout: to a reader it is a timeout like any other.
  polling_timed_out: 'task_timed_out',
};

/** The log with `event` added under the next sequence number. */
export function appendEvent(log: readonly TaskEvent[], event: NewTaskEvent): TaskEvent[] {
  const seq = log.length === 0 ? 1 : log[log.length - 1].seq + 1;
  return [...log, { ...event, seq }];
}

/** The event type that ends a task with this result. */
export function terminalEventFor(result: SubagentResult): TerminalTaskEventType {
  return TERMINAL_EVENT_BY_STATUS[result.status];
}

/** The terminal event of a task, with the result's structured fields. */
export function terminalEvent(
  taskId: string,
  result: SubagentResult,
  at: string,
): Omit<TaskTerminalEvent, 'seq'> {
  return {
    type: terminalEventFor(result),
    task_id: taskId,
    at,
    status: result.status,
    ...(result.stop_reason !== undefined && { stop_reason: result.stop_reason }),
    ...(result.admission_failure === true && { admission_failure: true as const }),
    ...(result.error !== undefined && { error: truncateHeadTail(result.error, RESULT_BRIEF_MAX_CHARS) }),
    ...(result.result_brief !== undefined && { result_brief: result.result_brief }),
    ...(result.model_name !== undefined && { model_name: result.model_name }),
    ...(result.token_usage !== undefined && { token_usage: result.token_usage }),
    turns: result.turns,
  };
}
