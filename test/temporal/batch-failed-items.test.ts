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

it('a batch item that fails its criteria is Failed with SubagentStatus "failed", and its batch says so', async () => {
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
    const end = JSON.parse(started.stdout) as { batch_id: string; counts: Record<string, number> };
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
});
