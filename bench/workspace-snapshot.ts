/**
 * The cost of keeping a run's workspace in the payload store (activities/workspace/images.ts): a workspace of
 * 2,000 files and 100 MiB in a temporary folder, on the local blob store in another. The first full save, then
 * an incremental save after each of 50 one-file changes (the save after a mutating tool call), a save when
 * nothing changed, and a restore into an empty folder and into one that already matches. No Temporal:
 * `npm run bench:workspace`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkspaceImages, type SnapshotSettings, type WorkspaceImage } from '../activities/workspace/images';
import { LocalDirBlobStore } from '../payloads/store';
import { formatTable, msRow, type BenchResult } from './stats';

const FILES = 2000;
const FOLDERS = 40;
const TOTAL_BYTES = 100 * 1024 * 1024;
const FILE_BYTES = Math.floor(TOTAL_BYTES / FILES);
const INCREMENTAL_SAVES = 50;
const SETTINGS: SnapshotSettings = { exclude: ['node_modules/', '*.log'], max_bytes: 1024 * 1024 * 1024 };

function filePath(workspace: string, index: number): string {
  return join(workspace, `module-${index % FOLDERS}`, `file-${index}.dat`);
}

/**
 * Random content (so the store's dedup hides nothing), its mtimes a minute old: the files of a workspace
 * were written by earlier tool calls, not in the instant before the first save (those would be read again).
 */
function buildWorkspace(workspace: string): void {
  for (let folder = 0; folder < FOLDERS; folder++)
    mkdirSync(join(workspace, `module-${folder}`), { recursive: true });
  const aMinuteAgo = (Date.now() - 60_000) / 1000;
  for (let index = 0; index < FILES; index++) {
    const path = filePath(workspace, index);
    writeFileSync(path, randomBytes(FILE_BYTES));
    utimesSync(path, aMinuteAgo, aMinuteAgo);
  }
}

/** Wall time, and this process's CPU time (user + system), which a busy machine inflates far less. */
async function timed<T>(action: () => Promise<T>): Promise<{ value: T; ms: number; cpuMs: number }> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const value = await action();
  const used = process.cpuUsage(cpu);
  return { value, ms: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

export async function benchWorkspaceSnapshot(): Promise<BenchResult[]> {
  const root = mkdtempSync(join(tmpdir(), 'bench-workspace-'));
  try {
    const workspace = join(root, 'workspace');
    buildWorkspace(workspace);
    const images = new WorkspaceImages({ blobs: new LocalDirBlobStore(join(root, 'blobs')) });

    const first = await timed(() => images.save(workspace, SETTINGS, undefined));
    let image: WorkspaceImage = first.value.image;
    const incremental: number[] = [];
    const incrementalCpu: number[] = [];
    for (let round = 0; round < INCREMENTAL_SAVES; round++) {
      writeFileSync(filePath(workspace, (round * 37) % FILES), randomBytes(FILE_BYTES));
      const saved = await timed(() => images.save(workspace, SETTINGS, image));
      if (saved.value.changed !== 1)
        throw new Error(`incremental save ${round} changed ${saved.value.changed} entries`);
      image = saved.value.image;
      incremental.push(saved.ms);
      incrementalCpu.push(saved.cpuMs);
    }
    const idle: number[] = [];
    for (let round = 0; round < 10; round++) {
      const saved = await timed(() => images.save(workspace, SETTINGS, image));
      image = saved.value.image;
      idle.push(saved.ms);
    }

    const restored = join(root, 'restored');
    const intoEmpty = await timed(() => images.materialize(restored, image.manifest, SETTINGS));
    const intoSame = await timed(() => images.materialize(restored, image.manifest, SETTINGS));
    const afterRestore = await timed(() => images.save(restored, SETTINGS, intoSame.value));
    return [
      msRow(`workspace: first full save (${FILES} files, 100 MiB)`, [first.ms]),
      msRow('workspace: incremental save after a one-file change', incremental),
      msRow('workspace: incremental save, CPU time (user + system)', incrementalCpu),
      msRow('workspace: save with nothing changed', idle),
      msRow('workspace: materialize into an empty folder', [intoEmpty.ms]),
      msRow('workspace: materialize into a folder that matches', [intoSame.ms]),
      msRow('workspace: first save after a materialize (files written < 2 s ago are read)', [
        afterRestore.ms,
      ]),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (require.main === module) {
  benchWorkspaceSnapshot()
    .then((results) => process.stdout.write(`${formatTable(results)}\n`))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
