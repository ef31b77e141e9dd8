/**
 * How a worker process serves runs' workspaces (contracts/workspace.ts): its host id, the host's own task queue,
 * and the `WorkspaceHost` its activities share. `subagents worker` protects its runs' workspaces by default (a
 * home host per run, saved to the payload store after each change); the worker a command runs for itself is one
 * process on one disk and saves nothing unless the config says `workspace.snapshots: on`.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { WorkspaceHost, type WorkspaceHostSettings } from '../activities/workspace/host';
import { WorkspaceImages } from '../activities/workspace/images';
import type { PayloadSettings } from '../contracts/config/payloads';
import { hostTaskQueue, type WorkspaceSettings } from '../contracts/workspace';
import { openRecordStore } from '../payloads/records';
import { activityPayloadStore, payloadSettings } from '../payloads/store';

/** What a worker's config says of its host and its runs' workspaces. */
export interface WorkspaceHostingSettings {
  workspace: WorkspaceSettings;
  /** `worker.host_id`; absent: made from the host name and an id of this process's start. */
  hostId?: string;
}

/** A worker process's workspaces: the host they are served from, and its own task queue (none when it needs none). */
export interface WorkspaceHosting {
  host: WorkspaceHost;
  hostId: string;
  /** The host's own task queue, polled beside the shared one (`home` mode only). */
  queue?: string;
}

/**
 * The host name and six hex digits made when the process starts: two workers never share one (each has its own
 * disk as far as anyone can tell), and a restarted worker is a new host whose runs move by restore.
 */
export function defaultHostId(name: string = hostname()): string {
  const base = name.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '') || 'host';
  return `${base.slice(0, 120)}-${randomBytes(3).toString('hex')}`;
}

/** The host's settings: `standalone` is `subagents worker` (auto snapshots on), else a command's own worker. */
export function hostSettings(workspace: WorkspaceSettings, standalone: boolean): WorkspaceHostSettings {
  const snapshots = workspace.snapshots === 'auto' ? standalone : workspace.snapshots === 'on';
  const mode =
    workspace.mode === 'shared' ? 'shared' : standalone || workspace.snapshots === 'on' ? 'home' : 'anywhere';
  return { mode, snapshots: mode === 'home' && snapshots, snapshot: workspace.snapshot };
}

/** The workspaces a worker process serves on task queue `taskQueue`. */
export function workspaceHosting(
  settings: WorkspaceHostingSettings,
  taskQueue: string,
  standalone: boolean,
  payloads: PayloadSettings = payloadSettings(),
): WorkspaceHosting {
  const hostId = settings.hostId ?? defaultHostId();
  const host = hostSettings(settings.workspace, standalone);
  const queue = host.mode === 'home' ? hostTaskQueue(taskQueue, hostId) : undefined;
  return {
    hostId,
    ...(queue && { queue }),
    host: new WorkspaceHost({
      hostId,
      queue: queue ?? taskQueue,
      settings: host,
      images: new WorkspaceImages({ blobs: activityPayloadStore(payloads) }),
      records: openRecordStore(payloads),
    }),
  };
}

/** The worker's start line for its workspaces. */
export function describeWorkspaceHosting(hosting: WorkspaceHosting, store: string): string {
  const { settings } = hosting.host;
  if (settings.mode === 'shared') return `workspaces: shared filesystem (host ${hosting.hostId})`;
  if (settings.mode === 'anywhere') return `workspaces: on this machine (host ${hosting.hostId}), not saved`;
  const saved = settings.snapshots
    ? `saved to the ${store} after each change`
    : 'not saved (workspace.snapshots: off: a lost host is waited for)';
  return `workspaces: home host ${hosting.hostId} (task queue "${hosting.queue}"), ${saved}`;
}
