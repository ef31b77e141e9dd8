import { constants, existsSync } from 'node:fs';
import { mkdir, open, readlink, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { errorCode, type FileRequest } from './file-errors';
import { ToolError, type ToolContext } from './tool-context';

/** A path the model named, checked lexically to lie inside the workspace; links are judged when it is opened. */
export interface WorkspacePath extends FileRequest {
  /** The names from the workspace root down, `.` and `..` resolved; empty for the root itself. */
  components: string[];
}

/**
 * How each name is looked up. Anchored (Linux): relative to the directory already opened, through
 * `/proc/self/fd/<fd>/<name>`, which names that directory's inode whatever is renamed or swapped meanwhile.
 * Unanchored (no `/proc`, e.g. macOS): by the path from the workspace root, checked one name at a time, so a
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

/** Either root: the workspace as configured or as resolved (they differ when the configured path has a link). */
function workspaceNames(ctx: ToolContext, candidate: string): string[] | undefined {
  return namesInside(ctx.workspaceReal, candidate) ?? namesInside(ctx.workspace, candidate);
}

/**
 * Checks the path the model named: `..` and absolute paths elsewhere are refused here, before anything is
 * opened. Symbolic links are dealt with by `openInWorkspace`, at the moment of opening.
 */
export function resolveInWorkspace(ctx: ToolContext, tool: string, requested: string): WorkspacePath {
  if (requested.includes('\0'))
    throw new ToolError(`path ${JSON.stringify(requested)} contains a NUL character`);
  const components = workspaceNames(ctx, path.resolve(ctx.workspace, requested));
  if (components === undefined) {
    throw new ToolError(
      `path "${requested}" is outside the workspace; use a path relative to the workspace, e.g. "notes.md" or "src/index.ts"`,
    );
  }
  return { tool, requested, components };
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
  ctx: ToolContext,
  components: string[],
  openLast: OpenLast<T>,
  createParents: boolean,
): Promise<{ opened: T } | LinkFound> {
  let dir: FileHandle = await open(ctx.workspaceReal, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    for (let i = 0; i < components.length; i += 1) {
      const at = lookups.anchored
        ? `/proc/self/fd/${dir.fd}/${components[i]}`
        : path.join(ctx.workspaceReal, ...components.slice(0, i + 1));
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
 * Opens a workspace path safely against a concurrent process in the same workspace: every directory on the way
 * is opened with O_NOFOLLOW relative to the one before (see `lookups`), and `openLast` opens the last name with
 * O_NOFOLLOW, so no link is ever followed by the kernel. A link met on the way is resolved here: its target, if
 * inside the workspace, is walked again from the root (at most 40 links); a target outside is refused.
 * Missing folders on the way are created when `createParents` is set.
 */
export async function openInWorkspace<T>(
  ctx: ToolContext,
  target: WorkspacePath,
  openLast: OpenLast<T>,
  createParents = false,
): Promise<T> {
  let components = target.components;
  for (let hops = 0; ; hops += 1) {
    // The root is the configured workspace itself, not something a process inside it can rename.
    if (components.length === 0) return openLast(ctx.workspaceReal);
    const found = await walkOnce(ctx, components, openLast, createParents);
    if ('opened' in found) return found.opened;
    if (hops === MAX_LINK_HOPS) {
      throw new ToolError(`path "${target.requested}" runs into a loop of symbolic links`);
    }
    const names = workspaceNames(ctx, path.resolve(ctx.workspaceReal, ...found.walked, found.target));
    if (names === undefined) {
      throw new ToolError(`path "${target.requested}" leads outside the workspace through a symbolic link`);
    }
    components = [...names, ...found.rest];
  }
}

/** A path by which the directory open in `handle` can be listed; `openedAt` is where it was opened. */
export function directoryPath(handle: FileHandle, openedAt: string): string {
  return lookups.anchored ? `/proc/self/fd/${handle.fd}` : openedAt;
}
