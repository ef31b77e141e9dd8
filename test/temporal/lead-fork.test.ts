/**
 * The `fork` provider on the real server: a child starts from the lead's completed turns, which reach it by
 * reference to the lead's stored transcript, after its own system message and before its own task.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunResult } from '../../contracts/lead';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();

/** A lead that lists the workspace, then delegates a check; the child says whether it sees that listing. */
async function delegateAfterListing(config: Record<string, unknown>): Promise<LeadRunResult> {
  const dir = tempDir('lead-fork');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  writeFileSync(join(workspace, 'alpha-7731.txt'), 'a');
  const check = { description: 'Check the files', prompt: 'Check them.', subagent_type: 'general-purpose' };
  const input = leadInput({
    workspace,
    config,
    scriptFile: writeScript(dir, {
      scripts: [
        {
          agent: 'lead',
          turns: [
            { content: 'Listing first.', tool_calls: [{ name: 'ls', args: { path: '.' } }] },
            { content: 'Delegating the check.', tool_calls: [{ name: 'task', id: 'check', args: check }] },
            { content: 'Checked.' },
          ],
        },
        {
          agent: 'general-purpose',
          turns: [
            {
              // Seen only through the lead's `ls` result.
              content: 'I see alpha-7731.txt from the lead turns.',
              if_missing: { text: 'alpha-7731.txt', turn: { content: 'I see no lead turns.' } },
            },
          ],
        },
      ],
    }),
  });
  const taskQueue = uniqueTaskQueue('lead-fork');
  return withProjectWorker(taskQueue, () =>
    testClient().workflow.execute(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-lead`,
      args: [input],
    }),
  );
}

it('gives a fork child the lead completed turns, a tool result among them', async () => {
  const result = await delegateAfterListing({ subagents: { provider: 'fork' } });
  expect(result.status).toBe('completed');
  expect(result.ledger.map((entry) => [entry.id, entry.status, entry.result_brief])).toEqual([
    ['check', 'completed', 'I see alpha-7731.txt from the lead turns.'],
  ]);
});

it('gives a spawn child a fresh conversation: the lead turns stay out', async () => {
  const result = await delegateAfterListing({});
  expect(result.ledger.map((entry) => entry.result_brief)).toEqual(['I see no lead turns.']);
});
