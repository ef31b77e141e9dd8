/**
 * What a fork reads of an original lead run's history: its model calls (each request, when it was scheduled,
 * its response) and the workspace saves its tool calls reported, payloads decoded with the worker client's
 * converter (and codec). Every execution of the run is read, first to last, through continue-as-new.
 */
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { tsToMs } from '@temporalio/common/lib/time';
import type { temporal } from '@temporalio/proto';
import type { ModelCallInput, ModelCallResult } from '../../contracts/model';
import type { WorkspaceSave } from '../../contracts/workspace';

/** The local activity that fills a run started with `{prompt}` alone (activities/lead-input.ts). */
const FILL_INPUT_ACTIVITY = 'fillLeadRunInput';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

/** One model call of the lead: its request, when it was scheduled (epoch ms), its response once it came. */
export interface ModelCallRecord {
  input: ModelCallInput;
  scheduledAtMs: number;
  result?: ModelCallResult;
}

/** A workspace save a call reported, and when its result reached history (epoch ms). */
export interface SaveRecord {
  save: WorkspaceSave;
  atMs: number;
}

export interface RunRecords {
  /** The first execution's input. */
  input: unknown;
  calls: ModelCallRecord[];
  saves: SaveRecord[];
}

/** Every execution's events of a workflow, first to last, walking back through continue-as-new. */
async function executionEvents(client: Client, workflowId: string): Promise<HistoryEvent[][]> {
  const executions: HistoryEvent[][] = [];
  for (let runId: string | undefined = undefined; ;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    executions.unshift(events);
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    if (!runId) return executions;
  }
}

function saveOf(result: unknown): WorkspaceSave | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const save = (result as { workspace_save?: WorkspaceSave }).workspace_save;
  return save && !save.over_cap && save.manifest !== '' ? save : undefined;
}

/** The model calls and workspace saves of a workflow's whole history (every execution). */
export async function readRunRecords(client: Client, workflowId: string): Promise<RunRecords> {
  const converter = client.workflow.options.loadedDataConverter;
  const decode = <T>(payloads: Payloads) => decodeFromPayloadsAtIndex<T>(converter, 0, payloads?.payloads);
  const records: RunRecords = { input: undefined, calls: [], saves: [] };
  const executions = await executionEvents(client, workflowId);
  records.input = await decode(executions[0]?.[0]?.workflowExecutionStartedEventAttributes?.input);
  for (const events of executions) {
    const calls = new Map<string, ModelCallRecord>();
    for (const event of events) {
      const atMs = tsToMs(event.eventTime);
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name === 'callModel') {
        const call = { input: await decode<ModelCallInput>(scheduled.input), scheduledAtMs: atMs };
        calls.set(String(event.eventId), call);
        records.calls.push(call);
        continue;
      }
      const completed = event.activityTaskCompletedEventAttributes;
      if (completed) {
        const result = await decode<unknown>(completed.result);
        const call = calls.get(String(completed.scheduledEventId));
        if (call) call.result = result as ModelCallResult;
        const save = saveOf(result);
        if (save) records.saves.push({ save, atMs });
        continue;
      }
      // Idempotent tools run as local activities: a marker holds each one's result.
      const marker = event.markerRecordedEventAttributes;
      if (marker?.markerName === 'core_local_activity' && marker.details?.result) {
        const result = await decode<unknown>(marker.details.result);
        const save = saveOf(result);
        if (save) records.saves.push({ save, atMs });
        // A run started with its prompt alone: the full input its worker's config filled in.
        const data = await decode<{ activity_type?: string }>(marker.details.data);
        if (data.activity_type === FILL_INPUT_ACTIVITY) records.input = result;
      }
    }
  }
  return records;
}

/** The workspace saves a workflow's history holds (a delegation's, whose files belong to the same run). */
export async function readSaves(client: Client, workflowId: string): Promise<SaveRecord[]> {
  try {
    return (await readRunRecords(client, workflowId)).saves;
  } catch {
    // A delegation whose history is gone (retention) adds nothing: the lead's own saves still count.
    return [];
  }
}
