/**
 * The provider registry on the real server, the model a fake OpenAI endpoint that records what it was sent: a
 * lead with three delegation tools (`task` on spawn, `subagent_fork` on fork, `subagent_helper` on spawn with
 * its own persona, model, tool filter and words) delegates to each, and the model saw each tool's wording and
 * the seed's `{description, prompt}` schema; a remote provider that does not answer when the run starts leaves
 * its tool out of the run, said by one event; a run without remote loads probes nothing.
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { leadEventsQuery } from '../../contracts/lead';
import type { leadRunWorkflow } from '../../workflows/lead-run';
import { uniqueTaskQueue, useTestClient, withProjectWorker, startLeadRun } from '../harness/temporal';
import { FakeOpenAI, type FakeChatRequest, type FakeReply } from '../support/fake-openai';
import { leadInput, tempDir } from '../support/subagent-input';

const testClient = useTestClient();

const LEAD_PROMPT = 'Survey the workspace (LEAD-PROMPT-7781).';
const HELPER_PERSONA = 'You are the helper persona: brief and exact.';
const HELPER_WORDS = 'HELPER-WORDS: for a second look at one file.';

type FakeTool = NonNullable<FakeChatRequest['tools']>[number];

const toolNamed = (request: FakeChatRequest, name: string): FakeTool | undefined =>
  request.tools?.find((tool) => tool.function.name === name);
const isLead = (request: FakeChatRequest) => toolNamed(request, 'task') !== undefined;
const systemOf = (request: FakeChatRequest) => String(request.messages[0]?.content ?? '');
/** `Spawn`, `Fork` or `Helper`: the child's own task, whatever else its transcript holds. */
const childTask = (request: FakeChatRequest) =>
  request.messages
    .map((m) => /(\w+) task: say what you saw/.exec(String(m.content ?? ''))?.[1])
    .find((task) => task !== undefined) ?? 'Unknown';

function call(name: string, id: string, args: Record<string, unknown>) {
  return { name, id, args };
}

/** The lead delegates once on each tool, then answers; each child says what it saw. */
function respond(request: FakeChatRequest): FakeReply {
  if (isLead(request)) {
    if (!request.messages.some((m) => m.role === 'tool')) {
      return {
        tool_calls: [
          call('task', 't_spawn', {
            description: 'Spawn look',
            prompt: 'Spawn task: say what you saw.',
            subagent_type: 'general-purpose',
          }),
          call('subagent_fork', 't_fork', {
            description: 'Fork look',
            prompt: 'Fork task: say what you saw.',
          }),
          call('subagent_helper', 't_helper', {
            description: 'Helper look',
            prompt: 'Helper task: say what you saw.',
          }),
        ],
      };
    }
    return { content: 'All three answered.' };
  }
  const sawLead = request.messages.some((m) => String(m.content ?? '').includes('LEAD-PROMPT-7781'));
  return { content: `${childTask(request)} task saw the lead turns: ${sawLead}` };
}

async function withFakeModel<T>(
  body: (fake: FakeOpenAI) => Promise<T>,
  respondWith: (request: FakeChatRequest) => FakeReply = respond,
): Promise<T> {
  const fake = await FakeOpenAI.start({ respond: respondWith });
  try {
    return await body(fake);
  } finally {
    await fake.close();
  }
}

function modelsOf(fake: FakeOpenAI) {
  return {
    models: [
      { name: 'fake', provider: 'openai', model: 'fake-model', base_url: fake.url },
      { name: 'small', provider: 'openai', model: 'fake-small', base_url: fake.url },
    ],
  };
}

function workspaceDir(label: string): string {
  const workspace = join(tempDir(label), 'workspace');
  mkdirSync(workspace);
  return workspace;
}

async function activityTypes(handle: WorkflowHandle): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
}

/** A port nothing listens on (it did a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

it('delegates through task, a fork load and a spawn load; the model saw each wording and the {description, prompt} schema', async () => {
  await withFakeModel(async (fake) => {
    const input = leadInput({
      workspace: workspaceDir('providers'),
      prompt: LEAD_PROMPT,
      config: {
        ...modelsOf(fake),
        subagent_tools: [
          { tool_name: 'subagent_fork', provider: 'fork' },
          {
            tool_name: 'subagent_helper',
            provider: 'spawn',
            description: HELPER_WORDS,
            persona: HELPER_PERSONA,
            agent_options: { model: 'small' },
            tool_filter: { allow: ['ls', 'read_file'] },
          },
        ],
      },
    });
    const taskQueue = uniqueTaskQueue('providers');
    const { result, history, helper } = await withProjectWorker(taskQueue, async () => {
      const handle = await startLeadRun(testClient(), input, taskQueue);
      const result = await handle.result();
      const helperHandle = testClient().workflow.getHandle(`${handle.workflowId}/task/t_helper`);
      const description = await helperHandle.describe();
      return {
        result,
        history: await activityTypes(handle),
        helper: { memo: description.memo, summary: await description.staticSummary() },
      };
    });
    expect(result.status).toBe('completed');
    expect(result.final_output).toBe('All three answered.');
    expect(
      result.ledger.map((entry) => [entry.id, entry.subagent_type, entry.status, entry.result_brief]),
    ).toEqual([
      ['t_spawn', 'general-purpose', 'completed', 'Spawn task saw the lead turns: false'],
      ['t_fork', 'subagent_fork', 'completed', 'Fork task saw the lead turns: true'],
      ['t_helper', 'subagent_helper', 'completed', 'Helper task saw the lead turns: false'],
    ]);

    // What the lead's model was shown.
    const [lead] = fake.chatRequests.filter(isLead);
    const properties = (tool: FakeTool | undefined) =>
      (tool?.function.parameters as { properties: Record<string, { description?: string }> }).properties;
    const task = toolNamed(lead, 'task');
    const fork = toolNamed(lead, 'subagent_fork');
    const helperTool = toolNamed(lead, 'subagent_helper');
    expect(Object.keys(properties(task))).toEqual(['description', 'prompt', 'subagent_type']);
    expect(task?.function.description).toContain('it does not see this conversation');
    expect(Object.keys(properties(fork))).toEqual(['description', 'prompt']);
    expect(fork?.function.description).toContain(
      "The subagent is seeded with this conversation's completed turns",
    );
    expect(properties(fork).prompt.description).toContain('state only what is new');
    expect(fork?.function.description).not.toContain('does not see this conversation');
    expect(Object.keys(properties(helperTool))).toEqual(['description', 'prompt']);
    expect(helperTool?.function.description).toContain('it does not see this conversation');
    expect(properties(helperTool).prompt.description).toContain('It does not see this conversation');
    expect(helperTool?.function.description).toContain(HELPER_WORDS);
    expect(JSON.stringify(lead.tools)).not.toMatch(/"provider"/);

    // The helper's child ran with the load's persona, model and tool filter.
    const helperRequest = fake.chatRequests.find((request) => systemOf(request).startsWith(HELPER_PERSONA));
    expect(helperRequest?.model).toBe('fake-small');
    expect(helperRequest?.tools?.map((tool) => tool.function.name)).toEqual(['ls', 'read_file']);
    expect(helper.memo).toMatchObject({
      subagent_type: 'subagent_helper',
      provider: 'spawn',
      provider_type: 'spawn',
    });
    expect(helper.summary).toBe('subagent_helper via spawn: Helper look');

    // No remote load: no probe.
    expect(history).not.toContain('probeSubagentProviders');
  });
});

it('leaves a tool whose remote provider does not answer out of the run, saying so in one event', async () => {
  const port = await closedPort();
  await withFakeModel(
    async (fake) => {
      const input = leadInput({
        workspace: workspaceDir('providers-down'),
        config: {
          ...modelsOf(fake),
          subagent_providers: { team_a2a: { type: 'a2a', url: `http://127.0.0.1:${port}` } },
          subagent_tools: [
            { tool_name: 'subagent_a2a', provider: 'team_a2a' },
            { tool_name: 'subagent_fork', provider: 'fork' },
          ],
        },
      });
      const taskQueue = uniqueTaskQueue('providers-down');
      const { result, events, history } = await withProjectWorker(taskQueue, async () => {
        const handle: WorkflowHandle<typeof leadRunWorkflow> = await startLeadRun(
          testClient(),
          input,
          taskQueue,
        );
        const result = await handle.result();
        return {
          result,
          events: await handle.query(leadEventsQuery, 0),
          history: await activityTypes(handle),
        };
      });
      expect(result.status).toBe('completed');
      const [lead] = fake.chatRequests;
      const names = lead.tools?.map((tool) => tool.function.name) ?? [];
      expect(names).toContain('task');
      expect(names).toContain('subagent_fork');
      expect(names).not.toContain('subagent_a2a');
      const absent = events.filter((event) => event.type === 'subagent_tool_unavailable');
      expect(absent).toHaveLength(1);
      expect(absent[0]).toMatchObject({
        task_id: 'subagent_a2a',
        tool: 'subagent_a2a',
        provider: 'team_a2a',
        provider_type: 'a2a',
      });
      expect(absent[0].type === 'subagent_tool_unavailable' && absent[0].reason).toMatch(/\S/);
      expect(history.filter((type) => type === 'probeSubagentProviders')).toHaveLength(1);
    },
    () => ({ content: 'Nothing to delegate.' }),
  );
});
