/**
 * A batch started before `matches:` was checked on RE2 replays as it ran: its history (here, a recorded one
 * whose input is rewritten to hold a lookahead, as the JavaScript RegExp check accepted) carries no patch
 * marker, so the workflow keeps the old verdict and starts its items again on replay instead of refusing
 * them. A new batch with the same input is refused (test/temporal/batch-criteria-re2.test.ts).
 */
import type { temporal } from '@temporalio/proto';
import type { Payload } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { projectCodec, projectDataConverter } from '../../payloads/data-converter';
import { scriptedBatchInput } from '../support/subagent-input';
import type { BatchInput } from '../../contracts/batch';
import type { batchWorkflow } from '../../workflows/batch';
import { testWorkflowBundle, uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();

/** The history with the workflow's input rewritten by `edit` (decoded by the project's codecs to plain JSON). */
async function withInput(
  history: temporal.api.history.v1.IHistory,
  edit: (input: BatchInput) => BatchInput,
): Promise<temporal.api.history.v1.IHistory> {
  const [started, ...rest] = history.events ?? [];
  const stored = started?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  const [payload] = stored ? await projectCodec().decode([stored as Payload]) : [];
  const encoding = Buffer.from(payload?.metadata?.encoding ?? []).toString();
  if (!payload?.data || encoding !== 'json/plain')
    throw new Error(`the input is ${encoding}, not plain JSON`);
  const input = JSON.parse(Buffer.from(payload.data).toString()) as BatchInput;
  const data = Buffer.from(JSON.stringify(edit(input)));
  return {
    events: [
      {
        ...started,
        workflowExecutionStartedEventAttributes: {
          ...started!.workflowExecutionStartedEventAttributes,
          input: { payloads: [{ ...payload, data }] },
        },
      },
      ...rest,
    ],
  };
}

it('replays a batch whose lookahead the JavaScript check accepted, as it ran', async () => {
  const taskQueue = uniqueTaskQueue('re2-replay');
  const workflowId = `${taskQueue}-batch`;
  const handle = await testClient().workflow.start<typeof batchWorkflow>('batchWorkflow', {
    taskQueue,
    workflowId,
    args: [
      scriptedBatchInput(
        [{ key: 'a', prompt: 'Say done.', acceptance_criteria: ['matches: Done!'] }],
        {},
        { scripts: [{ agent: 'general-purpose', turns: [{ content: 'Done!' }] }] },
      ),
    ],
  });
  const end = await withProjectWorker(taskQueue, () => handle.result());
  expect(end).toMatchObject({ status: 'completed', counts: { completed: 1 } });
  const recorded = await handle.fetchHistory();
  // As a worker replays it: the project's codecs decode what they encoded.
  const bundle = {
    workflowBundle: { codePath: testWorkflowBundle() },
    dataConverter: projectDataConverter(),
  };
  await expect(Worker.runReplayHistory(bundle, recorded, workflowId)).resolves.toBeUndefined();

  const lookahead = await withInput(recorded, (input) => ({
    ...input,
    items: input.items.map((item) => ({ ...item, acceptance_criteria: ['matches: Done(?=!)'] })),
  }));
  await expect(Worker.runReplayHistory(bundle, lookahead, workflowId)).resolves.toBeUndefined();
});
