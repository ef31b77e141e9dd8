import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  MAX_MANIFEST_DEPTH,
  WorkspaceImages,
  type SnapshotSettings,
  type WorkspaceImage,
} from '../../../../activities/workspace/images';
import { WORKSPACE_MARKER } from '../../../../activities/workspace/exclude';
import { writeWorkspaceManifest } from '../../../../contracts/workspace-snapshot';
import { blobKey, LocalDirBlobStore, type BlobStore } from '../../../../payloads/store';
import { tempDir } from '../../../support/subagent-input';

/** The blob store of a temporary folder, counting what is written and read. */
class CountingStore implements BlobStore {
  readonly inner: LocalDirBlobStore;
  readonly puts: string[] = [];
  readonly gets: string[] = [];
  readonly description: string;

  constructor(dir: string) {
    this.inner = new LocalDirBlobStore(dir);
    this.description = this.inner.description;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    this.puts.push(key);
    await this.inner.put(key, bytes);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    this.gets.push(key);
    return this.inner.get(key);
  }

  reset(): void {
    this.puts.length = 0;
    this.gets.length = 0;
  }
}

/** What a folder holds, path by path: kind, permission bits and content or link target. */
function listing(root: string): string[] {
  const lines: string[] = [];
  const walk = (dir: string, prefix: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = prefix ? `${prefix}/${name}` : name;
      const absolute = join(dir, name);
      const stats = lstatSync(absolute);
      const mode = (stats.mode & 0o7777).toString(8);
      if (stats.isSymbolicLink()) lines.push(`${path} -> ${readlinkSync(absolute)}`);
      else if (stats.isDirectory()) {
        lines.push(`${path}/ ${mode}`);
        walk(absolute, path);
      } else lines.push(`${path} ${mode} ${readFileSync(absolute, 'utf8')}`);
    }
  };
  walk(root, '');
  return lines;
}

const settings: SnapshotSettings = { exclude: [], max_bytes: 10_000_000 };
// Saves in these tests happen well after the files' writes (10 s), so only what changed is read again; the
// racy-mtime test sets its own clock.
const later = () => Date.now() + 10_000;

let root: string;
let store: CountingStore;
let images: WorkspaceImages;

beforeEach(() => {
  root = tempDir('workspace-images');
  store = new CountingStore(join(root, 'blobs'));
  images = new WorkspaceImages({ blobs: store, now: later });
});

afterEach(() => rmSync(root, { recursive: true, force: true }));

function makeWorkspace(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'src', 'lib'), { recursive: true });
  mkdirSync(join(dir, 'empty'));
  writeFileSync(join(dir, 'README.md'), 'readme');
  writeFileSync(join(dir, 'src', 'main.ts'), 'main');
  writeFileSync(join(dir, 'src', 'lib', 'util.ts'), 'util');
  writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\necho hi\n');
  chmodSync(join(dir, 'run.sh'), 0o755);
  symlinkSync('src/main.ts', join(dir, 'main-link'));
  return dir;
}

describe('WorkspaceImages.save and materialize', () => {
  it('round-trips a workspace into an empty folder: files, modes, directories and links', async () => {
    const source = makeWorkspace('source');
    // A name that a plain object would take for its prototype is a file like any other.
    writeFileSync(join(source, 'src', '__proto__'), 'odd');
    const { image, unchanged } = await images.save(source, settings, undefined);
    expect(unchanged).toBe(false);
    expect(image).toMatchObject({ seq: 1, depth: 0, files: 5, bytes: 6 + 4 + 4 + 18 + 3 });

    const target = join(root, 'restored', 'deep');
    const restored = await images.materialize(target, image.manifest, settings);
    expect(listing(target)).toEqual(listing(source));
    expect(lstatSync(join(target, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(restored).toMatchObject({ manifest: image.manifest, seq: 1, depth: 0, files: 5 });
    expect([...restored.tree.keys()].sort()).toEqual([...image.tree.keys()].sort());
    expect(restored.tree.get('src/main.ts')?.blob).toBe(blobKey(Buffer.from('main')));
  });

  it('restores over stale extras, a changed file and a link in the way, downloading only what differs', async () => {
    const source = makeWorkspace('source');
    const { image } = await images.save(source, settings, undefined);
    const target = makeWorkspace('target');
    const victim = join(root, 'victim');
    mkdirSync(victim);
    writeFileSync(join(target, 'src', 'main.ts'), 'stale main');
    writeFileSync(join(target, 'extra.txt'), 'left over');
    mkdirSync(join(target, 'old', 'nested'), { recursive: true });
    writeFileSync(join(target, 'old', 'nested', 'x'), 'x');
    // A link where a directory belongs, pointing outside: a restore that followed it would write into victim.
    rmSync(join(target, 'src', 'lib'), { recursive: true });
    symlinkSync(victim, join(target, 'src', 'lib'));
    chmodSync(join(target, 'run.sh'), 0o644);
    store.reset();

    await images.materialize(target, image.manifest, settings);
    expect(listing(target)).toEqual(listing(source));
    expect(readdirSync(victim)).toEqual([]);
    const downloaded = store.gets.filter((key) => key !== image.manifest).sort();
    expect(downloaded).toEqual([blobKey(Buffer.from('main')), blobKey(Buffer.from('util'))].sort());

    store.reset();
    await images.materialize(target, image.manifest, settings);
    expect(store.gets).toEqual([image.manifest]);
  });

  it('saves one changed file as one blob and a delta, and nothing when nothing changed', async () => {
    const source = makeWorkspace('source');
    const first = await images.save(source, settings, undefined);
    store.reset();
    const same = await images.save(source, settings, first.image);
    expect(same).toMatchObject({ unchanged: true, changed: 0, uploaded_bytes: 0 });
    expect(same.image.manifest).toBe(first.image.manifest);
    expect(store.puts).toEqual([]);

    writeFileSync(join(source, 'src', 'main.ts'), 'main, changed');
    const second = await images.save(source, settings, same.image);
    expect(second).toMatchObject({ unchanged: false, changed: 1 });
    expect(second.image).toMatchObject({ seq: 2, depth: 1 });
    expect(store.puts).toEqual([blobKey(Buffer.from('main, changed')), second.image.manifest]);
    const manifest = JSON.parse(readFileSync(store.inner.pathOf(second.image.manifest), 'utf8'));
    expect(manifest).toMatchObject({ v: 1, seq: 2, depth: 1, base: first.image.manifest, files: 4 });
    expect(Object.keys(manifest.changes)).toEqual(['src/main.ts']);
    expect(manifest.full).toBeUndefined();

    rmSync(join(source, 'src', 'lib'), { recursive: true });
    const third = await images.save(source, settings, second.image);
    const delta = JSON.parse(readFileSync(store.inner.pathOf(third.image.manifest), 'utf8'));
    expect(delta.changes).toEqual({ 'src/lib': null, 'src/lib/util.ts': null });
    const entries = await images.entries(third.image.manifest);
    expect(entries.has('src/lib')).toBe(false);
    expect(entries.get('src/main.ts')).toMatchObject({ kind: 'file', size: 13 });
  });

  it(`writes a full manifest past depth ${MAX_MANIFEST_DEPTH}, or when most of the tree changed`, async () => {
    const source = makeWorkspace('source');
    let image: WorkspaceImage = (await images.save(source, settings, undefined)).image;
    for (let round = 1; round <= MAX_MANIFEST_DEPTH; round++) {
      writeFileSync(join(source, 'README.md'), `readme ${round}`);
      image = (await images.save(source, settings, image)).image;
      expect(image).toMatchObject({ seq: round + 1, depth: round });
    }
    const target = join(root, 'from-deepest-delta');
    await images.materialize(target, image.manifest, settings);
    expect(listing(target)).toEqual(listing(source));

    writeFileSync(join(source, 'README.md'), 'readme, once more');
    image = (await images.save(source, settings, image)).image;
    expect(image).toMatchObject({ seq: MAX_MANIFEST_DEPTH + 2, depth: 0 });
    const full = JSON.parse(readFileSync(store.inner.pathOf(image.manifest), 'utf8'));
    expect(Object.keys(full.full)).toHaveLength(8);

    for (const file of ['README.md', 'src/main.ts', 'src/lib/util.ts', 'run.sh', 'main-link'])
      rmSync(join(source, file));
    writeFileSync(join(source, 'new.txt'), 'new');
    image = (await images.save(source, settings, image)).image;
    expect(image.depth).toBe(0);
  });

  it('neither saves nor touches excluded paths, and always leaves the marker at the root alone', async () => {
    const source = makeWorkspace('source');
    const excluding: SnapshotSettings = { exclude: ['node_modules/', '*.log'], max_bytes: 10_000_000 };
    mkdirSync(join(source, 'node_modules', 'pkg'), { recursive: true });
    writeFileSync(join(source, 'node_modules', 'pkg', 'index.js'), 'dependency');
    writeFileSync(join(source, 'src', 'debug.log'), 'noise');
    writeFileSync(join(source, WORKSPACE_MARKER), 'epoch 1');
    mkdirSync(join(source, 'sub'));
    writeFileSync(join(source, 'sub', WORKSPACE_MARKER), 'an ordinary file here');
    const { image } = await images.save(source, excluding, undefined);
    const entries = await images.entries(image.manifest);
    expect(
      [...entries.keys()].filter((path) => /node_modules|\.log$|subagents-workspace/.test(path)),
    ).toEqual([`sub/${WORKSPACE_MARKER}`]);

    const target = join(root, 'target');
    mkdirSync(join(target, 'node_modules'), { recursive: true });
    writeFileSync(join(target, 'node_modules', 'kept.js'), 'installed here');
    writeFileSync(join(target, 'own.log'), 'this host');
    writeFileSync(join(target, WORKSPACE_MARKER), 'epoch 2');
    await images.materialize(target, image.manifest, excluding);
    expect(readFileSync(join(target, 'node_modules', 'kept.js'), 'utf8')).toBe('installed here');
    expect(readFileSync(join(target, 'own.log'), 'utf8')).toBe('this host');
    expect(readFileSync(join(target, WORKSPACE_MARKER), 'utf8')).toBe('epoch 2');
    expect(readFileSync(join(target, 'sub', WORKSPACE_MARKER), 'utf8')).toBe('an ordinary file here');
    expect(existsSync(join(target, 'src', 'debug.log'))).toBe(false);
  });

  it('keeps a link as a link: one pointing outside is stored as its text, never followed', async () => {
    const source = makeWorkspace('source');
    const outside = join(root, 'outside-secret');
    writeFileSync(outside, 'not for the store');
    symlinkSync(outside, join(source, 'escape'));
    symlinkSync('../../etc', join(source, 'src', 'up'));
    const { image } = await images.save(source, settings, undefined);
    const entries = await images.entries(image.manifest);
    expect(entries.get('escape')).toEqual({ kind: 'symlink', target: outside });
    expect(entries.get('src/up')).toEqual({ kind: 'symlink', target: '../../etc' });
    expect(existsSync(store.inner.pathOf(blobKey(Buffer.from('not for the store'))))).toBe(false);

    rmSync(outside);
    const target = join(root, 'target');
    await images.materialize(target, image.manifest, settings);
    expect(lstatSync(join(target, 'escape')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(target, 'escape'))).toBe(outside);
    expect(readlinkSync(join(target, 'src', 'up'))).toBe('../../etc');
  });

  it('keeps permission bits: an executable file, a read-only directory restored with its files', async () => {
    const source = makeWorkspace('source');
    mkdirSync(join(source, 'sealed'));
    writeFileSync(join(source, 'sealed', 'inside'), 'sealed content');
    chmodSync(join(source, 'sealed'), 0o555);
    try {
      const { image } = await images.save(source, settings, undefined);
      const target = join(root, 'target');
      await images.materialize(target, image.manifest, settings);
      expect(lstatSync(join(target, 'sealed')).mode & 0o7777).toBe(0o555);
      expect(readFileSync(join(target, 'sealed', 'inside'), 'utf8')).toBe('sealed content');
      expect(lstatSync(join(target, 'run.sh')).mode & 0o7777).toBe(0o755);
      chmodSync(join(target, 'sealed'), 0o755);

      chmodSync(join(source, 'run.sh'), 0o700);
      const next = await images.save(source, settings, image);
      const delta = JSON.parse(readFileSync(store.inner.pathOf(next.image.manifest), 'utf8'));
      expect(delta.changes).toEqual({ 'run.sh': expect.objectContaining({ mode: 0o700 }) });
    } finally {
      chmodSync(join(source, 'sealed'), 0o755);
    }
  });

  it('saves nothing when the workspace holds more than max_bytes', async () => {
    const source = makeWorkspace('source');
    const capped = { exclude: [], max_bytes: 10 };
    const first = await images.save(source, capped, undefined);
    expect(first.over_cap).toEqual({ bytes: 32, max_bytes: 10 });
    expect(first.image).toMatchObject({ manifest: '', seq: 0, files: 0 });
    expect(store.puts).toEqual([]);

    const saved = await images.save(source, settings, undefined);
    store.reset();
    writeFileSync(join(source, 'big'), 'x'.repeat(100));
    const over = await images.save(source, { exclude: [], max_bytes: 100 }, saved.image);
    expect(over.over_cap).toEqual({ bytes: 132, max_bytes: 100 });
    expect(over.image).toBe(saved.image);
    expect(store.puts).toEqual([]);
  });

  it('reads again a file rewritten at the same size and mtime within 2 s of the last scan (racy mtime)', async () => {
    const source = makeWorkspace('source');
    const file = join(source, 'src', 'main.ts');
    const second = Math.floor(Date.now() / 1000);
    utimesSync(file, second, second);
    let clock = second * 1000 + 500;
    const racy = new WorkspaceImages({ blobs: store, now: () => clock });
    const { image } = await racy.save(source, settings, undefined);

    // Same size, same mtime, same inode: only the clock says the first scan may have raced this write.
    writeFileSync(file, 'MAIN');
    utimesSync(file, second, second);
    clock += 100;
    const next = await racy.save(source, settings, image);
    expect(next).toMatchObject({ unchanged: false, changed: 1 });
    expect(next.image.tree.get('src/main.ts')?.blob).toBe(blobKey(Buffer.from('MAIN')));

    // The same rewrite long after a scan is not looked for: size, mtime, inode and mode are trusted then.
    clock += 60_000;
    const settled = await racy.save(source, settings, next.image);
    writeFileSync(file, 'mAIN');
    utimesSync(file, second, second);
    clock += 100;
    expect(await racy.save(source, settings, settled.image)).toMatchObject({ unchanged: true });
  });

  it('refuses a tampered manifest whose path climbs out of the workspace, writing nothing', async () => {
    const content = Buffer.from('escaped');
    await store.put(blobKey(content), content);
    const tampered = Buffer.from(
      writeWorkspaceManifest({
        v: 1,
        seq: 1,
        depth: 0,
        files: 1,
        bytes: content.length,
        full: { '../x': { kind: 'file', blob: blobKey(content), size: content.length, mode: 0o644 } },
      }),
    );
    await store.put(blobKey(tampered), tampered);
    const target = join(root, 'target');
    await expect(images.entries(blobKey(tampered))).rejects.toThrow(
      `workspace manifest ${blobKey(tampered)} is not a valid workspace manifest: ` +
        'full.../x: not a workspace path (it climbs out with "..")',
    );
    await expect(images.materialize(target, blobKey(tampered), settings)).rejects.toThrow(
      'not a workspace path',
    );
    expect(existsSync(join(root, 'x'))).toBe(false);
  });

  it('refuses a manifest whose entries do not add up, or that is missing', async () => {
    const bytes = Buffer.from(
      writeWorkspaceManifest({
        v: 1,
        seq: 1,
        depth: 0,
        files: 0,
        bytes: 0,
        full: { 'a/b': { kind: 'dir', mode: 0o755 } },
      }),
    );
    await store.put(blobKey(bytes), bytes);
    await expect(images.entries(blobKey(bytes))).rejects.toThrow(
      `workspace manifest ${blobKey(bytes)} lists "a/b" but not its directory a`,
    );
    const missing = 'f'.repeat(64);
    await expect(images.entries(missing)).rejects.toThrow(
      `workspace manifest ${missing} is missing from ${store.description}`,
    );
  });
});
