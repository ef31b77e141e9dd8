/**
 * What an agent's workspace route finds (workflows/workspace-route.ts) that the run's operator must see: the
 * workspace moved to another host, or it passed its cap and is no longer saved. The lead logs it in its event
 * log and shows it in `status`; a subagent tells the lead directly (one signal, rare), as every agent of a run
 * shares one workspace.
 */
import { getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import type { TaskEvent, WorkspaceNotice } from '../contracts/events';
import type { LeadStatus } from '../contracts/lead';
import { workspaceNoticeSignal } from '../contracts/queries';
import type { WorkspaceRoute } from './workspace-route';

/** Sends what `route` finds to the lead's event log: `record` for the lead itself, a signal from a subagent. */
export function reportWorkspaceNotices(
  route: WorkspaceRoute,
  leadWorkflowId: string,
  record: ((notice: WorkspaceNotice) => void) | undefined,
): void {
  const { workflowId } = workflowInfo();
  const tell = (notice: WorkspaceNotice) => {
    if (workflowId === leadWorkflowId) record?.(notice);
    else
      void getExternalWorkflowHandle(leadWorkflowId)
        .signal(workspaceNoticeSignal, notice)
        .catch(() => undefined);
  };
  route.listen({
    moved: (placement, moved) => {
      // Only the workflow that moved it says so: the others learn of the move from a refusal.
      if (!moved || placement.mode !== 'home') return;
      tell({
        type: 'workspace_moved',
        at: new Date().toISOString(),
        from_host: moved.from_host,
        to_host: placement.host_id,
        epoch: placement.epoch,
        files: moved.files,
        bytes: moved.bytes,
        ms: moved.ms,
        workflow_id: workflowId,
      });
    },
    overCap: ({ bytes, max_bytes }) =>
      tell({
        type: 'workspace_not_saved',
        at: new Date().toISOString(),
        bytes,
        max_bytes,
        workflow_id: workflowId,
      }),
  });
}

/** Whether the log takes `notice`: a move once per epoch, "not saved" once per run. */
export function takesWorkspaceNotice(events: readonly TaskEvent[], notice: WorkspaceNotice): boolean {
  return !events.some(
    (event) =>
      event.type === notice.type &&
      (event.type !== 'workspace_moved' || notice.type !== 'workspace_moved' || event.epoch === notice.epoch),
  );
}

/** The lead's `status.workspace`: the newest home its log or its own route knows, and whether it is saved. */
export function workspaceStatus(
  route: WorkspaceRoute,
  events: readonly TaskEvent[],
): LeadStatus['workspace'] {
  const placement = route.placement;
  if (placement?.mode !== 'home') return undefined;
  let host = placement.host_id;
  let epoch = placement.epoch;
  let notSaved: { bytes: number; max_bytes: number } | undefined;
  for (const event of events) {
    if (event.type === 'workspace_moved' && event.epoch > epoch) {
      host = event.to_host;
      epoch = event.epoch;
    }
    if (event.type === 'workspace_not_saved') notSaved ??= { bytes: event.bytes, max_bytes: event.max_bytes };
  }
  return { host_id: host, epoch, ...(notSaved && { not_saved: notSaved }) };
}
