/**
 * What a folder holds, as a save or a restore sees it: one pass of `lstat` over every path (never following a
 * link), and the reading of one file's bytes without following a link either. Synchronous for the scan: inside
 * an activity, one pass of sync calls over a few thousand paths takes a few milliseconds, where as many
 * promises cost several times that.
 */
import { constants, lstatSync, readdirSync, readlinkSync, type BigIntStats } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ManifestEntry } from '../../contracts/workspace-snapshot';
import type { WorkspaceExcludes } from './exclude';

export interface TreeEntry {
  kind: 'file' | 'dir' | 'symlink';
  size: number;
  /** Permission bits only (`0o7777 & st_mode`). */
  mode: number;
  /** -1n when the file changed while it was read: it is read again on the next save. */
  mtime_ns: bigint;
  ino: number;
  /** A file's blob key (the sha256 of its content), once known. */
  blob?: string;
  /** A symlink's target, as text. */
  target?: string;
}

/** The `mtime_ns` of an entry whose content must be read again on the next save. */
export const UNSETTLED_MTIME = -1n;

/** Every path under `root` that `excludes` leaves in, relative and POSIX; sockets, FIFOs and devices are left out. */
export function scanTree(root: string, excludes: WorkspaceExcludes): Map<string, TreeEntry> {
  const tree = new Map<string, TreeEntry>();
  const walk = (dir: string, prefix: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (err) {
      // A folder removed or replaced while the scan went on: it is gone for this save.
      if (prefix !== '' && isGone(err)) return;
      throw new Error(`cannot list the workspace folder ${dir}: ${(err as Error).message}`);
    }
    for (const name of names) {
      const path = prefix === '' ? name : `${prefix}/${name}`;
      // Concatenated, not joined: `dir` is normalized already and `name` holds no slash (join is a hot spot).
      const absolute = `${dir}/${name}`;
      const stats = lstatSync(absolute, { bigint: true, throwIfNoEntry: false });
      if (stats === undefined) continue;
      const entry = treeEntryOf(stats, absolute);
      if (entry === undefined || excludes.excludes(path, entry.kind === 'dir')) continue;
      tree.set(path, entry);
      if (entry.kind === 'dir') walk(absolute, path);
    }
  };
  walk(resolve(root), '');
  return tree;
}

function treeEntryOf(stats: BigIntStats, absolute: string): TreeEntry | undefined {
  const kind = stats.isFile()
    ? 'file'
    : stats.isDirectory()
      ? 'dir'
      : stats.isSymbolicLink()
        ? 'symlink'
        : undefined;
  if (kind === undefined) return undefined;
  const entry: TreeEntry = {
    kind,
    size: kind === 'dir' ? 0 : Number(stats.size),
    mode: Number(stats.mode & 0o7777n),
    mtime_ns: stats.mtimeNs,
    ino: Number(stats.ino),
  };
  if (kind === 'symlink') {
    try {
      entry.target = readlinkSync(absolute);
    } catch (err) {
      if (isGone(err)) return undefined;
      throw err;
    }
  }
  return entry;
}

function isGone(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** A file's bytes and the entry that describes what was read. */
export interface ReadFile {
  bytes: Buffer;
  entry: TreeEntry;
}

/**
 * The file at `absolute`, read whole without following a link; undefined when it is gone or is no longer a
 * plain file (the next scan sees what stands there now). A file that changed while it was read keeps what was
 * read, marked unsettled so that the next save reads it again.
 */
export async function readTreeFile(absolute: string): Promise<ReadFile | undefined> {
  let handle;
  try {
    // O_NONBLOCK: a FIFO put where the scan saw a file would otherwise block the open until a writer came.
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (isGone(err) || code === 'ELOOP') return undefined;
    throw new Error(`cannot read the workspace file ${absolute}: ${(err as Error).message}`);
  }
  try {
    const before = await handle.stat({ bigint: true });
    if (!before.isFile()) return undefined;
    const bytes = await handle.readFile();
    const after = await handle.stat({ bigint: true });
    const entry = treeEntryOf(before, absolute) as TreeEntry;
    entry.size = bytes.length;
    if (
      after.mtimeNs !== before.mtimeNs ||
      after.size !== before.size ||
      BigInt(bytes.length) !== before.size
    )
      entry.mtime_ns = UNSETTLED_MTIME;
    return { bytes, entry };
  } finally {
    await handle.close();
  }
}

/** The manifest's entry for a tree entry (a file's only once its blob key is known). */
export function manifestEntryOf(entry: TreeEntry): ManifestEntry {
  switch (entry.kind) {
    case 'file':
      if (entry.blob === undefined) throw new Error('a workspace file entry without its blob key');
      return { kind: 'file', blob: entry.blob, size: entry.size, mode: entry.mode };
    case 'dir':
      return { kind: 'dir', mode: entry.mode };
    case 'symlink':
      return { kind: 'symlink', target: entry.target ?? '' };
  }
}

/** Whether two tree entries give the same manifest entry (a delta lists the path when they do not). */
export function sameContent(a: TreeEntry, b: TreeEntry): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file') return a.blob === b.blob && a.size === b.size && a.mode === b.mode;
  if (a.kind === 'dir') return a.mode === b.mode;
  return a.target === b.target;
}

/** `path`'s place on disk under `root`. */
export function pathIn(root: string, path: string): string {
  return join(root, ...path.split('/'));
}
