/**
 * A batch item whose answer fails its acceptance criteria is failed wherever an operator looks (issue 42): its
 * attempt's workflow is Failed in Temporal with `SubagentStatus` `failed` and the criterion in its error, and the
 * batch says so in its search attributes (`SubagentStatus="failed"`, `FailedItems`) and its final details. The
 * worked example of the README (cli/demo/batch) with `--max-attempts 1`: req-005 fails `contains:`.
 */
import { join } from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { FAILED_ITEMS, SUBAGENT_STATUS } from '../../contracts/search-attributes';
import { OUTCOME_MEMO } from '../../contracts/closing';
import { cliEnv, ROOT, runCli } from '../support/cli-process';
import { tempDir } from '../support/subagent-input';
import { artifactsDir, itInBrowser } from '../support/outcomes';
import { listRows, withBrowserPage } from '../support/web-ui';
import {
  testAddress,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

const EXAMPLE = join(ROOT, 'cli', 'demo', 'batch');
const testClient = useTestClient();

async function listed(query: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const execution of testClient().workflow.list({ query })) ids.push(execution.workflowId);
  return ids;
}

describe('the README batch with --max-attempts 1, req-005 failing its contains:', () => {
  let end: { batch_id: string; counts: Record<string, number> };

  beforeAll(async () => {
    const taskQueue = uniqueTaskQueue('batch-failed');
    const workspace = join(tempDir('batch-failed'), 'workspace');
    await withProjectWorker(taskQueue, async () => {
      const started = await runCli(
        [
          'batch',
          'start',
          '--items',
          join(EXAMPLE, 'items.jsonl'),
          '--type',
          'general-purpose',
          '--config',
          join(EXAMPLE, 'config.yaml'),
          '--workspace',
          workspace,
          '--max-attempts',
          '1',
          '--wait',
          '--json',
          '--address',
          testAddress(),
          '--namespace',
          testNamespace(),
          '--task-queue',
          taskQueue,
        ],
        cliEnv(),
      );
      end = JSON.parse(started.stdout) as typeof end;
    });
  });

  it('a batch item that fails its criteria is Failed with SubagentStatus "failed", and its batch says so', async () => {
    expect(end.counts).toMatchObject({ completed: 4, failed: 1 });
    const attemptId = `${end.batch_id}/item/req-005/1`;

    // The attempt: Failed in Temporal, `SubagentStatus` failed, its error naming the criterion.
    const attempt = testClient().workflow.getHandle(attemptId);
    const described = await attempt.describe();
    expect(described.status.name).toBe('FAILED');
    expect(described.typedSearchAttributes.get(SUBAGENT_STATUS)).toBe('failed');
    const failure = await attempt.result().catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(String((failure as WorkflowFailedError).cause?.message)).toContain(
      'acceptance criteria not met: contains: Verdict: testable',
    );
    // An item that met its criteria stays Completed.
    expect(
      (await testClient().workflow.getHandle(`${end.batch_id}/item/req-001/1`).describe()).status.name,
    ).toBe('COMPLETED');

    // The batch: its search attributes and final details say it has a failed item.
    const batch = await testClient().workflow.getHandle(end.batch_id).describe();
    expect(batch.typedSearchAttributes.get(SUBAGENT_STATUS)).toBe('failed');
    expect(batch.typedSearchAttributes.get(FAILED_ITEMS)).toBe(1);
    expect(String(batch.memo?.[OUTCOME_MEMO])).toContain('1 failed');

    // What an operator's query finds (visibility catches up on its own time).
    const scope = `WorkflowId STARTS_WITH "${end.batch_id}"`;
    await waitFor('the failed attempt and its batch in the list', async () => {
      const failed = await listed(`${scope} AND SubagentStatus = "failed"`);
      return failed.includes(attemptId) && failed.includes(end.batch_id);
    });
    expect(await listed(`${scope} AND ExecutionStatus = "Failed"`)).toEqual([attemptId]);
    expect(await listed(`${scope} AND FailedItems > 0`)).toEqual([end.batch_id]);
  });

  itInBrowser('batch-failed')(
    "the Web UI's default list shows the failed attempt red and the batch's status as the search says",
    async () => {
      const scope = `WorkflowId STARTS_WITH "${end.batch_id}"`;
      const attemptId = `${end.batch_id}/item/req-005/1`;
      await waitFor(
        'visibility to hold the batch and its five attempts',
        async () =>
          (await listed(scope)).length === 6 &&
          (await listed(`${scope} AND SubagentStatus = "failed"`)).length === 2,
      );
      await withBrowserPage(async (page) => {
        const rows = await listRows(page, testNamespace(), scope);
        await page.screenshot({ path: join(artifactsDir(), 'web-ui-batch-failed-item.png') });
        const byId = new Map(rows.map((row) => [row.workflowId, row]));
        expect(byId.get(attemptId)?.status).toBe('Failed');
        expect(byId.get(`${end.batch_id}/item/req-001/1`)?.status).toBe('Completed');
        // The operator's filter: exactly the failed attempt and its batch.
        const failed = await listRows(page, testNamespace(), `${scope} AND SubagentStatus = "failed"`);
        await page.screenshot({ path: join(artifactsDir(), 'web-ui-batch-failed-filter.png') });
        expect(failed.map((row) => row.workflowId).sort()).toEqual([end.batch_id, attemptId].sort());
        // Red, as Temporal colours a failure: not the green of a completion.
        expect(byId.get(attemptId)?.badgeColour).not.toBe(
          byId.get(`${end.batch_id}/item/req-001/1`)?.badgeColour,
        );
      });
    },
  );
});
