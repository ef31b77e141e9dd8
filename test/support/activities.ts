/**
 * The project's activities for a test that calls them directly: built as a worker builds them
 * (createProjectActivities), over this process's payload store unless the test hands in its own pieces.
 */
import { createProjectActivities, type ProjectActivityDeps } from '../../activities';
import { DEFAULT_ADMISSION_SETTINGS, DEFAULT_RUN_ADMISSION_SETTINGS } from '../../contracts/admission';
import { payloadStore } from '../../payloads/store';

export function testActivities(deps: Partial<ProjectActivityDeps> = {}) {
  return createProjectActivities({
    store: deps.transcripts?.store ?? payloadStore(),
    admission: {
      settings: { subagents: DEFAULT_ADMISSION_SETTINGS, runs: DEFAULT_RUN_ADMISSION_SETTINGS },
      identity: 'test',
    },
    ...deps,
  });
}
