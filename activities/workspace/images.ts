/**
 * A run's workspace saved to the payload store and made again on another host: the content layer under the
 * workspace protocol (home host, epochs, failover). A save writes each changed file as a blob (its key the
 * sha256 of its content, so the store keeps one copy) and a manifest blob that lists the folder, in full or
 * as the changes since the manifest before it; a host keeps the image of what it saved or restored in memory,
 * so the next save reads only what changed since.
 */
import type { BlobStore } from '../../payloads/store';
import { blobKey } from '../../payloads/store';
import {
  readWorkspaceManifest,
  WORKSPACE_MANIFEST_VERSION,
  writeWorkspaceManifest,
  type ManifestEntry,
  type WorkspaceManifest,
} from '../../contracts/workspace-snapshot';
import { forEachBounded, type Bounds } from './bounded';
import { WorkspaceExcludes } from './exclude';
import { materializeTree, prepareRoot } from './restore';
import {
  manifestEntryOf,
  pathIn,
  readTreeFile,
  sameContent,
  scanTree,
  UNSETTLED_MTIME,
  type TreeEntry,
} from './tree';

export type { TreeEntry } from './tree';
export type { ManifestEntry } from '../../contracts/workspace-snapshot';

export interface SnapshotSettings {
  /** Glob patterns relative to the workspace's root, read as gitignore reads them (see exclude.ts). */
  exclude: string[];
  /** The most bytes of file content a save keeps; a larger workspace is not saved. */
  max_bytes: number;
}

/** What a host keeps in memory about a folder it saved or materialized. */
export interface WorkspaceImage {
  /** The blob key of the manifest that describes it ('' for the image of nothing saved). */
  manifest: string;
  seq: number;
  depth: number;
  files: number;
  bytes: number;
  /** Every entry as of that manifest. */
  tree: Map<string, TreeEntry>;
  /** Wall clock when the scan began (for racy-mtime checks). */
  taken_at_ms: number;
}

export interface SaveOutcome {
  image: WorkspaceImage;
  /** Entries added, changed or removed since the base. */
  changed: number;
  /** Bytes handed to the blob store: changed files' content and the manifest (the store may have had some). */
  uploaded_bytes: number;
  /** Nothing changed: the base's manifest still describes the folder, and nothing was written. */
  unchanged: boolean;
  /** The folder holds more than `max_bytes`: nothing was saved. */
  over_cap?: { bytes: number; max_bytes: number };
  ms: number;
}

/** More deltas than this after a full manifest, and the next save writes a full one: a restore reads them all. */
export const MAX_MANIFEST_DEPTH = 32;

/**
 * A file whose mtime lies this close to the last scan's start may have been written again within the same
 * clock tick after the scan read it (coarse file system timestamps, a clock stepped back): it is read again.
 */
export const RACY_MTIME_MS = 2000;

/** Files read or downloaded at once, and bytes held at once (a blob is a whole file). */
const TRANSFER_BOUNDS: Bounds = { tasks: 16, bytes: 256 * 1024 * 1024 };

/** The image of nothing saved yet (what an over-cap first save hands back). */
export function emptyWorkspaceImage(takenAtMs: number): WorkspaceImage {
  return { manifest: '', seq: 0, depth: 0, files: 0, bytes: 0, tree: new Map(), taken_at_ms: takenAtMs };
}

export class WorkspaceImages {
  private readonly blobs: BlobStore;
  private readonly now: () => number;

  constructor(deps: { blobs: BlobStore; now?: () => number }) {
    this.blobs = deps.blobs;
    this.now = deps.now ?? Date.now;
  }

  /**
   * Saves what changed in `dir` since `base` (undefined: a full manifest). Nothing changed → the same
   * manifest, unchanged: true, no write. Over max_bytes → nothing saved, over_cap set, image = base (or an
   * empty image when no base).
   */
  async save(
    dir: string,
    settings: SnapshotSettings,
    base: WorkspaceImage | undefined,
  ): Promise<SaveOutcome> {
    const started = performance.now();
    const takenAtMs = this.now();
    const previous = base !== undefined && base.manifest !== '' ? base : undefined;
    const excludes = WorkspaceExcludes.compile(settings.exclude);
    prepareRoot(dir, false);
    const tree = scanTree(dir, excludes);
    const scannedBytes = totals(tree.values()).bytes;
    if (scannedBytes > settings.max_bytes) {
      return {
        image: base ?? emptyWorkspaceImage(takenAtMs),
        changed: 0,
        uploaded_bytes: 0,
        unchanged: false,
        over_cap: { bytes: scannedBytes, max_bytes: settings.max_bytes },
        ms: performance.now() - started,
      };
    }
    let uploaded = await this.settleFiles(dir, tree, previous);
    const changes = changesBetween(previous?.tree, tree);
    const elapsed = () => performance.now() - started;
    if (previous !== undefined && changes.size === 0) {
      // The same manifest, but the fresh stats and scan time: files settled now are not read again next time.
      const image = { ...previous, tree, taken_at_ms: takenAtMs };
      return { image, changed: 0, uploaded_bytes: uploaded, unchanged: true, ms: elapsed() };
    }
    const manifest = manifestFor(tree, changes, previous);
    const bytes = Buffer.from(writeWorkspaceManifest(manifest), 'utf8');
    const key = blobKey(bytes);
    await this.blobs.put(key, bytes);
    uploaded += bytes.length;
    const image: WorkspaceImage = {
      manifest: key,
      seq: manifest.seq,
      depth: manifest.depth,
      files: manifest.files,
      bytes: manifest.bytes,
      tree,
      taken_at_ms: takenAtMs,
    };
    return { image, changed: changes.size, uploaded_bytes: uploaded, unchanged: false, ms: elapsed() };
  }

  /**
   * Makes `dir` hold exactly what `manifest` describes: creates dir if missing, downloads only files whose
   * content differs (size, then the sha256 of the local file), writes each through a temporary file and a
   * rename with its mode, creates dirs and symlinks, removes what the manifest does not hold; never touches
   * excluded paths. The image of the result (its tree from a fresh scan).
   */
  async materialize(dir: string, manifest: string, settings: SnapshotSettings): Promise<WorkspaceImage> {
    const excludes = WorkspaceExcludes.compile(settings.exclude);
    const { head, entries } = await this.resolve(manifest);
    const wanted = new Map(
      [...entries].filter(([path, entry]) => !excludes.covers(path, entry.kind === 'dir')),
    );
    prepareRoot(dir, true);
    await materializeTree(dir, wanted, scanTree(dir, excludes), this.blobs, TRANSFER_BOUNDS);
    const takenAtMs = this.now();
    const tree = scanTree(dir, excludes);
    for (const [path, entry] of tree) {
      const expected = wanted.get(path);
      // Written or checked just now; a file changed since (another size) is read on the next save.
      if (entry.kind === 'file' && expected?.kind === 'file' && expected.size === entry.size)
        entry.blob = expected.blob;
    }
    // Entries this host excludes stay in the image as the manifest has them, so that the next save's delta
    // removes them rather than leaving them in every manifest after it.
    for (const [path, entry] of entries) {
      if (!wanted.has(path)) tree.set(path, phantomEntry(entry));
    }
    return {
      manifest,
      seq: head.seq,
      depth: head.depth,
      files: head.files,
      bytes: head.bytes,
      tree,
      taken_at_ms: takenAtMs,
    };
  }

  /** Every entry of a manifest, its chain of deltas followed back to the last full one and applied forward. */
  async entries(manifest: string): Promise<Map<string, ManifestEntry>> {
    return (await this.resolve(manifest)).entries;
  }

  /**
   * Reads, hashes and stores the files of `tree` whose content may differ from `previous`'s; the others keep
   * its blob key unread. Files that vanished meanwhile leave the tree. The bytes handed to the store.
   */
  private async settleFiles(
    dir: string,
    tree: Map<string, TreeEntry>,
    previous: WorkspaceImage | undefined,
  ): Promise<number> {
    const toRead: string[] = [];
    for (const [path, entry] of tree) {
      if (entry.kind !== 'file') continue;
      const before = previous?.tree.get(path);
      if (before !== undefined && isSettled(before, entry, previous?.taken_at_ms ?? 0))
        entry.blob = before.blob;
      else toRead.push(path);
    }
    let uploaded = 0;
    const stored = new Set<string>();
    await forEachBounded(
      toRead,
      TRANSFER_BOUNDS,
      (path) => tree.get(path)?.size ?? 0,
      async (path) => {
        const read = await readTreeFile(pathIn(dir, path));
        if (read === undefined) {
          tree.delete(path);
          return;
        }
        const key = blobKey(read.bytes);
        read.entry.blob = key;
        tree.set(path, read.entry);
        const before = previous?.tree.get(path);
        // A blob the base's manifest names is in the store already.
        if (before?.blob === key || stored.has(key)) return;
        stored.add(key);
        await this.blobs.put(key, read.bytes);
        uploaded += read.bytes.length;
      },
    );
    return uploaded;
  }

  /** A manifest and every entry it describes, checked for consistency. */
  private async resolve(
    manifest: string,
  ): Promise<{ head: WorkspaceManifest; entries: Map<string, ManifestEntry> }> {
    const chain: WorkspaceManifest[] = [];
    let key = manifest;
    for (;;) {
      const current = await this.readManifest(key);
      const after = chain.at(-1);
      if (after !== undefined && (current.depth !== after.depth - 1 || current.seq >= after.seq))
        throw new Error(
          `workspace manifest ${key} (seq ${current.seq}, depth ${current.depth}) cannot precede ` +
            `seq ${after.seq} at depth ${after.depth}`,
        );
      chain.push(current);
      if (current.full !== undefined) break;
      // The schema holds a delta to naming its base.
      key = current.base as string;
    }
    const entries = new Map<string, ManifestEntry>(Object.entries(chain[chain.length - 1].full ?? {}));
    for (const delta of chain.slice(0, -1).reverse()) {
      for (const [path, entry] of Object.entries(delta.changes ?? {})) {
        if (entry === null) entries.delete(path);
        else entries.set(path, entry);
      }
    }
    checkEntries(manifest, chain[0], entries);
    return { head: chain[0], entries };
  }

  private async readManifest(key: string): Promise<WorkspaceManifest> {
    const where = `workspace manifest ${key}`;
    const bytes = await this.blobs.get(key);
    if (bytes === undefined) throw new Error(`${where} is missing from ${this.blobs.description}`);
    if (blobKey(bytes) !== key)
      throw new Error(`${where} in ${this.blobs.description} does not match its key`);
    return readWorkspaceManifest(Buffer.from(bytes).toString('utf8'), where);
  }
}

/** Whether `now` (a fresh lstat) is the file `before` was, so its blob key still holds without reading it. */
function isSettled(before: TreeEntry, now: TreeEntry, baseTakenAtMs: number): boolean {
  return (
    before.kind === 'file' &&
    before.blob !== undefined &&
    before.mtime_ns !== UNSETTLED_MTIME &&
    before.size === now.size &&
    before.mtime_ns === now.mtime_ns &&
    before.ino === now.ino &&
    before.mode === now.mode &&
    now.mtime_ns < BigInt(baseTakenAtMs - RACY_MTIME_MS) * 1_000_000n
  );
}

/** What a manifest after `before` must say: each new or changed entry, null for each path gone. */
function changesBetween(
  before: Map<string, TreeEntry> | undefined,
  after: Map<string, TreeEntry>,
): Map<string, ManifestEntry | null> {
  const changes = new Map<string, ManifestEntry | null>();
  for (const [path, entry] of after) {
    const was = before?.get(path);
    if (was === undefined || !sameContent(was, entry)) changes.set(path, manifestEntryOf(entry));
  }
  for (const path of before?.keys() ?? []) {
    if (!after.has(path)) changes.set(path, null);
  }
  return changes;
}

/** A delta after `previous`, or a full manifest when there is none, the chain is long, or most of it changed. */
function manifestFor(
  tree: Map<string, TreeEntry>,
  changes: Map<string, ManifestEntry | null>,
  previous: WorkspaceImage | undefined,
): WorkspaceManifest {
  const seq = (previous?.seq ?? 0) + 1;
  const { files, bytes } = totals(tree.values());
  const depth = (previous?.depth ?? 0) + 1;
  if (previous === undefined || depth > MAX_MANIFEST_DEPTH || changes.size > tree.size / 2) {
    const full = Object.fromEntries([...tree].map(([path, entry]) => [path, manifestEntryOf(entry)]));
    return { v: WORKSPACE_MANIFEST_VERSION, seq, depth: 0, files, bytes, full };
  }
  const delta = Object.fromEntries(changes);
  return { v: WORKSPACE_MANIFEST_VERSION, seq, base: previous.manifest, depth, files, bytes, changes: delta };
}

function totals(entries: Iterable<TreeEntry | ManifestEntry>): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const entry of entries) {
    if (entry.kind !== 'file') continue;
    files++;
    bytes += entry.size;
  }
  return { files, bytes };
}

/**
 * Refuses a manifest whose entries do not add up: totals that differ from what it says, or a path whose parent
 * is not a directory in it (a restore would create it through a file or a link).
 */
function checkEntries(key: string, head: WorkspaceManifest, entries: Map<string, ManifestEntry>): void {
  const { files, bytes } = totals(entries.values());
  if (files !== head.files || bytes !== head.bytes)
    throw new Error(
      `workspace manifest ${key} says ${head.files} files and ${head.bytes} bytes, ` +
        `its entries hold ${files} and ${bytes}`,
    );
  for (const path of entries.keys()) {
    const slash = path.lastIndexOf('/');
    if (slash < 0) continue;
    const parent = path.slice(0, slash);
    if (entries.get(parent)?.kind !== 'dir')
      throw new Error(
        `workspace manifest ${key} lists ${JSON.stringify(path)} but not its directory ${parent}`,
      );
  }
}

/** A tree entry for what the manifest holds but this host does not write (excluded here). */
function phantomEntry(entry: ManifestEntry): TreeEntry {
  const base = { mtime_ns: UNSETTLED_MTIME, ino: 0 };
  if (entry.kind === 'file')
    return { ...base, kind: 'file', size: entry.size, mode: entry.mode, blob: entry.blob };
  if (entry.kind === 'dir') return { ...base, kind: 'dir', size: 0, mode: entry.mode };
  return { ...base, kind: 'symlink', size: entry.target.length, mode: 0o777, target: entry.target };
}
