import { constants, existsSync } from 'node:fs';
import { mkdir, open, readlink, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { errorCode, type FileRequest } from './file-errors';
import { mountOf, readOnlyFolderOf, readOnlyMountError, type MountInUse } from './skill-mounts';
import { ToolError, type ToolContext } from './tool-context';

/**
 * The folder a path is confined to: the workspace, or a skill mount (read-only, at its container path). Its
 * `configured` and `real` paths differ when the configured one has a link in it.
 */
export interface FileRoot {
  configured: string;
  /** With every link resolved: confinement is checked against it, and walks start from it. */
  real: string;
  /** The skill mount it is, when it is one: nothing under it may be written. */
  mount?: MountInUse;
}

/** A path the model named, checked lexically to lie inside its root; links are judged when it is opened. */
export interface WorkspacePath extends FileRequest {
  /** The workspace, or the skill mount the path names. */
  root: FileRoot;
  /** The names from the root down, `.` and `..` resolved; empty for the root itself. */
  components: string[];
}

/**
 * How each name is looked up. Anchored (Linux): relative to the directory already opened, through
 * `/proc/self/fd/<fd>/<name>`, which names that directory's inode whatever is renamed or swapped meanwhile.
 * Unanchored (no `/proc`, e.g. macOS): by the path from the root, checked one name at a time, so a
 * concurrent swap between two lookups can still win. Tests turn anchoring off to exercise the fallback.
 */
export const lookups = { anchored: existsSync('/proc/self/fd') };

/** As the kernel's own limit on links followed in one lookup. */
const MAX_LINK_HOPS = 40;
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Opening a link with O_NOFOLLOW fails with one of these (ENOTDIR with O_DIRECTORY, EEXIST with O_EXCL). */
const LINK_CODES: ReadonlySet<string> = new Set(['ELOOP', 'ENOTDIR', 'EEXIST']);

/** The path relative to `root` as names, or undefined when `candidate` is not inside it. */
function namesInside(root: string, candidate: string): string[] | undefined {
  const relative = path.relative(root, candidate);
  if (relative === '') return [];
  if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative))
    return undefined;
  return relative.split(path.sep);
}

/** Either form of the root: as configured or as resolved. */
function rootNames(root: FileRoot, candidate: string): string[] | undefined {
  return namesInside(root.real, candidate) ?? namesInside(root.configured, candidate);
}

/** How messages name a root: `the workspace`, or the mount's container path. */
export function rootName(root: FileRoot): string {
  return root.mount === undefined ? 'the workspace' : root.mount.container_path;
}

/**
 * Checks the path the model named: `..` and absolute paths elsewhere are refused here, before anything is
 * opened. A path under a skill mount's container path (`/mnt/skills/public/...`) names a file of that mount's
 * folder, confined to it as a workspace path is to the workspace. Symbolic links are dealt with by
 * `openInWorkspace`, at the moment of opening.
 */
export function resolveInWorkspace(ctx: ToolContext, tool: string, requested: string): WorkspacePath {
  if (requested.includes('\0'))
    throw new ToolError(`path ${JSON.stringify(requested)} contains a NUL character`);
  const absolute = path.resolve(ctx.workspace, requested);
  const mount = mountOf(ctx.mounts ?? [], absolute);
  if (mount !== undefined) {
    if (mount.hostReal === undefined) {
      throw new ToolError(
        `"${requested}" does not exist: no skills folder is mounted at ${mount.container_path} on this machine`,
      );
    }
    const root = { configured: mount.host_path, real: mount.hostReal, mount };
    const components = namesInside(mount.container_path, absolute) ?? [];
    return { tool, requested, root, components, place: mount.container_path };
  }
  const root = { configured: ctx.workspace, real: ctx.workspaceReal };
  const components = rootNames(root, absolute);
  if (components === undefined) {
    throw new ToolError(
      `path "${requested}" is outside the workspace; use a path relative to the workspace, e.g. "notes.md" or "src/index.ts"`,
    );
  }
  return { tool, requested, root, components };
}

/**
 * `resolveInWorkspace` for a tool that writes: a path under a skill mount, or beside the mounts (a new folder in
 * `/mnt/skills`), is refused as read-only.
 */
export function resolveForWriting(ctx: ToolContext, tool: string, requested: string): WorkspacePath {
  const folder = readOnlyFolderOf(ctx.mounts ?? [], path.resolve(ctx.workspace, requested));
  if (folder !== undefined) throw readOnlyMountError(tool, requested, folder);
  return resolveInWorkspace(ctx, tool, requested);
}

/** Opens the last name of a path, given the path to open it by; must not follow a link there (O_NOFOLLOW). */
export type OpenLast<T> = (at: string) => Promise<T>;

interface LinkFound {
  /** The names walked before the link: real directories. */
  walked: string[];
  target: string;
  rest: string[];
}

async function linkTarget(at: string): Promise<string | undefined> {
  try {
    return await readlink(at);
  } catch {
    // Not a link (EINVAL), or gone already: the caller reports the error that brought it here.
    return undefined;
  }
}

async function mkdirIfMissing(at: string): Promise<void> {
  try {
    await mkdir(at);
  } catch (err) {
    // A folder made meanwhile by someone else is as good; a file or link there is judged by the open.
    if (errorCode(err) !== 'EEXIST') throw err;
  }
}

/** One walk from the root: the opened result, or the first link met on the way. */
async function walkOnce<T>(
  root: FileRoot,
  components: string[],
  openLast: OpenLast<T>,
  createParents: boolean,
): Promise<{ opened: T } | LinkFound> {
  let dir: FileHandle = await open(root.real, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (let i = 0; i < components.length; i += 1) {
      const at = lookups.anchored
        ? `/proc/self/fd/${dir.fd}/${components[i]}`
        : path.join(root.real, ...components.slice(0, i + 1));
      try {
        if (i === components.length - 1) return { opened: await openLast(at) };
        if (createParents) await mkdirIfMissing(at);
        const parent = dir;
        dir = await open(at, DIRECTORY_FLAGS);
        await parent.close();
      } catch (err) {
        const target = LINK_CODES.has(errorCode(err) ?? '') ? await linkTarget(at) : undefined;
        if (target === undefined) throw err;
        return { walked: components.slice(0, i), target, rest: components.slice(i + 1) };
      }
    }
    throw new Error('walkOnce: no names to walk');
  } finally {
    await dir.close();
  }
}

/**
 * Opens a workspace (or skill mount) path safely against a concurrent process in the same workspace: every directory on the way
 * is opened with O_NOFOLLOW relative to the one before (see `lookups`), and `openLast` opens the last name with
 * O_NOFOLLOW, so no link is ever followed by the kernel. A link met on the way is resolved here: its target, if
 * inside the root, is walked again from the root (at most 40 links); a target outside is refused.
 * Missing folders on the way are created when `createParents` is set (never in a skill mount, read-only).
 */
export async function openInWorkspace<T>(
  target: WorkspacePath,
  openLast: OpenLast<T>,
  createParents = false,
): Promise<T> {
  const { root } = target;
  if (createParents && root.mount !== undefined)
    throw readOnlyMountError(target.tool, target.requested, root.mount.container_path);
  let components = target.components;
  for (let hops = 0; ; hops += 1) {
    // The root is the configured folder itself, not something a process inside it can rename.
    if (components.length === 0) return openLast(root.real);
    const found = await walkOnce(root, components, openLast, createParents);
    if ('opened' in found) return found.opened;
    if (hops === MAX_LINK_HOPS) {
      throw new ToolError(`path "${target.requested}" runs into a loop of symbolic links`);
    }
    const names = rootNames(root, path.resolve(root.real, ...found.walked, found.target));
    if (names === undefined) {
      throw new ToolError(
        `path "${target.requested}" leads outside ${rootName(root)} through a symbolic link`,
      );
    }
    components = [...names, ...found.rest];
  }
}

/** A path by which the directory open in `handle` can be listed; `openedAt` is where it was opened. */
export function directoryPath(handle: FileHandle, openedAt: string): string {
  return lookups.anchored ? `/proc/self/fd/${handle.fd}` : openedAt;
}
