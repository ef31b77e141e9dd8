/**
 * Making a folder hold what a manifest lists, on a host that may hold an older copy of it. What another host or
 * a tool left in the folder is never trusted: nothing is written through a link (a link standing where a file
 * or a directory belongs is removed first, files are written under a new name opened exclusively and renamed
 * into place, which replaces a link rather than following it), and a file is only downloaded when its content
 * differs. Excluded paths are not in `wanted` nor in `local`, so nothing here touches them.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, constants, lstatSync, mkdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { open, rename, symlink, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ManifestEntry } from '../../contracts/workspace-snapshot';
import { blobKey, type BlobStore } from '../../payloads/store';
import { forEachBounded, type Bounds } from './bounded';
import { pathIn, type TreeEntry } from './tree';

/** Checks that `dir` is a directory of its own (not a link to one); creates it when `create` and it is missing. */
export function prepareRoot(dir: string, create: boolean): void {
  const stats = lstatSync(dir, { throwIfNoEntry: false });
  if (stats === undefined && create) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return;
  }
  if (stats === undefined) throw new Error(`the workspace folder ${dir} does not exist`);
  if (!stats.isDirectory())
    throw new Error(
      `the workspace folder ${dir} is ${stats.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}: ` +
        'a workspace is a directory of its own',
    );
}

/** Makes `root` (scanned as `local`) hold `wanted`. */
export async function materializeTree(
  root: string,
  wanted: Map<string, ManifestEntry>,
  local: Map<string, TreeEntry>,
  blobs: BlobStore,
  bounds: Bounds,
): Promise<void> {
  removeStrays(root, wanted, local);
  const paths = [...wanted.keys()].sort();
  // Directories first, owner-writable until their files are in: a manifest may hold a read-only one.
  for (const path of paths) {
    if (wanted.get(path)?.kind === 'dir' && local.get(path)?.kind !== 'dir') makeDir(pathIn(root, path));
  }
  const files = paths.filter((path) => wanted.get(path)?.kind === 'file');
  await forEachBounded(
    files,
    bounds,
    (path) => (wanted.get(path) as ManifestEntry & { kind: 'file' }).size,
    (path) =>
      placeFile(root, path, wanted.get(path) as ManifestEntry & { kind: 'file' }, local.get(path), blobs),
  );
  for (const path of paths) {
    const entry = wanted.get(path);
    if (entry?.kind === 'symlink') await placeSymlink(root, path, entry.target, local.get(path));
  }
  for (const path of paths.reverse()) {
    const entry = wanted.get(path);
    if (entry?.kind === 'dir') setDirMode(pathIn(root, path), entry.mode);
  }
}

/** Removes what stands where nothing, or something of another kind, belongs: the deepest first. */
function removeStrays(root: string, wanted: Map<string, ManifestEntry>, local: Map<string, TreeEntry>): void {
  // A path sorts after its directory, so the reverse order meets every child before its parent.
  for (const path of [...local.keys()].sort().reverse()) {
    const entry = local.get(path) as TreeEntry;
    if (wanted.get(path)?.kind === entry.kind) continue;
    const absolute = pathIn(root, path);
    try {
      if (entry.kind === 'dir') rmdirSync(absolute);
      else unlinkSync(absolute);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      // A directory that still holds excluded paths stays, with them.
      if (code === 'ENOTEMPTY' || code === 'EEXIST') continue;
      throw new Error(`cannot remove ${absolute} from the workspace: ${(err as Error).message}`);
    }
    local.delete(path);
  }
}

function makeDir(absolute: string): void {
  try {
    mkdirSync(absolute, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST' && lstatSync(absolute).isDirectory()) return;
    throw new Error(`cannot create the workspace directory ${absolute}: ${(err as Error).message}`);
  }
}

/** Leaves a local file whose content matches (fixing its mode), else writes the blob's bytes in its place. */
async function placeFile(
  root: string,
  path: string,
  entry: ManifestEntry & { kind: 'file' },
  local: TreeEntry | undefined,
  blobs: BlobStore,
): Promise<void> {
  const absolute = pathIn(root, path);
  if (local?.kind === 'file' && local.size === entry.size && (await keepIfSame(absolute, entry))) return;
  const bytes = await blobs.get(entry.blob);
  if (bytes === undefined)
    throw new Error(`workspace file ${path}: its blob ${entry.blob} is missing from ${blobs.description}`);
  if (bytes.length !== entry.size || blobKey(bytes) !== entry.blob)
    throw new Error(
      `workspace file ${path}: the blob ${entry.blob} in ${blobs.description} does not match its key`,
    );
  const temporary = temporaryBeside(absolute);
  try {
    // 'wx': a new file of our own, never one that a link points at. No fsync: a restore cut short is redone.
    const handle = await open(temporary, 'wx', 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.chmod(entry.mode);
    } finally {
      await handle.close();
    }
    await rename(temporary, absolute);
  } catch (err) {
    await unlink(temporary).catch(() => undefined);
    throw new Error(`cannot write the workspace file ${absolute}: ${(err as Error).message}`);
  }
}

/** Whether the file at `absolute` already holds `entry`'s content; if so, gives it `entry`'s mode. */
async function keepIfSame(absolute: string, entry: ManifestEntry & { kind: 'file' }): Promise<boolean> {
  let handle;
  try {
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile() || stats.size !== entry.size) return false;
    if (blobKey(await handle.readFile()) !== entry.blob) return false;
    if ((stats.mode & 0o7777) !== entry.mode) await handle.chmod(entry.mode);
    return true;
  } finally {
    await handle.close();
  }
}

async function placeSymlink(
  root: string,
  path: string,
  target: string,
  local: TreeEntry | undefined,
): Promise<void> {
  if (local?.kind === 'symlink' && local.target === target) return;
  const absolute = pathIn(root, path);
  const temporary = temporaryBeside(absolute);
  try {
    await symlink(target, temporary);
    await rename(temporary, absolute);
  } catch (err) {
    await unlink(temporary).catch(() => undefined);
    throw new Error(`cannot make the workspace link ${absolute} -> ${target}: ${(err as Error).message}`);
  }
}

function setDirMode(absolute: string, mode: number): void {
  const stats = lstatSync(absolute);
  if (stats.isDirectory() && (stats.mode & 0o7777) !== mode) chmodSync(absolute, mode);
}

/** A new name in `absolute`'s directory; short, since the name beside it may already be as long as names go. */
function temporaryBeside(absolute: string): string {
  return join(dirname(absolute), `.subagents-restore.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}
