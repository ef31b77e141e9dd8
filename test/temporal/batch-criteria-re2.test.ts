/**
 * A `matches:` pattern is checked at a batch's start by RE2, the engine its check runs on: one RE2 refuses
 * (lookaround) is refused before anything starts, by the client API and by the batch workflow itself (a start
 * that skipped the client), with RE2's message.
 */
import { ApplicationFailure, WorkflowFailedError, WorkflowNotFoundError } from '@temporalio/client';
import { scriptedBatchInput } from '../support/subagent-input';
import { BatchesClient } from '../../client/batches';
import { INVALID_INPUT_FAILURE_TYPE, InvalidInputError } from '../../contracts/inputs';
import type { batchWorkflow } from '../../workflows/batch';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();

const REFUSED =
  /items\[0\]\.acceptance_criteria\[0\]: "matches: Done\(\?=!\)" is not a valid regular expression: error parsing regexp: invalid or unsupported Perl syntax: `\(\?=` \(patterns run on a linear-time engine/;

function lookaheadBatch() {
  return scriptedBatchInput(
    [{ key: 'a', prompt: 'Say done.', acceptance_criteria: ['matches: Done(?=!)'] }],
    {},
    { scripts: [{ agent: 'general-purpose', turns: [{ content: 'Done!' }] }] },
  );
}

it('refuses a pattern RE2 refuses at the client API, nothing started', async () => {
  const batchId = `${uniqueTaskQueue('re2-client')}-batch`;
  const err: unknown = await new BatchesClient(testClient())
    .start(lookaheadBatch(), { taskQueue: 'never-used', batchId })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(err).toBeInstanceOf(InvalidInputError);
  expect((err as Error).message).toMatch(REFUSED);
  await expect(testClient().workflow.getHandle(batchId).describe()).rejects.toBeInstanceOf(
    WorkflowNotFoundError,
  );
});

it('refuses it in the batch workflow too, starting no item', async () => {
  const taskQueue = uniqueTaskQueue('re2-workflow');
  const handle = await testClient().workflow.start<typeof batchWorkflow>('batchWorkflow', {
    taskQueue,
    workflowId: `${taskQueue}-batch`,
    args: [lookaheadBatch()],
  });
  const err: unknown = await withProjectWorker(taskQueue, () =>
    handle.result().then(
      () => undefined,
      (e: unknown) => e,
    ),
  );
  expect(err).toBeInstanceOf(WorkflowFailedError);
  const failure = (err as WorkflowFailedError).cause as ApplicationFailure;
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure.type).toBe(INVALID_INPUT_FAILURE_TYPE);
  expect(failure.message).toMatch(REFUSED);
  const events = (await handle.fetchHistory()).events ?? [];
  expect(events.filter((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)).toEqual([]);
});
