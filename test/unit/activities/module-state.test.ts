/**
 * Activities keep no state at module level: what they remember (machine probes, parsed scripts, endpoints
 * that do not stream, the provider warm-up) lives in objects their factory makes and a worker hands in
 * (createProjectActivities), so a test builds fresh ones and two workers in one process do not share by accident.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { moduleState } from '../../support/module-state';

const sourceRoot = join(__dirname, '..', '..', '..', '..');

/** Module-level state activities may keep, with why it is not state of the process. */
const ALLOWED = [
  // keyed by the SDK's Context of one activity attempt: its heartbeat details, gone with the attempt
  'activities/activity-context.ts: heartbeatDetails',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [relative(sourceRoot, path)] : [];
  });
}

it('no activity module keeps state at module level', () => {
  const files = sources(join(sourceRoot, 'activities'));
  expect(files).toContain('activities/index.ts');
  expect(files.flatMap((source) => moduleState(sourceRoot, source))).toEqual(ALLOWED);
});

it('counts what is state and nothing else', () => {
  expect(moduleState(sourceRoot, 'test/support/module-state-sample.ts')).toEqual([
    'test/support/module-state-sample.ts: memo',
    'test/support/module-state-sample.ts: cache',
    'test/support/module-state-sample.ts: seen',
  ]);
});
