/**
 * Compaction on the real server: a lead whose transcript passes the trigger is summarized, keeps its task,
 * its recent messages and its delegation ledger block, and does not re-delegate work done before the summary.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { LeadRunInput, LeadRunResult } from '../../contracts/lead';
import type { ModelCallInput } from '../../contracts/model';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();

/** Only the child's answer carries this: after compaction only the ledger block still shows it. */
const PART_RESULT = 'PART-RESULT-7731';

const delegatePart = (id: string) => ({
  content: 'Delegating the part.',
  tool_calls: [
    {
      name: 'task',
      id,
      args: {
        description: 'Measure the part',
        prompt: 'Measure the part.',
        subagent_type: 'general-purpose',
      },
    },
  ],
});

const look = (k: number, inputTokens: number) => ({
  content: `Looking at folder ${k}.`,
  tool_calls: [{ name: 'ls', args: { path: `folder-${k}` } }],
  usage: { input_tokens: inputTokens, output_tokens: 10 },
});

function script(): ModelScriptFileInput {
  return {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { ...delegatePart('part'), usage: { input_tokens: 500, output_tokens: 10 } },
          look(1, 900),
          look(2, 1500),
          look(3, 2500), // past the trigger: the next call is preceded by a summary
          look(4, 700),
          look(5, 900),
          {
            // A model that no longer sees the part's result would delegate it again.
            content: `Done: the part measured ${PART_RESULT}.`,
            usage: { input_tokens: 1000, output_tokens: 10 },
            if_missing: { text: PART_RESULT, turn: delegatePart('again') },
          },
          { content: 'Delegated again.' },
        ],
      },
      {
        agent: 'lead/summarizer',
        turns: [{ content: 'The lead delegated one part and listed folders 1-3.' }],
      },
      { agent: 'general-purpose', turns: [{ content: `The part measures ${PART_RESULT}.` }] },
    ],
  };
}

async function runLead(
  input: LeadRunInput,
): Promise<{ result: LeadRunResult; modelCalls: ModelCallInput[] }> {
  const taskQueue = uniqueTaskQueue('summarization');
  return withProjectWorker(taskQueue, async () => {
    const handle = await testClient().workflow.start(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-lead`,
      args: [input],
    });
    const result = await handle.result();
    const history = await handle.fetchHistory();
    const modelCalls: ModelCallInput[] = [];
    for (const event of history.events ?? []) {
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled?.activityType?.name !== 'callModel') continue;
      modelCalls.push(
        await decodeFromPayloadsAtIndex<ModelCallInput>(
          testClient().options.loadedDataConverter,
          0,
          scheduled.input?.payloads,
        ),
      );
    }
    return { result, modelCalls };
  });
}

function input(summarization: Record<string, unknown>): LeadRunInput {
  const dir = tempDir('summarization');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  for (let k = 1; k <= 5; k++) mkdirSync(join(workspace, `folder-${k}`));
  return leadInput({
    workspace,
    scriptFile: writeScript(dir, script()),
    prompt: 'Measure the part, then look around.',
    config: { summarization },
  });
}

it('compacts a long lead transcript, keeps the ledger block, and does not re-delegate', async () => {
  const { result, modelCalls } = await runLead(
    input({ enabled: true, trigger_tokens: 2000, keep_messages: 4 }),
  );
  expect(result.status).toBe('completed');
  expect(result.final_output).toBe(`Done: the part measured ${PART_RESULT}.`);
  // One delegation, made before the summary; the ledger is what it was.
  expect(result.ledger.map((entry) => [entry.id, entry.status])).toEqual([['part', 'completed']]);

  // The calls after the summary carry it in their system context, with the ledger block beside it.
  const compacted = modelCalls.slice(4);
  expect(compacted.length).toBe(3);
  for (const call of compacted) {
    expect(call.system_context).toContain('The lead delegated one part and listed folders 1-3.');
    expect(call.system_context).toContain(PART_RESULT);
  }
  // The first call after the summary is sent [system, task, …4 recent], no longer the 10 messages before it
  // (the delegation's call and result among them).
  const sent = (call: ModelCallInput) => (call.transcript_ref?.count ?? 0) + call.messages.length;
  expect(sent(modelCalls[3])).toBe(8);
  expect(sent(modelCalls[4])).toBe(6);
  expect(modelCalls[3].system_context).not.toContain('conversation_summary');
  // The token budget default follows the switch.
  expect(input({ enabled: true }).token_budget.max_tokens).toBe(1_000_000);
  expect(input({ enabled: false }).token_budget.max_tokens).toBe(2_000_000);
});

it('without the ledger block the same model would re-delegate (the test can fail)', async () => {
  // No summarization: the transcript itself keeps the result, so this only checks the script's condition
  // from the other side: with the result nowhere in what is sent, the model delegates again.
  const dir = tempDir('summarization-control');
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  const lead = leadInput({
    workspace,
    scriptFile: writeScript(dir, {
      scripts: [
        {
          agent: 'lead',
          turns: [
            {
              content: 'Answering.',
              if_missing: { text: PART_RESULT, turn: delegatePart('again') },
            },
            { content: 'Delegated again.' },
          ],
        },
        { agent: 'general-purpose', turns: [{ content: 'Measured.' }] },
      ],
    }),
  });
  const { result } = await runLead(lead);
  expect(result.ledger.map((entry) => entry.id)).toEqual(['again']);
});
