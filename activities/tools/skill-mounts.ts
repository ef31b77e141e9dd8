/**
 * The run's skill folders as the tools see them (issue 30): each `SkillMount` makes a folder of the worker's
 * machine readable — never writable — at its container path (`/mnt/skills/public`, `/mnt/skills/custom`). The
 * file tools read it with the workspace's confinement (no `..` or link leads out of the folder) and refuse
 * every write; bubblewrap binds it read-only, just-bash mounts it read-only, and host bash (unsandboxed) sees
 * it through its paths rewritten (bash.ts).
 */
import { stat, realpath } from 'node:fs/promises';
import * as path from 'node:path';
import type { SkillMount } from '../../contracts/tools';
import { ToolError } from './tool-context';

/** One mount as the tools use it. */
export interface MountInUse {
  /** Where tools name it, absolute and normalized (`/mnt/skills/public`). */
  container_path: string;
  /** Its folder on this machine, as given. */
  host_path: string;
  /** The folder with every link resolved; undefined when it does not exist here (nothing is mounted). */
  hostReal?: string;
}

/** The one wording of a refused write, for every tool and sandbox that can say it. */
export const SKILLS_READ_ONLY = 'is read-only: skills cannot be changed from a sandbox';

/** What a file tool answers when asked to write under `folder` (a mount, or the folder the mounts are in). */
export function readOnlyMountError(tool: string, requested: string, folder: string): ToolError {
  return new ToolError(
    `${tool}: "${requested}" is in ${folder}, which ${SKILLS_READ_ONLY}; write to the workspace instead`,
  );
}

/**
 * The read-only folder a write to `absolute` would land in: its mount, or the folder holding the mounts
 * (`/mnt/skills`, where a new skill folder would go); undefined when it is neither.
 */
export function readOnlyFolderOf(mounts: readonly MountInUse[], absolute: string): string | undefined {
  const mount = mountOf(mounts, absolute);
  if (mount !== undefined) return mount.container_path;
  for (const { container_path } of mounts) {
    const parent = path.posix.dirname(container_path);
    if (parent !== '/' && isWithin(parent, absolute)) return parent;
  }
  return undefined;
}

function mountProblem(mount: SkillMount): string | undefined {
  const where = mount.container_path;
  if (!path.posix.isAbsolute(where) || path.posix.normalize(where) !== where || where === '/') {
    return `container_path ${JSON.stringify(where)} is not an absolute, normalized folder path other than /`;
  }
  if (!path.isAbsolute(mount.host_path) || mount.host_path.includes('\0')) {
    return `host_path ${JSON.stringify(mount.host_path)} is not an absolute path`;
  }
  return undefined;
}

/**
 * The mounts of a tool call, longest container path first (the most specific wins). A host folder that is
 * missing (a user without custom skills) leaves its mount empty. A malformed mount is a fault of the caller
 * (the workflow), thrown as such.
 */
export async function mountsInUse(mounts: readonly SkillMount[] | undefined): Promise<MountInUse[]> {
  const found: MountInUse[] = [];
  for (const mount of mounts ?? []) {
    const problem = mountProblem(mount);
    if (problem !== undefined) throw new Error(`skill mount: ${problem}`);
    let hostReal: string | undefined;
    try {
      if ((await stat(mount.host_path)).isDirectory()) hostReal = await realpath(mount.host_path);
    } catch {
      // Missing or unreadable: an empty mount.
    }
    found.push({
      container_path: mount.container_path,
      host_path: mount.host_path,
      ...(hostReal && { hostReal }),
    });
  }
  return found.sort((a, b) => b.container_path.length - a.container_path.length);
}

/** Whether `candidate` (absolute, normalized) is `folder` or lies inside it. */
function isWithin(folder: string, candidate: string): boolean {
  return candidate === folder || candidate.startsWith(`${folder}/`);
}

/** The mount `absolute` (a normalized absolute path) lies in, if any. */
export function mountOf(mounts: readonly MountInUse[], absolute: string): MountInUse | undefined {
  return mounts.find((mount) => isWithin(mount.container_path, absolute));
}

/**
 * The folders above the (non-empty) mounts that `absolute` names (e.g. `/mnt/skills` above `/mnt/skills/public`): their
 * entries, the next name down towards each mount; undefined when `absolute` is above none.
 */
export function entriesAboveMounts(mounts: readonly MountInUse[], absolute: string): string[] | undefined {
  const prefix = absolute === '/' ? '/' : `${absolute}/`;
  const names = new Set<string>();
  for (const mount of mounts) {
    // An empty mount is not there, as in bubblewrap and just-bash.
    if (mount.hostReal !== undefined && mount.container_path.startsWith(prefix)) {
      names.add(mount.container_path.slice(prefix.length).split('/')[0]);
    }
  }
  return names.size === 0 ? undefined : [...names].sort();
}

/** bubblewrap's arguments for the mounts: each existing folder bound read-only at its container path. */
export function bubblewrapMountArgs(mounts: readonly MountInUse[]): string[] {
  // Shortest first: a mount inside another is bound over it, not under it.
  return [...mounts]
    .reverse()
    .flatMap((mount) =>
      mount.hostReal === undefined ? [] : ['--ro-bind', mount.hostReal, mount.container_path],
    );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * For host bash, which has no mount namespace: the command with each container path (as a whole path
 * prefix, not inside a longer name) replaced by its host folder, as DeerFlow's local sandbox does. An empty
 * mount's paths stay as they are (and are not found).
 */
export function hostCommand(command: string, mounts: readonly MountInUse[]): string {
  let rewritten = command;
  for (const mount of mounts) {
    if (mount.hostReal === undefined) continue;
    const pattern = new RegExp(`(?<![\\w./-])${escapeRegExp(mount.container_path)}(?![\\w.-])`, 'g');
    rewritten = rewritten.replace(pattern, () => mount.hostReal as string);
  }
  return rewritten;
}

/** Host bash's output with the host folders named by their container paths again. */
export function containerOutput(output: string, mounts: readonly MountInUse[]): string {
  let text = output;
  const hostPaths = mounts.flatMap((mount) =>
    mount.hostReal === undefined
      ? []
      : [...new Set([mount.hostReal, mount.host_path])].map((host) => ({ host, mount })),
  );
  // Longest first, so that a folder inside another is named by its own mount.
  for (const { host, mount } of hostPaths.sort((a, b) => b.host.length - a.host.length)) {
    text = text.split(host).join(mount.container_path);
  }
  return text;
}
