/** A closed run's task events, rebuilt from its result (`events`, and the live stream of a run read after its end). */
import type { NewTaskEvent, TaskEvent, ToolDecisionEvent } from '../contracts/events';
import type { LedgerEntry } from '../contracts/ledger';

/**
 * The run's events as its result shows them once it has closed: per delegation `task_started` (a batch:
 * `batch_started`) and the terminal event it ended with, and the decisions on its tool calls (`tool_approved`,
 * `tool_denied`: the result's `decisions`), in time order and numbered from 1. Progress (`task_queued`,
 * `task_running`) lives only in the workflow's state, which a closed run keeps on no worker.
 */
export function eventsFromLedger(
  ledger: readonly LedgerEntry[],
  decisions: readonly ToolDecisionEvent[] = [],
): TaskEvent[] {
  const timed: { at: string; order: number; event: NewTaskEvent }[] = [];
  decisions.forEach(({ seq: _seq, ...event }, i) =>
    timed.push({ at: event.at, order: ledger.length * 2 + i, event }),
  );
  ledger.forEach((entry, i) => {
    const startedAt = entry.started_at ?? entry.created_at;
    if (entry.kind === 'batch') {
      timed.push({
        at: startedAt,
        order: i * 2,
        event: {
          type: 'batch_started',
          task_id: entry.id,
          at: startedAt,
          description: entry.description,
          subagent_type: entry.subagent_type,
          workflow_id: entry.workflow_id,
          items: entry.batch?.total ?? 0,
        },
      });
      if (entry.status !== 'in_progress' && entry.status !== 'queued') {
        timed.push({
          at: entry.updated_at,
          order: i * 2 + 1,
          event: {
            type: 'batch_finished',
            task_id: entry.id,
            at: entry.updated_at,
            status: entry.status === 'completed' || entry.status === 'cancelled' ? entry.status : 'failed',
            counts: entry.batch ?? { total: 0 },
            ...(entry.error && { error: entry.error }),
          },
        });
      }
      return;
    }
    if (!entry.admission_failure) {
      timed.push({
        at: startedAt,
        order: i * 2,
        event: {
          type: 'task_started',
          task_id: entry.id,
          at: startedAt,
          description: entry.description,
          subagent_type: entry.subagent_type,
          model_name: entry.model_name ?? '',
          workflow_id: entry.workflow_id,
        },
      });
    }
    if (entry.status === 'queued' || entry.status === 'in_progress') return;
    const type = entry.status === 'polling_timed_out' ? 'task_timed_out' : (`task_${entry.status}` as const);
    timed.push({
      at: entry.updated_at,
      order: i * 2 + 1,
      event: {
        type,
        task_id: entry.id,
        at: entry.updated_at,
        status: entry.status,
        turns: 0,
        ...(entry.stop_reason && { stop_reason: entry.stop_reason }),
        ...(entry.admission_failure && { admission_failure: true }),
        ...(entry.error && { error: entry.error }),
        ...(entry.result_brief && { result_brief: entry.result_brief }),
        ...(entry.model_name && { model_name: entry.model_name }),
        ...(entry.token_usage && { token_usage: entry.token_usage }),
      },
    });
  });
  timed.sort((a, b) => a.at.localeCompare(b.at) || a.order - b.order);
  return timed.map(({ event }, i) => ({ ...event, seq: i + 1 }) as TaskEvent);
}
