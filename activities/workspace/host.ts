/**
 * The workspaces a worker process holds for runs homed on its host, and the protocol that keeps one run's files
 * where its history says they are (contracts/workspace.ts):
 *
 * - Placing: the first host a run asks takes epoch 1 (a create-if-absent record in the payload store), saves the
 *   folder as it is, and becomes its home.
 * - Serving: every workspace activity checks that no newer epoch exists (a host that lost the run refuses), that
 *   the folder is here (restoring it in place from the newest snapshot when this process does not hold it), and
 *   after a call that may have changed it saves what changed: blobs and a manifest, then the epoch's head record,
 *   then the fence again, so a call reported done on a host that lost the run in the meantime is never taken for
 *   done.
 * - Moving: when the home is gone, another host claims the next epoch first and only then reads the newest head:
 *   a save that passed its fence check wrote its head before the claim, so the restore has it.
 *
 * Records: `workspaces/<run hash>/epoch-<n>` (the host that holds epoch n) and `head-<n>` (its newest manifest).
 */
import { createHash } from 'node:crypto';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import {
  SHARED_WORKSPACE_MARKER,
  WORKSPACE_FAILURES,
  type HomePlacement,
  type Relocation,
  type WorkspaceMovedDetails,
  type WorkspaceOutcome,
  type WorkspacePlacement,
  type WorkspaceRequest,
  type WorkspaceSave,
} from '../../contracts/workspace';
import type { RecordStore } from '../../payloads/records';
import type { SnapshotSettings, WorkspaceImage, WorkspaceImages } from './images';

/** How this worker serves workspaces: the mode its config says, and whether it saves them. */
export interface WorkspaceHostSettings {
  /** `anywhere`: the embedded worker (one process); `home`: a host of its own; `shared`: one filesystem. */
  mode: 'anywhere' | 'home' | 'shared';
  snapshots: boolean;
  snapshot: SnapshotSettings;
}

export interface WorkspaceHostDeps {
  hostId: string;
  /** This host's own task queue. */
  queue: string;
  settings: WorkspaceHostSettings;
  /** What saves and restores folders, and the store's records: needed in `home` mode only. */
  images?: WorkspaceImages;
  records?: RecordStore;
}

/** What this process holds of one run's workspace. */
interface Held {
  epoch: number;
  image?: WorkspaceImage;
  /** Settles once the folder is here (a restore may still run). */
  ready: Promise<void>;
  /** Saves one at a time: each is taken against the one before. */
  saving: Promise<unknown>;
}

interface HeadRecord {
  manifest: string;
  seq: number;
}

interface EpochRecord {
  host_id: string;
  queue: string;
}

function recordPrefix(runKey: string): string {
  return `workspaces/${createHash('sha256').update(runKey).digest('hex').slice(0, 40)}`;
}

const encode = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value), 'utf8');
const decode = <T>(bytes: Uint8Array): T => JSON.parse(Buffer.from(bytes).toString('utf8')) as T;

/** The marker file a run leaves at its workspace's root in `shared` mode. */
export function sharedMarkerPath(workspace: string, runKey: string): string {
  const name = createHash('sha256').update(runKey).digest('hex').slice(0, 40);
  return path.join(workspace, SHARED_WORKSPACE_MARKER, name);
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

/** Refuses a call the workflow must route again; never retried by the server (the route decides). */
function unavailable(message: string): ApplicationFailure {
  return ApplicationFailure.create({ message, type: WORKSPACE_FAILURES.unavailable, nonRetryable: true });
}

/** A served call's result with what the workflow must learn beside it: the placement it made, what it saved. */
export function withWorkspaceOutcome<T extends object>(served: {
  result: T;
  save?: WorkspaceSave;
  placed?: WorkspacePlacement;
}): T & WorkspaceOutcome {
  return {
    ...served.result,
    ...(served.placed && { workspace_placement: served.placed }),
    ...(served.save && { workspace_save: served.save }),
  };
}

/** The workspaces of a worker that serves every call of its runs itself (the embedded one): nothing saved. */
export function oneProcessWorkspaces(): WorkspaceHost {
  return new WorkspaceHost({
    hostId: hostname(),
    queue: '',
    settings: { mode: 'anywhere', snapshots: false, snapshot: { exclude: [], max_bytes: 0 } },
  });
}

export class WorkspaceHost {
  private readonly held = new Map<string, Held>();

  constructor(private readonly deps: WorkspaceHostDeps) {}

  private get images(): WorkspaceImages {
    if (!this.deps.images) throw new Error(`host ${this.deps.hostId} saves no workspaces (no images store)`);
    return this.deps.images;
  }

  private get records(): RecordStore {
    if (!this.deps.records)
      throw new Error(`host ${this.deps.hostId} places no workspaces (no record store)`);
    return this.deps.records;
  }

  get hostId(): string {
    return this.deps.hostId;
  }

  get settings(): WorkspaceHostSettings {
    return this.deps.settings;
  }

  /**
   * A run's placement, made by its first call to be served: on this host (its home in `home` mode), unless
   * another host's call placed it first. Idempotent per run.
   */
  async place(runKey: string, workspace: string): Promise<WorkspacePlacement> {
    const { settings } = this.deps;
    await mkdir(workspace, { recursive: true });
    if (settings.mode === 'anywhere') return { mode: 'anywhere', run_key: runKey };
    if (settings.mode === 'shared') {
      const marker = sharedMarkerPath(workspace, runKey);
      await mkdir(path.dirname(marker), { recursive: true });
      await writeFile(marker, `${runKey}\n`);
      return { mode: 'shared', run_key: runKey };
    }
    const prefix = recordPrefix(runKey);
    const mine: EpochRecord = { host_id: this.deps.hostId, queue: this.deps.queue };
    if (!(await this.records.create(`${prefix}/epoch-1`, encode(mine)))) {
      // Placed already (this step retried): whoever holds the newest epoch is the home.
      return this.newestPlacement(runKey, 1, settings.snapshots);
    }
    const placement: HomePlacement = {
      mode: 'home',
      run_key: runKey,
      host_id: mine.host_id,
      queue: mine.queue,
      epoch: 1,
      snapshots: settings.snapshots,
    };
    const held: Held = { epoch: 1, ready: Promise.resolve(), saving: Promise.resolve() };
    this.held.set(runKey, held);
    if (settings.snapshots) await this.save(placement, workspace, held);
    return placement;
  }

  /**
   * A fork's workspace (docs/fork.md): another run's save (`manifest`) restored into the new folder `workspace`,
   * which is then placed here as run `runKey`'s, its first snapshot what was restored.
   */
  async placeRestored(runKey: string, workspace: string, manifest: string): Promise<WorkspacePlacement> {
    await mkdir(workspace, { recursive: true });
    await this.images.materialize(workspace, manifest, this.deps.settings.snapshot);
    return this.place(runKey, workspace);
  }

  /**
   * Runs `work` on the run's workspace here, as its placement says (an unplaced run is placed here first), and
   * saves what it changed when `mutating`. Throws `WorkspaceMoved` when the workspace lives elsewhere (this host
   * holds an older epoch, or another host placed it), `WorkspaceUnavailable` when the folder is neither here nor
   * restorable.
   */
  async serve<T>(
    request: WorkspaceRequest,
    workspace: string,
    mutating: boolean,
    work: () => Promise<T>,
  ): Promise<{ result: T; save?: WorkspaceSave; placed?: WorkspacePlacement }> {
    if (request.mode !== 'unplaced') return this.served(request, workspace, mutating, work);
    const placed = await this.place(request.run_key, workspace);
    if (placed.mode === 'home' && placed.host_id !== this.deps.hostId) {
      const details: WorkspaceMovedDetails = { placement: placed, ran: false };
      throw ApplicationFailure.create({
        message: `the run's workspace was placed on host ${placed.host_id}, not on host ${this.deps.hostId}`,
        type: WORKSPACE_FAILURES.moved,
        nonRetryable: true,
        details: [details],
      });
    }
    return { ...(await this.served(placed, workspace, mutating, work)), placed };
  }

  private async served<T>(
    placement: WorkspacePlacement,
    workspace: string,
    mutating: boolean,
    work: () => Promise<T>,
  ): Promise<{ result: T; save?: WorkspaceSave }> {
    if (placement.mode === 'anywhere') {
      if (!(await exists(workspace))) {
        throw unavailable(
          `the workspace ${workspace} does not exist on host ${this.deps.hostId}: it was made when the run ` +
            'started and is gone (deleted, or this is another machine)',
        );
      }
      return { result: await work() };
    }
    if (placement.mode === 'shared') {
      if (!(await exists(sharedMarkerPath(workspace, placement.run_key)))) {
        throw unavailable(
          `host ${this.deps.hostId} cannot see the run's workspace ${workspace} (no marker ` +
            `${SHARED_WORKSPACE_MARKER}/ from the run's start there): is the shared filesystem mounted on this host?`,
        );
      }
      return { result: await work() };
    }
    if (placement.host_id !== this.deps.hostId) {
      // A local try from a workflow that runs elsewhere (workflows/workspace-route.ts): not run, sent home.
      const details: WorkspaceMovedDetails = { placement, ran: false };
      throw ApplicationFailure.create({
        message: `the run's workspace lives on host ${placement.host_id}, not on host ${this.deps.hostId}`,
        type: WORKSPACE_FAILURES.moved,
        nonRetryable: true,
        details: [details],
      });
    }
    await this.fence(placement, false);
    const held = await this.hold(placement, workspace);
    const result = await work();
    if (!mutating || !placement.snapshots) return { result };
    const save = await this.save(placement, workspace, held);
    await this.fence(placement, true);
    return { result, save };
  }

  /**
   * Keeps the run's workspace at `placement` when its home still lives; else moves it to this host: claims the
   * next epoch, then restores the newest snapshot here. Without a snapshot to restore, waits for the home to
   * return (a retryable failure: the activity's retries are the wait).
   */
  async relocate(
    placement: HomePlacement,
    workspace: string,
    homeAlive: () => Promise<boolean>,
  ): Promise<Relocation> {
    const newest = await this.newestPlacement(placement.run_key, placement.epoch, placement.snapshots);
    if (newest.mode === 'home' && newest.epoch > placement.epoch) return { placement: newest };
    if (await homeAlive()) return { placement };
    const prefix = recordPrefix(placement.run_key);
    if ((await this.newestHead(prefix, placement.epoch)) === undefined) {
      throw ApplicationFailure.create({
        message:
          `the workspace of run ${placement.run_key} lived on host ${placement.host_id}, which is gone, and no ` +
          `snapshot of it exists${placement.snapshots ? '' : ' (workspace.snapshots is off)'}: waiting for host ` +
          `${placement.host_id} to return`,
        type: WORKSPACE_FAILURES.unavailable,
      });
    }
    const epoch = placement.epoch + 1;
    const mine: EpochRecord = { host_id: this.deps.hostId, queue: this.deps.queue };
    if (!(await this.records.create(`${prefix}/epoch-${epoch}`, encode(mine)))) {
      return { placement: await this.newestPlacement(placement.run_key, epoch, placement.snapshots) };
    }
    const moved: HomePlacement = { ...placement, host_id: mine.host_id, queue: mine.queue, epoch };
    const started = Date.now();
    // Read after the claim: every save the old home finished passed its fence before it, so its head is here.
    const head = await this.newestHead(prefix, placement.epoch);
    let resolveReady: () => void = () => undefined;
    let rejectReady: (err: unknown) => void = () => undefined;
    const held: Held = {
      epoch,
      ready: new Promise<void>((resolve, reject) => {
        resolveReady = resolve;
        rejectReady = reject;
      }),
      saving: Promise.resolve(),
    };
    held.ready.catch(() => undefined);
    this.held.set(placement.run_key, held);
    try {
      await mkdir(workspace, { recursive: true });
      if (head) {
        held.image = await this.images.materialize(workspace, head.manifest, this.deps.settings.snapshot);
        await this.records.put(`${prefix}/head-${epoch}`, encode(head));
      }
      resolveReady();
    } catch (err) {
      rejectReady(err);
      this.held.delete(placement.run_key);
      throw err;
    }
    return {
      placement: moved,
      moved: {
        from_host: placement.host_id,
        files: held.image?.files ?? 0,
        bytes: held.image?.bytes ?? 0,
        ms: Date.now() - started,
        ...(head && { manifest: head.manifest }),
      },
    };
  }

  /** Refuses the call when a newer epoch exists: the run's workspace lives elsewhere now. */
  private async fence(placement: HomePlacement, ran: boolean): Promise<void> {
    const prefix = recordPrefix(placement.run_key);
    const next = await this.records.get(`${prefix}/epoch-${placement.epoch + 1}`);
    if (next === undefined) return;
    this.held.delete(placement.run_key);
    const current = await this.newestPlacement(placement.run_key, placement.epoch + 1, placement.snapshots);
    const where =
      current.mode === 'home' ? `host ${current.host_id} (epoch ${current.epoch})` : 'another host';
    const details: WorkspaceMovedDetails = { placement: current, ran };
    throw ApplicationFailure.create({
      message: ran
        ? `host ${this.deps.hostId} lost the run's workspace to ${where} while the call ran: its changes are not in the workspace`
        : `host ${this.deps.hostId} no longer holds the run's workspace (epoch ${placement.epoch}): it lives on ${where}`,
      type: WORKSPACE_FAILURES.moved,
      nonRetryable: true,
      details: [details],
    });
  }

  /** The run's workspace held by this process at `placement`'s epoch: restored in place when it is not. */
  private async hold(placement: HomePlacement, workspace: string): Promise<Held> {
    const known = this.held.get(placement.run_key);
    if (known && known.epoch === placement.epoch) {
      await known.ready;
      return known;
    }
    // This process does not hold it (it restarted under the same host id): the folder is made what the newest
    // snapshot says; without snapshots the folder as it is stands, when it exists. Held at once, so calls that
    // come meanwhile wait for the same restore.
    const held: Held = { epoch: placement.epoch, ready: Promise.resolve(), saving: Promise.resolve() };
    held.ready = (async () => {
      const head = await this.newestHead(recordPrefix(placement.run_key), placement.epoch);
      if (head) {
        held.image = await this.images.materialize(workspace, head.manifest, this.deps.settings.snapshot);
      } else if (!(await exists(workspace))) {
        throw unavailable(
          `the workspace ${workspace} of run ${placement.run_key} is not on host ${this.deps.hostId} and no ` +
            'snapshot of it exists',
        );
      }
    })();
    this.held.set(placement.run_key, held);
    try {
      await held.ready;
    } catch (err) {
      if (this.held.get(placement.run_key) === held) this.held.delete(placement.run_key);
      throw err;
    }
    return held;
  }

  /** Saves what changed since the last save, one save at a time per run, and moves the epoch's head to it. */
  private save(placement: HomePlacement, workspace: string, held: Held): Promise<WorkspaceSave> {
    const run = async (): Promise<WorkspaceSave> => {
      const outcome = await this.images.save(workspace, this.deps.settings.snapshot, held.image);
      if (outcome.over_cap) {
        const last = held.image;
        return {
          manifest: last?.manifest ?? '',
          seq: last?.seq ?? 0,
          changed: 0,
          over_cap: outcome.over_cap,
        };
      }
      held.image = outcome.image;
      if (!outcome.unchanged) {
        const head: HeadRecord = { manifest: outcome.image.manifest, seq: outcome.image.seq };
        await this.records.put(`${recordPrefix(placement.run_key)}/head-${placement.epoch}`, encode(head));
      }
      return { manifest: outcome.image.manifest, seq: outcome.image.seq, changed: outcome.changed };
    };
    const saved = held.saving.then(run, run);
    held.saving = saved.catch(() => undefined);
    return saved;
  }

  /** The newest head written at an epoch ≤ `epoch`. */
  private async newestHead(prefix: string, epoch: number): Promise<HeadRecord | undefined> {
    for (let at = epoch; at >= 1; at -= 1) {
      const bytes = await this.records.get(`${prefix}/head-${at}`);
      if (bytes) return decode<HeadRecord>(bytes);
    }
    return undefined;
  }

  /** The placement of the newest epoch claimed from `from` on. */
  private async newestPlacement(
    runKey: string,
    from: number,
    snapshots: boolean,
  ): Promise<WorkspacePlacement> {
    const prefix = recordPrefix(runKey);
    let epoch = from;
    let record: EpochRecord | undefined;
    for (;;) {
      const bytes = await this.records.get(`${prefix}/epoch-${epoch}`);
      if (!bytes) break;
      record = decode<EpochRecord>(bytes);
      epoch += 1;
    }
    if (!record) throw new Error(`the workspace of run ${runKey} has no epoch ${from} in the payload store`);
    return {
      mode: 'home',
      run_key: runKey,
      host_id: record.host_id,
      queue: record.queue,
      epoch: epoch - 1,
      snapshots,
    };
  }
}
