/**
 * Where an agent's workspace activities go (contracts/workspace.ts). With a `home` placement, every call that
 * touches the workspace goes to the home host's own task queue, a regular activity with a short
 * schedule-to-start deadline; when that deadline passes, or the attempt there is lost, `relocateWorkspace`
 * (on the shared queue) asks whether the home still lives and moves the workspace to a live host when not. A
 * call that never started is sent again, to wherever the workspace is now; one that started is reported as
 * interrupted, as today, unless it is idempotent. A host that holds an older epoch refuses (fencing), naming
 * where the workspace is: the route takes that placement and sends the call there.
 *
 * An idempotent call (`ls`, `read_file`, `glob`, …) with a `home` placement is first tried as a local activity,
 * on the worker that runs the workflow: when that worker is the home (one process, or a run that stayed where it
 * started) the call runs inside the workflow task, one task and one activity round trip less a turn. Elsewhere
 * the host refuses it at once (WorkspaceMoved, not run), and the route sends it, and every later call at that
 * placement, to the home's queue as before.
 *
 * Each workflow of the run keeps its own route, from the placement in its input; they agree through the payload
 * store's epoch records, never through each other.
 */
import {
  ActivityFailure,
  ApplicationFailure,
  patched,
  proxyActivities,
  sleep,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/common';
import type { ProjectActivities } from '../activities';
import {
  WORKER_LOST_FAILURE,
  WORKSPACE_FAILURES,
  type Relocation,
  type WorkspaceMovedDetails,
  type WorkspaceOutcome,
  type WorkspacePlacement,
  type WorkspaceRequest,
  type WorkspaceSave,
} from '../contracts/workspace';

/**
 * How long a call may wait for its home host's worker before the home is asked about. A busy but live home is
 * told from a dead one by its heartbeats (activities/workspace/home-liveness.ts), not by this deadline: on a
 * busy home the call is simply sent again.
 */
export const HOME_SCHEDULE_TO_START = '5 seconds';

/** Waits between tries while no host can serve the workspace (a shared mount missing, a home being waited for). */
const UNAVAILABLE_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000];

const relocation = proxyActivities<ProjectActivities>({
  // A restore of a large workspace takes a while; it heartbeats.
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '10 seconds',
  // "No snapshot and the home is gone" is retried: the retries are the wait for the home to return.
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', backoffCoefficient: 2 },
});

/**
 * Whose workspace a workflow's calls use: its input's (the run's, set by whoever started it from this project),
 * else its own as the root of a run: its workflow id and first execution's run id, so a workflow id used again
 * for a new run never meets the old run's workspace records.
 */
export function workspaceKey(input: {
  workspace_key?: string;
  workspace_placement?: WorkspacePlacement;
}): string {
  const info = workflowInfo();
  return (
    input.workspace_key ??
    input.workspace_placement?.run_key ??
    `${info.workflowId}@${info.firstExecutionRunId}`
  );
}

/** Where one call goes: as the caller runs it (no placement, or one process), or to the home's queue. */
export interface CallPlace {
  /** What the call's activity is told: where the workspace lives, or `unplaced` (its host places it). */
  placement: WorkspaceRequest;
  /** Set for a home: the call must be a regular activity with these options over the caller's. */
  home?: Pick<ActivityOptions, 'taskQueue' | 'scheduleToStartTimeout' | 'retry'>;
  /**
   * The call must be a regular activity on the shared queue (a host refused it for want of the workspace: a
   * local activity would ask the same host again).
   */
  regular?: boolean;
  /**
   * An idempotent call at a `home` placement may be a local activity (`home` is still set, for callers that
   * only make regular ones): the workflow's worker may be the home; if not, its host refuses at once.
   */
  local?: boolean;
}

/** Guards the local try of an idempotent call at a `home` placement (`WorkspaceRoute.run`). */
export const HOME_LOCAL_READS_PATCH = 'home-local-reads';

export interface WorkspaceRouteEvents {
  /** The workspace moved to another host (this route moved it, or learnt of it). */
  moved?: (placement: WorkspacePlacement, relocation?: Relocation['moved']) => void;
  /** A save found the workspace over its cap: nothing was saved. */
  overCap?: (overCap: NonNullable<WorkspaceSave['over_cap']>) => void;
}

function failureOf(err: ActivityFailure): ApplicationFailure | TimeoutFailure | undefined {
  const { cause } = err;
  return cause instanceof ApplicationFailure || cause instanceof TimeoutFailure ? cause : undefined;
}

export class WorkspaceRoute {
  private current: WorkspacePlacement | undefined;
  private events: WorkspaceRouteEvents = {};
  /** The newest save this agent's calls reported (status, fork points). */
  lastSave: WorkspaceSave | undefined;
  private overCapSaid = false;
  /** A host could not serve a call: from then on calls go where any host may take them. */
  private refused = false;
  /**
   * The epoch at which a local try was refused (this workflow's worker is not that home): no more local tries
   * until the workspace moves. 0: none refused yet (epochs start at 1).
   */
  private localRefusedEpoch = 0;

  constructor(
    placement: WorkspacePlacement | undefined,
    readonly workspace: string,
    /** Whose workspace it is: the lead run's id (a batch's own when no lead started it). */
    private readonly runKey: string,
  ) {
    this.current = placement;
  }

  /** Where the workspace is, as this agent knows it: for its children's inputs and its next execution. */
  get placement(): WorkspacePlacement | undefined {
    return this.current;
  }

  /** `{ workspace_placement }` for an input, when there is one. */
  inputField(): { workspace_placement?: WorkspacePlacement; workspace_key: string } {
    return { ...(this.current && { workspace_placement: this.current }), workspace_key: this.runKey };
  }

  listen(events: WorkspaceRouteEvents): void {
    this.events = { ...this.events, ...events };
  }

  /** Where a call goes now. */
  where(): CallPlace {
    const placement = this.current;
    if (placement?.mode !== 'home') {
      // Not placed yet: the host that serves this call places the workspace there, and its result says so.
      const request: WorkspaceRequest = placement ?? { mode: 'unplaced', run_key: this.runKey };
      return { placement: request, ...(this.refused && { regular: true }) };
    }
    return {
      placement,
      home: {
        taskQueue: placement.queue,
        scheduleToStartTimeout: HOME_SCHEDULE_TO_START,
        // Retried here, not by the server: a retry must follow the workspace if it moves.
        retry: { maximumAttempts: 1 },
      },
    };
  }

  /**
   * Runs one workspace call (`attempt`, given where it goes) until it has run where the workspace is. `idempotent`:
   * an attempt lost after it started may be made again; otherwise that loss is thrown to the caller.
   * `localTries`: the caller runs an idempotent call as a local activity when it is given no `home` (unplaced)
   * and when it is given `local` (a home placement, tried on this workflow's worker first).
   */
  async run<R>(
    attempt: (place: CallPlace) => Promise<R>,
    idempotent: boolean,
    localTries = false,
  ): Promise<R> {
    let waits = 0;
    for (;;) {
      const placement = this.current;
      const place = this.where();
      const local =
        localTries &&
        idempotent &&
        place.home !== undefined &&
        placement?.mode === 'home' &&
        placement.epoch !== this.localRefusedEpoch &&
        patched(HOME_LOCAL_READS_PATCH);
      // Whether this attempt runs on this workflow's worker: a refusal then says that worker is not the home.
      const here = local || (localTries && idempotent && !place.home && !place.regular);
      try {
        const result = await attempt(local ? { ...place, local: true } : place);
        const outcome = result as WorkspaceOutcome | undefined;
        if (outcome?.workspace_placement) this.adopt(outcome.workspace_placement);
        if (outcome?.workspace_save) this.saved(outcome.workspace_save);
        return result;
      } catch (err) {
        if (!(err instanceof ActivityFailure)) throw err;
        const failure = failureOf(err);
        if (failure instanceof ApplicationFailure && failure.type === WORKSPACE_FAILURES.moved) {
          const details = failure.details?.[0] as WorkspaceMovedDetails | undefined;
          if (details) this.adopt(details.placement);
          // This workflow's worker is not the home: the next calls go to the home's queue while it stays there.
          if (here && !details?.ran && this.current?.mode === 'home') {
            this.localRefusedEpoch = this.current.epoch;
          }
          if (details?.ran && !idempotent) throw err;
          continue;
        }
        if (failure instanceof ApplicationFailure && failure.type === WORKSPACE_FAILURES.unavailable) {
          this.refused = true;
          await sleep(UNAVAILABLE_BACKOFF_MS[Math.min(waits, UNAVAILABLE_BACKOFF_MS.length - 1)]);
          waits += 1;
          continue;
        }
        // Lost with its host: timed out, or failed at once by a watcher that saw its worker die.
        const lost =
          failure instanceof TimeoutFailure ||
          (failure instanceof ApplicationFailure && failure.type === WORKER_LOST_FAILURE);
        if (placement?.mode === 'home' && lost) {
          const found = await relocation.relocateWorkspace({ placement, workspace: this.workspace });
          this.adopt(found.placement, found.moved);
          const unstarted = failure instanceof TimeoutFailure && failure.timeoutType === 'SCHEDULE_TO_START';
          if (unstarted || idempotent) continue;
        }
        throw err;
      }
    }
  }

  private adopt(placement: WorkspacePlacement, moved?: Relocation['moved']): void {
    const before = this.current;
    // Another of the run's calls may have learnt of a newer epoch first: never go back to an older one.
    if (before?.mode === 'home' && placement.mode === 'home' && placement.epoch < before.epoch) return;
    this.current = placement;
    const changed =
      before?.mode === 'home' && placement.mode === 'home' ? placement.epoch > before.epoch : false;
    if (changed) this.events.moved?.(placement, moved);
  }

  private saved(save: WorkspaceSave): void {
    if (save.over_cap) {
      if (!this.overCapSaid) this.events.overCap?.(save.over_cap);
      this.overCapSaid = true;
      return;
    }
    if (this.lastSave === undefined || save.seq >= this.lastSave.seq) this.lastSave = save;
  }
}
