/**
 * Recorded histories of real runs (test/fixtures/histories, made by `npm run record:histories`) replay
 * against today's workflow code without non-determinism: a change that would break runs in flight fails here.
 * Each recording is the one the recorder wrote: its SHA-256 is in the manifest (SHA256SUMS), which only the
 * recorder updates, so a recording changed other than by recording it again on purpose fails here too.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { testWorkflowBundle } from '../harness/temporal';
import { MANIFEST_FILE, manifestEntries } from '../support/history-manifest';

const dir = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'histories');
/** History file → the workflow id it was recorded under (children's ids derive from it). */
const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as Record<string, string>;
const files = readdirSync(dir).filter((file) => file.endsWith('.json') && file !== 'index.json');
const manifest = manifestEntries(readFileSync(join(dir, MANIFEST_FILE), 'utf8'));

it('has recorded histories to replay, each with its workflow id', () => {
  expect(files.length).toBeGreaterThanOrEqual(64);
  expect(Object.keys(index).sort()).toEqual([...files].sort());
});

it('holds each recording as the recorder wrote it (SHA256SUMS; `npm run record:histories` updates it)', () => {
  expect(Object.keys(manifest).sort()).toEqual([...files, 'index.json'].sort());
  const changed = [...files, 'index.json'].filter(
    (file) =>
      createHash('sha256')
        .update(readFileSync(join(dir, file)))
        .digest('hex') !== manifest[file],
  );
  expect(changed).toEqual([]);
});

it.each(files)('replays %s deterministically', async (file) => {
  const history = historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));
  await expect(
    Worker.runReplayHistory({ workflowBundle: { codePath: testWorkflowBundle() } }, history, index[file]),
  ).resolves.toBeUndefined();
});
