/**
 * The workflow side of a remote delegation on the real server, the protocol behind `runRemoteSubagent` a double
 * handed to the worker (activities/remote/index.ts `RemoteProtocol`; the A2A and ACP clients have their own
 * tests): an ACP load's call is a `subagentWorkflow` whose activity gets the persona before the prompt, the
 * delegation's id and the workspace; `completed` is a success and `max_tokens` an error result the lead reads;
 * a remote question goes to the person and the answer back to the same remote task; without clarification it
 * is an error result; cancelling the lead cancels the activity, which the double sees before the run ends.
 */
import { Context } from '@temporalio/activity';
import type { WorkflowHandle } from '@temporalio/client';
import type { RemoteProtocol } from '../../activities/remote';
import { workflowResult } from '../../client/results';
import { answerClarificationUpdate } from '../../contracts/clarification';
import { leadStatusQuery, type LeadRunInput, type LeadRunResult } from '../../contracts/lead';
import type { RemoteSubagentInput, RemoteSubagentResult } from '../../contracts/remote-subagent';
import type { leadRunWorkflow } from '../../workflows/lead-run';
import {
  startLeadRun,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { leadInput, scriptedWorkspace } from '../support/subagent-input';

const testClient = useTestClient();

const PERSONA = 'You are the reviewing agent.';
const PROVIDERS = { local_acp: { type: 'acp', command: 'node', args: ['agent.mjs'], env: {} } };
const LOAD = {
  tool_name: 'subagent_acp',
  provider: 'local_acp',
  persona: PERSONA,
  agent_options: { model: 'agent-x' },
};

/** What the double was asked, by delegation id, in order. */
const asked: RemoteSubagentInput[] = [];
const tornDown = new Set<string>();

/** The remote agent: answers by what the prompt asks for. */
async function remoteRun(input: RemoteSubagentInput): Promise<RemoteSubagentResult> {
  asked.push(input);
  if (input.prompt.includes('ASK')) {
    if (input.answer === undefined) {
      return {
        end: 'input_required',
        question: 'Which region?',
        remote_task_id: 'rt-1',
        context_id: 'ctx-1',
        messages: [{ role: 'assistant', content: 'I need the region.' }],
      };
    }
    return {
      end: 'completed',
      text: `Region noted: ${input.answer.text}`,
      remote_task_id: 'rt-1',
      messages: [],
    };
  }
  if (input.prompt.includes('LONG')) {
    const activity = Context.current();
    try {
      for (;;) {
        activity.heartbeat({ prompt_sent: true, updates: 0 });
        await activity.sleep(200);
      }
    } finally {
      tornDown.add(input.delegation_id);
    }
  }
  if (input.prompt.includes('BIG')) {
    return { end: 'max_tokens', error: 'hit 4096 tokens', text: 'half an answer', messages: [] };
  }
  return {
    end: 'completed',
    text: 'ACP fixed it.',
    usage: { input_tokens: 40, output_tokens: 10, total_tokens: 50 },
    messages: [
      { role: 'assistant', content: 'Editing.', tool_calls: [{ id: 'e1', name: 'edit', args: '{}' }] },
      { role: 'tool', tool_call_id: 'e1', name: 'edit', content: 'edited' },
    ],
  };
}

const remote = {
  protocols: {
    acp: { probe: () => Promise.resolve({ available: true }), run: remoteRun } satisfies RemoteProtocol,
  },
};

function acpCall(id: string, prompt: string) {
  return { name: 'subagent_acp', id, args: { description: `Remote ${id}`, prompt } };
}

/** A lead whose first response makes `calls`, then answers with what its tools returned. */
function input(
  label: string,
  calls: ReturnType<typeof acpCall>[],
  config: Record<string, unknown> = {},
): LeadRunInput {
  const { workspace, scriptFile } = scriptedWorkspace(label, {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: calls },
          { content: calls.map((c) => `${c.id}=[{{tool_result:${c.id}}}]`).join(' ') },
        ],
      },
    ],
  });
  return leadInput({
    workspace,
    scriptFile,
    config: { subagent_providers: PROVIDERS, subagent_tools: [LOAD], ...config },
  });
}

async function run<T>(
  label: string,
  lead: LeadRunInput,
  during: (handle: WorkflowHandle<typeof leadRunWorkflow>) => Promise<T>,
): Promise<{ result: LeadRunResult; during: T }> {
  const taskQueue = uniqueTaskQueue(label);
  return withProjectWorker(
    taskQueue,
    async () => {
      const handle = await startLeadRun(testClient(), lead, taskQueue);
      const seen = await during(handle);
      return { result: await workflowResult(handle), during: seen };
    },
    { remote },
  );
}

it('runs an ACP load as a subagent: persona before the prompt, completed is success, max_tokens an error result', async () => {
  const lead = input('remote-ends', [
    acpCall('r_ok', 'Fix the bug.'),
    acpCall('r_big', 'Write the BIG report.'),
  ]);
  const { result, during: child } = await run('remote-ends', lead, async (handle) => {
    await handle.result();
    const description = await testClient().workflow.getHandle(`${handle.workflowId}/task/r_ok`).describe();
    return { id: handle.workflowId, memo: description.memo, summary: await description.staticSummary() };
  });
  expect(result.status).toBe('completed');
  expect(result.final_output).toBe(
    'r_ok=[Task Succeeded. Result: ACP fixed it.] r_big=[Task failed. Error: local_acp (acp): the remote agent ran ' +
      'out of tokens (max_tokens): hit 4096 tokens\n\nPartial result (the subagent stopped before finishing; this ' +
      'is incomplete):\nhalf an answer]',
  );
  expect(
    result.ledger.map((entry) => [entry.id, entry.subagent_type, entry.status, entry.model_name]),
  ).toEqual([
    ['r_ok', 'subagent_acp', 'completed', 'agent-x'],
    ['r_big', 'subagent_acp', 'failed', 'agent-x'],
  ]);
  expect(result.ledger[0].token_usage).toEqual({ input_tokens: 40, output_tokens: 10, total_tokens: 50 });
  const ok = asked.find((a) => a.delegation_id === `${child.id}/task/r_ok`);
  expect(ok).toMatchObject({
    provider: { type: 'acp', name: 'local_acp', command: 'node', args: ['agent.mjs'], env: {} },
    prompt: `${PERSONA}\n\nFix the bug.`,
    model: 'agent-x',
    workspace: lead.scope.workspace,
  });
  expect(ok?.deadline_ms).toBeGreaterThan(Date.now());
  expect(child.memo).toMatchObject({
    subagent_type: 'subagent_acp',
    provider: 'local_acp',
    provider_type: 'acp',
  });
  expect(child.summary).toBe('subagent_acp via local_acp (acp): Remote r_ok');
});

it('takes a remote question to the person and the answer back to the same remote task', async () => {
  const lead = input('remote-ask', [acpCall('r_ask', 'ASK which region.')]);
  const { result } = await run('remote-ask', lead, async (handle) => {
    await waitFor('the remote question', async () =>
      ((await handle.query(leadStatusQuery).catch(() => undefined))?.questions ?? []).some(
        (q) => q.ref === 'r_ask/q1' && q.question === 'Which region?',
      ),
    );
    await testClient()
      .workflow.getHandle(`${handle.workflowId}/task/r_ask`)
      .executeUpdate(answerClarificationUpdate, { args: [{ answer: 'EU only' }] });
  });
  expect(result.final_output).toBe('r_ask=[Task Succeeded. Result: Region noted: EU only]');
  const answered = asked.find((a) => a.prompt.includes('ASK') && a.answer !== undefined);
  expect(answered?.answer).toEqual({ remote_task_id: 'rt-1', context_id: 'ctx-1', text: 'EU only' });
});

it('ends a remote question as an error result when the run takes no questions', async () => {
  const lead = input('remote-ask-off', [acpCall('r_off', 'ASK which region.')], {
    clarification: { enabled: false },
  });
  const { result } = await run('remote-ask-off', lead, async () => undefined);
  expect(result.ledger[0]).toMatchObject({ id: 'r_off', status: 'failed' });
  expect(result.final_output).toContain(
    'r_off=[Task failed. Error: local_acp (acp): the remote agent needs input ("Which region?"), but questions ' +
      'to a person are off in this run (clarification.enabled)',
  );
});

it('cancels the remote activity with the lead, and waits for it to tear down', async () => {
  const lead = input('remote-cancel', [acpCall('r_long', 'A LONG task.')]);
  const { result, during: id } = await run('remote-cancel', lead, async (handle) => {
    const delegation = `${handle.workflowId}/task/r_long`;
    await waitFor('the remote run', () => asked.some((a) => a.delegation_id === delegation));
    await handle.cancel();
    return delegation;
  });
  expect(result.status).toBe('cancelled');
  expect(result.ledger[0]).toMatchObject({ id: 'r_long', status: 'cancelled' });
  expect(tornDown.has(id)).toBe(true);
});
