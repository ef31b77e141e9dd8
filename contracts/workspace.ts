/**
 * Where a run's workspace lives, as workflows and workspace activities agree on it (DESIGN §1, "A run's
 * workspace on many hosts"). The lead places the workspace as it starts; the placement travels in every
 * child's input and across continue-as-new, and changes only when its home host is lost.
 *
 * - `anywhere`: one process serves every call (the embedded worker): the folder must exist once placed.
 * - `home`: a home host per run; every workspace activity goes to its own task queue (`<task_queue>@<host_id>`),
 *   the folder is saved to the payload store after each call that may change it, and a lost home is replaced by
 *   a restore on a live host under a new epoch. A host that holds an older epoch refuses the call (fencing).
 * - `shared`: every host sees the same folder (NFS, EFS): no home, no snapshots; a host that cannot see the run's
 *   marker refuses the call instead of acting on an empty folder.
 *
 * Pure: no Node APIs.
 */
import { z } from 'zod';

export const WORKSPACE_MODES = ['local', 'shared'] as const;
export type WorkspaceMode = (typeof WORKSPACE_MODES)[number];

export const WORKSPACE_SNAPSHOT_SWITCHES = ['on', 'off', 'auto'] as const;
export type WorkspaceSnapshotSwitch = (typeof WORKSPACE_SNAPSHOT_SWITCHES)[number];

/** The snapshot cap when none is written: a workspace past it is not saved (said once in the run's events). */
export const DEFAULT_SNAPSHOT_MAX_BYTES = 2 * 1024 * 1024 * 1024;

/** A worker's `workspace:` settings, as its config resolves them (contracts/config). */
export interface WorkspaceSettings {
  mode: WorkspaceMode;
  snapshots: WorkspaceSnapshotSwitch;
  snapshot: { exclude: string[]; max_bytes: number };
}

export const DEFAULT_WORKSPACE_SETTINGS: WorkspaceSettings = {
  mode: 'local',
  snapshots: 'auto',
  snapshot: { exclude: [], max_bytes: DEFAULT_SNAPSHOT_MAX_BYTES },
};

/** The name of the marker (a folder, one file per run) a run leaves at its workspace's root in `shared` mode. */
export const SHARED_WORKSPACE_MARKER = '.subagents-workspace';

const HOST_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The placement's schema, built on each call: workflows share this module deep-frozen (worker/worker.ts,
 * PRELOADED_MODULES), and a zod schema must not be.
 */
export function workspacePlacementSchema() {
  return z.discriminatedUnion('mode', [
    z.object({ mode: z.literal('anywhere'), run_key: z.string().min(1) }),
    z.object({ mode: z.literal('shared'), run_key: z.string().min(1) }),
    z.object({
      mode: z.literal('home'),
      /** Whose workspace it is: the lead run's id (a batch's own id when no lead started it). */
      run_key: z.string().min(1),
      host_id: z.string().regex(HOST_ID),
      /** The home host's own task queue. */
      queue: z.string().min(1),
      /** From 1; a move to a new home adds one, and a host holding an older epoch refuses every call. */
      epoch: z.number().int().min(1),
      /** Whether the workspace is saved after each change (false: a lost home is waited for, not replaced). */
      snapshots: z.boolean(),
    }),
  ]);
}
export type WorkspacePlacement = z.infer<ReturnType<typeof workspacePlacementSchema>>;
export type HomePlacement = Extract<WorkspacePlacement, { mode: 'home' }>;

/**
 * Where a workspace call goes, as its activity's input says: a placement, or `unplaced` for a run's first calls
 * (the host that serves the first one places the workspace there and says so in its result). No step of its own:
 * a run pays nothing for being placed, and a history from before placements replays unchanged.
 */
export type WorkspaceRequest = WorkspacePlacement | { mode: 'unplaced'; run_key: string };

/** A worker host's own task queue: Temporal's worker-specific task queue for activities bound to its disk. */
export function hostTaskQueue(taskQueue: string, host: string): string {
  return `${taskQueue}@${host}`;
}

/** `worker.host_id`: letters, digits, `.`, `_`, `-`; up to 128, starting with a letter or digit. */
export function isHostId(value: string): boolean {
  return HOST_ID.test(value);
}

/** What a workspace activity reports beside its result (contracts/tools.ts and the others' results). */
export interface WorkspaceOutcome {
  /** The placement made by this call (it was the run's first to be served). */
  workspace_placement?: WorkspacePlacement;
  workspace_save?: WorkspaceSave;
}

/** What a workspace activity that may have changed the folder reports beside its result. */
export interface WorkspaceSave {
  /** The manifest that now describes the workspace (blob key), and its sequence number. */
  manifest: string;
  seq: number;
  /** Entries added, changed or removed by this save (0: nothing changed, nothing written). */
  changed: number;
  /** The workspace was over `workspace.snapshot.max_bytes`: nothing was saved. */
  over_cap?: { bytes: number; max_bytes: number };
}

/**
 * Failure types workspace activities throw, read by the workflows: they decide the route, not the agent.
 * - moved: this host holds an older epoch; details[0] is `{ placement, ran }` (ran: the call ran here first).
 * - unavailable: the workspace is neither here nor restorable now; the workflow waits and tries again.
 */
export const WORKSPACE_FAILURES = {
  moved: 'WorkspaceMoved',
  unavailable: 'WorkspaceUnavailable',
} as const;

/**
 * The failure type of an activity attempt failed by id because the worker holding it was lost
 * (worker/lost-workers.ts): lost as a timed-out attempt is, and known seconds sooner.
 */
export const WORKER_LOST_FAILURE = 'WorkerLost';

export interface WorkspaceMovedDetails {
  placement: WorkspacePlacement;
  ran: boolean;
}

/** What `relocateWorkspace` found: the home is alive (stay), or the workspace now lives elsewhere. */
export interface Relocation {
  placement: WorkspacePlacement;
  /** Set when this call moved it: where from, and what the restore took. */
  moved?: { from_host: string; files: number; bytes: number; ms: number; manifest?: string };
}
