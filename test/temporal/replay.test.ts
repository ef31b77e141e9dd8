/**
 * Recorded histories of real runs (test/fixtures/histories, made by `npm run record:histories`) replay
 * against today's workflow code without non-determinism: a change that would break runs in flight fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { testWorkflowBundle } from '../harness/temporal';

const dir = join(__dirname, '..', '..', '..', 'test', 'fixtures', 'histories');
const files = readdirSync(dir).filter((file) => file.endsWith('.json'));

it('has recorded histories to replay', () => {
  expect(files.length).toBeGreaterThanOrEqual(7);
});

it.each(files)('replays %s deterministically', async (file) => {
  const history = historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));
  await expect(
    Worker.runReplayHistory({ workflowBundle: { codePath: testWorkflowBundle() } }, history, file),
  ).resolves.toBeUndefined();
});
