/**
 * The fork tests' files scenario: an agent writes notes.txt twice ("first version", then "second version"); a
 * fork whose message says READ reads the file back. And the home host that saves the workspace after each
 * change, as `subagents worker` does, so a fork has a snapshot to restore.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_WORKSPACE_SETTINGS } from '../../contracts/workspace';
import { workspaceHosting } from '../../worker/workspace-hosting';
import type { FakeReply } from './fake-openai';
import type { FakeRequestView } from './fake-model-server';
import { testAddress } from '../harness/temporal';
import { tempDir } from './subagent-input';

/** The writer's turns (and, asked to READ, the reader's): write, write again, answer "Written twice.". */
export function notesWriter(view: FakeRequestView): FakeReply {
  const results = view.tool_results;
  const write = (content: string): FakeReply => ({
    tool_calls: [{ name: 'write_file', args: { path: 'notes.txt', content } }],
  });
  if (view.last_user_text.includes('READ'))
    return results.length === 1
      ? { tool_calls: [{ name: 'read_file', args: { path: 'notes.txt' } }] }
      : { content: `Read: ${results[results.length - 1]}` };
  if (results.length === 0) return write('first version');
  return results.length === 1 ? write('second version') : { content: 'Written twice.' };
}

/** A home host on `taskQueue` that snapshots the workspace after each change. */
export function snapshottingHost(taskQueue: string): ReturnType<typeof workspaceHosting> {
  return workspaceHosting({ workspace: { ...DEFAULT_WORKSPACE_SETTINGS, snapshots: 'on' } }, taskQueue, true);
}

/**
 * The CLI's flags for a fork test's server and task queue, with a config naming the fake provider at `url`
 * (its key read from `keyEnv`), written to a folder of its own.
 */
export function cliServerArgs(url: string, keyEnv: string, label: string, taskQueue: string): string[] {
  const config = join(tempDir(label), 'config.yaml');
  writeFileSync(
    config,
    `models:\n  - name: fake\n    provider: openai\n    model: fake-model\n    base_url: ${url}\n` +
      `    api_key: $${keyEnv}\n`,
  );
  return ['--config', config, '--address', testAddress(), '--task-queue', taskQueue];
}
