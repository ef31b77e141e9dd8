/**
 * Whose run it is, against the real server: a run started for a user (`lead.user_id`, `--user`, the client
 * API's `user_id`) carries its `UserId` on the lead and on everything the run starts — its `task` children, a
 * batch and the batch's items — so the Web UI's `UserId = "alice"` finds the whole run and nothing of another
 * user's. A run started without one is `default`'s.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { SubagentsClient } from '../../client/api';
import { USER_ID } from '../../contracts/search-attributes';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';
import {
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();

const SCRIPT = {
  scripts: [
    {
      agent: 'lead',
      turns: [
        {
          tool_calls: [
            {
              name: 'task',
              id: 't1',
              args: { description: 'Summarise', prompt: 'Summarise.', subagent_type: 'general-purpose' },
            },
            {
              name: 'batch_task',
              id: 'b1',
              args: { description: 'Review', subagent_type: 'general-purpose', items_file: 'items.jsonl' },
            },
          ],
        },
        { tool_calls: [{ name: 'batch_status', id: 's1', args: { batch_id: 'b1', wait_seconds: 300 } }] },
        { content: 'Done.' },
      ],
    },
    { agent: 'general-purpose', repeat_last: true, turns: [{ content: 'Looked at it.' }] },
  ],
};

function input(config: Record<string, unknown>) {
  const { workspace, scriptFile } = scriptedWorkspace('user-identity', SCRIPT);
  writeFileSync(
    join(workspace, 'items.jsonl'),
    ['r1', 'r2'].map((key) => JSON.stringify({ key, prompt: `Review ${key}.` })).join('\n'),
  );
  return leadInput({
    workspace,
    scriptFile,
    config: { subagents: { batch: { enabled: true } }, ...config },
  });
}

/** The workflow ids a visibility query finds, sorted. */
async function idsOf(client: Client, query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of client.workflow.list({ query })) ids.push(execution.workflowId);
  return ids.sort();
}

it('carries the run’s user to every workflow the run starts, and the Web UI’s filter finds them all', async () => {
  const client = testClient();
  const api = new SubagentsClient(client, testNamespace());
  const taskQueue = uniqueTaskQueue('user-identity');
  const alice = `${taskQueue}-alice`;
  const nobody = `${taskQueue}-nobody`;
  const results = await withProjectWorker(taskQueue, async () =>
    Promise.all([
      (await api.startRun(input({ lead: { user_id: 'alice' } }), { taskQueue, runId: alice })).result(),
      (await api.startRun(input({}), { taskQueue, runId: nobody })).result(),
    ]),
  );
  expect(results.map((result) => result.status)).toEqual(['completed', 'completed']);

  // The lead, its task child, the batch and its two items: five workflows of alice's run.
  const ofRun = (runId: string) => `LeadRunId = '${runId}'`;
  await waitFor('visibility to list both runs whole', async () => {
    const [a, b] = await Promise.all([idsOf(client, ofRun(alice)), idsOf(client, ofRun(nobody))]);
    return a.length === 5 && b.length === 5;
  });
  const alicesRun = await idsOf(client, ofRun(alice));
  expect(alicesRun).toEqual(expect.arrayContaining([alice, `${alice}/task/t1`, `${alice}/batch/b1`]));
  expect(await idsOf(client, `UserId = 'alice' AND TaskQueue = '${taskQueue}'`)).toEqual(alicesRun);
  expect(await idsOf(client, `UserId = 'default' AND TaskQueue = '${taskQueue}'`)).toEqual(
    await idsOf(client, ofRun(nobody)),
  );
  const lead = await client.workflow.getHandle(alice).describe();
  expect(lead.typedSearchAttributes.get(USER_ID)).toBe('alice');
});
