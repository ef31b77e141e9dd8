/**
 * The date context (DeerFlow #4781), as the provider receives it over HTTP (a local fake OpenAI-compatible
 * server): every agent's request carries exactly one leading system message, its static prompt followed by
 * `<current_date>YYYY-MM-DD, Weekday</current_date>` (the run's start in workflow time); the task message is
 * untouched. And whatever else joins the system context (the ledger block, a compaction summary) or the
 * transcript (the token budget's warning), no request ever carries a second system message.
 */
import { currentDateContext } from '../../contracts/date-context';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { subagentWorkflow } from '../../workflows/subagent';
import { FakeOpenAI, type FakeChatRequest, type FakeReply } from '../support/fake-openai';
import { emptyWorkspace, leadInput, subagentInput } from '../support/subagent-input';
import { uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();

const systemMessages = (request: FakeChatRequest) => request.messages.filter((m) => m.role === 'system');

it("a subagent's first request: one system message, its prompt then the date; the task untouched", async () => {
  const fake = await FakeOpenAI.start({ replies: [{ content: 'Done.' }] });
  try {
    const input = subagentInput({
      workspace: emptyWorkspace('date-subagent').workspace,
      config: fake.modelsConfig(),
      prompt: 'Count the files.',
    });
    const taskQueue = uniqueTaskQueue('date-subagent');
    const workflowId = `${taskQueue}/task/${input.task_id}`;
    const startTime = await withProjectWorker(taskQueue, async () => {
      const handle = await testClient().workflow.start(subagentWorkflow, {
        taskQueue,
        workflowId,
        args: [input],
      });
      await handle.result();
      return (await handle.describe()).startTime;
    });
    const [request] = fake.chatRequests;
    expect(request.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const date = currentDateContext(startTime);
    expect(date).toMatch(/^<current_date>\d{4}-\d{2}-\d{2}, [A-Z][a-z]+day<\/current_date>$/);
    expect(request.messages[0].content).toBe(`${input.agent.system_prompt}\n\n${date}`);
    expect(request.messages[1].content).toBe('Count the files.');
  } finally {
    await fake.close();
  }
});

it('every request of a lead run (date, ledger block, summary, budget warning) carries exactly one system message', async () => {
  const hasTool = (request: FakeChatRequest, name: string) =>
    request.tools?.some((t) => t.function.name === name) ?? false;
  let leadTurns = 0;
  const fake = await FakeOpenAI.start({
    respond: (request): FakeReply => {
      // The summarizer is shown no tools; a subagent is not shown `task`.
      if (!request.tools || request.tools.length === 0)
        return { content: 'The lead delegated a part and looked around.' };
      if (!hasTool(request, 'task'))
        return { content: 'The part is done.', usage: { input_tokens: 50, output_tokens: 5 } };
      leadTurns += 1;
      if (leadTurns === 1) {
        return {
          tool_calls: [
            {
              name: 'task',
              id: 'call_part',
              args: { description: 'Do the part', prompt: 'Do the part.', subagent_type: 'general-purpose' },
            },
          ],
          usage: { input_tokens: 400, output_tokens: 10 },
        };
      }
      if (leadTurns <= 5) {
        return {
          tool_calls: [{ name: 'ls', args: {} }],
          usage: { input_tokens: 900 * leadTurns, output_tokens: 10 },
        };
      }
      return { content: 'All done.', usage: { input_tokens: 500, output_tokens: 10 } };
    },
  });
  try {
    const input = leadInput({
      workspace: emptyWorkspace('date-lead').workspace,
      config: {
        ...fake.modelsConfig(),
        summarization: { enabled: true, trigger_tokens: 2000, keep_messages: 4 },
        lead: { token_budget: { max_tokens: 60_000, warn_threshold: 0.1 } },
        loop_detection: { enabled: false },
      },
    });
    const taskQueue = uniqueTaskQueue('date-lead');
    const result = await withProjectWorker(taskQueue, () =>
      testClient().workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      }),
    );
    expect(result).toMatchObject({ status: 'completed', final_output: 'All done.' });

    const requests = fake.chatRequests;
    const leadRequests = requests.filter((r) => hasTool(r, 'task'));
    // What the test means to cover did happen: a subagent, a summary, the ledger block and the budget warning.
    expect(requests.some((r) => r.tools?.length && !hasTool(r, 'task'))).toBe(true);
    expect(requests.some((r) => !r.tools || r.tools.length === 0)).toBe(true);
    expect(leadRequests.some((r) => String(r.messages[0].content).includes('conversation_summary'))).toBe(
      true,
    );
    expect(leadRequests.some((r) => String(r.messages[0].content).includes('Work already delegated'))).toBe(
      true,
    );
    expect(
      leadRequests.some((r) => r.messages.some((m) => String(m.content).includes('[TOKEN BUDGET WARNING]'))),
    ).toBe(true);
    for (const request of requests) {
      expect(systemMessages(request)).toHaveLength(1);
      expect(request.messages[0].role).toBe('system');
    }
    // Every agent's request (not the summarizer's) carries the date, once.
    for (const request of requests.filter((r) => r.tools && r.tools.length > 0)) {
      expect(String(request.messages[0].content).match(/<current_date>/g)).toHaveLength(1);
    }
  } finally {
    await fake.close();
  }
});
