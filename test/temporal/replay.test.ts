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
/** History file → the workflow id it was recorded under (children's ids derive from it). */
const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as Record<string, string>;
const files = readdirSync(dir).filter((file) => file.endsWith('.json') && file !== 'index.json');

it('has recorded histories to replay, each with its workflow id', () => {
  expect(files.length).toBeGreaterThanOrEqual(21);
  expect(Object.keys(index).sort()).toEqual([...files].sort());
});

it.each(files)('replays %s deterministically', async (file) => {
  const history = historyFromJSON(JSON.parse(readFileSync(join(dir, file), 'utf8')));
  await expect(
    Worker.runReplayHistory({ workflowBundle: { codePath: testWorkflowBundle() } }, history, index[file]),
  ).resolves.toBeUndefined();
});
