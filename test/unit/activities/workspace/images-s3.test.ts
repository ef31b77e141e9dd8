/**
 * A workspace saved by one host and materialized by another through an S3-compatible bucket (moto's), the way
 * a failover restores it. Skipped, with a note, without `moto_server` on the PATH.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WorkspaceImages, type SnapshotSettings } from '../../../../activities/workspace/images';
import { S3BlobStore } from '../../../../payloads/store';
import { describeWithMoto, MOTO_CREDENTIALS, startMoto, type MotoServer } from '../../../support/moto';
import { tempDir } from '../../../support/subagent-input';

const settings: SnapshotSettings = { exclude: [], max_bytes: 10_000_000 };

describeWithMoto('S3 workspace image tests')('WorkspaceImages on an S3 bucket (moto)', () => {
  let moto: MotoServer;
  let root: string;

  beforeAll(async () => {
    moto = await startMoto();
    root = tempDir('workspace-images-s3');
  }, 60_000);

  afterAll(async () => {
    await moto?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('restores on a second host what the first saved, its last save a delta', async () => {
    const hostA = new WorkspaceImages({
      blobs: new S3BlobStore(moto.settings, MOTO_CREDENTIALS),
      now: () => Date.now() + 10_000,
    });
    const source = join(root, 'host-a');
    mkdirSync(join(source, 'notes'), { recursive: true });
    writeFileSync(join(source, 'notes', 'plan.md'), 'step one');
    const first = await hostA.save(source, settings, undefined);
    writeFileSync(join(source, 'notes', 'plan.md'), 'step one, step two');
    const second = await hostA.save(source, settings, first.image);
    expect(second.image).toMatchObject({ seq: 2, depth: 1 });

    const hostB = new WorkspaceImages({ blobs: new S3BlobStore(moto.settings, MOTO_CREDENTIALS) });
    const target = join(root, 'host-b');
    const restored = await hostB.materialize(target, second.image.manifest, settings);
    expect(readFileSync(join(target, 'notes', 'plan.md'), 'utf8')).toBe('step one, step two');
    expect(restored).toMatchObject({ manifest: second.image.manifest, seq: 2, files: 1, bytes: 18 });
  });
});
