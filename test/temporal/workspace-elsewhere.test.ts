/**
 * A run whose workspace another host placed before this agent heard of it: the agent's first call is a local
 * activity (`ls` is idempotent) on a host that does not hold the workspace, which refuses it (WorkspaceMoved)
 * and names the home. The call must go to the home and the run carry on there. This is what the chaos test met
 * when a subagent's first append placed the workspace on a host that then died before answering: its next call,
 * an `ls`, was refused by a live host, and the subagent failed on the refusal instead of following it, because a
 * local activity's failure reached the workflow bare, not as an ActivityFailure (workflows/local-activities.ts).
 *
 * Idempotent calls at a home placement are tried on the workflow's own worker first (workflows/workspace-route.ts):
 * on the home they run there, as local activities; elsewhere one refusal sends them, and the later ones, home.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { temporal } from '@temporalio/proto';
import { leadStatusQuery } from '../../contracts/lead';
import { DEFAULT_WORKSPACE_SETTINGS } from '../../contracts/workspace';
import { workspaceHosting } from '../../worker/workspace-hosting';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { Worker } from '@temporalio/worker';
import { projectDataConverter } from '../../payloads/data-converter';
import {
  connectClient,
  testWorkflowBundle,
  uniqueTaskQueue,
  withProjectWorker,
  type TestClient,
} from '../harness/temporal';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';

let testClient: TestClient;
beforeAll(async () => {
  testClient = await connectClient();
});
afterAll(() => testClient.close());

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The queues of a history's `executeToolCall` activities (regular ones), in order. */
function toolCallQueues(events: readonly HistoryEvent[]): (string | null | undefined)[] {
  return events.flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    return scheduled?.activityType?.name === 'executeToolCall' ? [scheduled.taskQueue?.name] : [];
  });
}

/** How many of a history's local-activity markers are `executeToolCall`'s (run, or refused). */
function localToolCalls(events: readonly HistoryEvent[]): number {
  return events.filter(
    (event) =>
      event.markerRecordedEventAttributes?.markerName === 'core_local_activity' &&
      Object.values(event.markerRecordedEventAttributes.details ?? {}).some((details) =>
        (details.payloads ?? []).some((payload) =>
          Buffer.from(payload.data ?? [])
            .toString('utf8')
            .includes('executeToolCall'),
        ),
      ),
  ).length;
}

function homeHost(taskQueue: string, hostId: string): ReturnType<typeof workspaceHosting> {
  return workspaceHosting(
    { workspace: { ...DEFAULT_WORKSPACE_SETTINGS, snapshots: 'on' }, hostId },
    taskQueue,
    true,
  );
}

it('sends a first call refused by a host without the workspace to its home, and the run carries on there', async () => {
  const client = testClient.client;
  const dir = tempDir('workspace-elsewhere');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  mkdirSync(join(dir, 'writer'));
  mkdirSync(join(dir, 'reader'));
  const queueX = uniqueTaskQueue('elsewhere-x');
  const queueY = uniqueTaskQueue('elsewhere-y');
  const hostX = homeHost(queueX, 'host-x');
  const hostY = homeHost(queueY, 'host-y');

  await withProjectWorker(
    queueX,
    async () => {
      // The first run writes a file on host x: the workspace is placed there (epoch 1).
      const writer = await client.workflow.start(leadRunWorkflow, {
        taskQueue: queueX,
        workflowId: `${queueX}-writer`,
        args: [
          leadInput({
            workspace,
            scriptFile: writeScript(join(dir, 'writer'), {
              scripts: [
                {
                  agent: 'lead',
                  turns: [
                    {
                      content: 'Write it down.',
                      tool_calls: [{ name: 'write_file', args: { path: 'notes.txt', content: 'on x\n' } }],
                    },
                    { content: 'Check.', tool_calls: [{ name: 'ls', args: {} }] },
                    { content: 'Read it.', tool_calls: [{ name: 'read_file', args: { path: 'notes.txt' } }] },
                    { content: 'Written.' },
                  ],
                },
              ],
            }),
          }),
        ],
      });
      expect((await writer.result()).status).toBe('completed');
      // On its home's own worker every call ran inside the workflow's tasks, as a local activity: the write
      // (unplaced, it placed the workspace here) and the two reads after it (at the home placement, not sent to
      // the home's queue).
      const written = (await writer.fetchHistory()).events ?? [];
      expect(toolCallQueues(written)).toEqual([]);
      expect(localToolCalls(written)).toBe(3);
      const runKey = `${writer.workflowId}@${(await writer.describe()).runId}`;

      // A second workflow of the same run (its workspace key), on host y's queue, not told where the workspace
      // is: its first call, an `ls`, runs as a local activity on host y.
      await withProjectWorker(
        queueY,
        async () => {
          const input = leadInput({
            workspace,
            scriptFile: writeScript(join(dir, 'reader'), {
              scripts: [
                {
                  agent: 'lead',
                  turns: [
                    { content: 'Look around.', tool_calls: [{ name: 'ls', args: {} }] },
                    { content: 'Again.', tool_calls: [{ name: 'ls', args: { path: '.' } }] },
                    { content: 'Read it.', tool_calls: [{ name: 'read_file', args: { path: 'notes.txt' } }] },
                    { content: 'Looked.' },
                  ],
                },
              ],
            }),
          });
          const reader = await client.workflow.start(leadRunWorkflow, {
            taskQueue: queueY,
            workflowId: `${queueY}-reader`,
            args: [{ ...input, scope: { ...input.scope, workspace_key: runKey } }],
          });
          const result = await reader.result();
          expect(result.error).toBeUndefined();
          expect(result.status).toBe('completed');
          // It ran where the workspace lives, and saw what the first run wrote there.
          expect((await reader.query(leadStatusQuery)).workspace).toMatchObject({
            host_id: 'host-x',
            epoch: 1,
          });
          // The first call, refused on host y, went home; so did the two after it, without another try on y.
          const events = (await reader.fetchHistory()).events ?? [];
          expect(toolCallQueues(events)).toEqual(Array(3).fill(`${queueX}@host-x`));
          expect(localToolCalls(events)).toBe(1);
          // Replayed (another worker, or the cache evicted it), the refused local try takes the same path.
          for (const handle of [writer, reader]) {
            await Worker.runReplayHistory(
              // The project's converter: the inputs' larger fields are in the payload store (shared fields).
              { workflowBundle: { codePath: testWorkflowBundle() }, dataConverter: projectDataConverter() },
              await handle.fetchHistory(),
              handle.workflowId,
            );
          }
        },
        { workspaces: hostY },
      );
    },
    { workspaces: hostX },
  );
}, 120_000);
