/**
 * Remote subagents end to end (issue 32's "done when"), against the real server with the real A2A and ACP
 * clients and our own agents (test/support/a2a-agent.ts as a process of its own, test/support/acp-agent.ts
 * spawned by the worker):
 * - a lead with three loads (`task` on spawn, `subagent_fork`, `subagent_acp`) delegates to each; the model saw
 *   the three wordings and the ACP child's answer came back as a success; the children's memo and summary name
 *   their provider;
 * - an A2A delegation whose worker is SIGKILLed while the remote task holds completes on a new worker, the
 *   prompt received once and the remote task re-attached;
 * - cancelling the lead cancels the held A2A task (once) and leaves no ACP agent process behind;
 * - `max_tokens` from ACP and `failed` from A2A reach the lead as error results, their children Failed.
 * A2A delegations run on worker processes: they load the A2A SDK as a user's worker does (under jest on Node 20
 * it needs `jose` mocked) and can be killed.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import { promptMessageId } from '../../activities/remote/a2a/identity';
import { SubagentsClient } from '../../client/api';
import { workflowResult } from '../../client/results';
import type { LeadRunInput, LeadRunResult } from '../../contracts/lead';
import type { RemoteProgress, RemoteSubagentResult } from '../../contracts/remote-subagent';
import { workerIdentity } from '../support/chaos-workers';
import {
  startLeadRun,
  startProjectWorkerProcess,
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';
import { startA2AAgentProcess, type A2AAgentProcess } from '../support/a2a-agent-process';
import {
  ACP_TEST_AGENT,
  eventsNamed,
  processAlive,
  scriptedPrompt,
  waitForAgentEvent,
} from '../support/acp-test-agent';
import { FakeOpenAI, type FakeChatRequest, type FakeReply } from '../support/fake-openai';
import { leadInput, tempDir, writeScript } from '../support/subagent-input';

const testClient = useTestClient();

const REMOTE_ACTIVITY = 'runRemoteSubagent';
const A2A_ANSWER = 'The remote count is 42.';
/** The A2A agent's script: a prompt naming a keyword gets its behaviour. */
const A2A_SCRIPT = [
  { keyword: 'HOLD-A2A', behaviour: { kind: 'hold' as const, text: A2A_ANSWER } },
  { keyword: 'FAIL-A2A', behaviour: { kind: 'fail' as const, message: 'the disk is full' } },
];

/** Processes a test started, stopped after it whatever happened. */
const workers: ChildProcess[] = [];
let agent: A2AAgentProcess | undefined;

afterEach(async () => {
  await Promise.all(
    workers.splice(0).map(async (worker) => {
      if (worker.exitCode !== null || worker.signalCode !== null) return;
      const exited = once(worker, 'exit');
      worker.kill('SIGKILL');
      await exited;
    }),
  );
  await agent?.stop();
  agent = undefined;
});

function workspaceIn(dir: string): string {
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return workspace;
}

/** The ACP test agent as a provider, as a user's config writes one; its events go to `log`. */
function acpProvider(log: string) {
  return { type: 'acp', command: process.execPath, args: [ACP_TEST_AGENT], env: { ACP_AGENT_LOG: log } };
}

function remoteCall(name: string, id: string, prompt: string) {
  return { name, id, args: { description: `Remote ${id}`, prompt } };
}

/**
 * A scripted lead whose first response makes `calls`, then answers with what each returned (`<id>=[…]`), with
 * `subagent_a2a` on the A2A agent at `a2aUrl` and `subagent_acp` on the ACP test agent logging to `acpLog`.
 */
function remoteLead(
  label: string,
  calls: ReturnType<typeof remoteCall>[],
  providers: { a2aUrl?: string; acpLog?: string },
): LeadRunInput {
  const dir = tempDir(label);
  const script: ModelScriptFileInput = {
    scripts: [
      {
        agent: 'lead',
        turns: [
          { tool_calls: calls },
          { content: calls.map((c) => `${c.id}=[{{tool_result:${c.id}}}]`).join(' ') },
        ],
      },
    ],
  };
  const subagentProviders: Record<string, unknown> = {};
  const loads: Record<string, unknown>[] = [];
  if (providers.a2aUrl !== undefined) {
    subagentProviders.team_a2a = { type: 'a2a', url: providers.a2aUrl };
    loads.push({ tool_name: 'subagent_a2a', provider: 'team_a2a' });
  }
  if (providers.acpLog !== undefined) {
    subagentProviders.local_acp = acpProvider(providers.acpLog);
    loads.push({ tool_name: 'subagent_acp', provider: 'local_acp' });
  }
  return leadInput({
    workspace: workspaceIn(dir),
    scriptFile: writeScript(dir, script),
    config: { subagent_providers: subagentProviders, subagent_tools: loads },
  });
}

function childHandle(lead: WorkflowHandle, callId: string): WorkflowHandle {
  return testClient().workflow.getHandle(`${lead.workflowId}/task/${callId}`);
}

/** The progress the remote activity of `child` last heartbeated, as the server holds it (none yet: undefined). */
async function heartbeatedProgress(child: WorkflowHandle): Promise<RemoteProgress | undefined> {
  const description = await child.describe().catch(() => undefined);
  const pending = description?.raw.pendingActivities?.find(
    (activity) => activity.activityType?.name === REMOTE_ACTIVITY,
  );
  if (!pending?.heartbeatDetails?.payloads?.length) return undefined;
  return decodeFromPayloadsAtIndex<RemoteProgress>(
    testClient().options.loadedDataConverter,
    0,
    pending.heartbeatDetails.payloads,
  );
}

/** The pending remote activity of `child`: its attempt and the worker that runs it. */
async function pendingRemoteActivity(child: WorkflowHandle) {
  const description = await child.describe().catch(() => undefined);
  return description?.raw.pendingActivities?.find(
    (activity) => activity.activityType?.name === REMOTE_ACTIVITY,
  );
}

/** What each attempt of the child's remote activity returned, from its history. */
async function remoteResults(child: WorkflowHandle): Promise<RemoteSubagentResult[]> {
  const events = (await child.fetchHistory()).events ?? [];
  const results: RemoteSubagentResult[] = [];
  for (const event of events) {
    const payloads = event.activityTaskCompletedEventAttributes?.result?.payloads;
    if (!payloads?.length) continue;
    results.push(
      await decodeFromPayloadsAtIndex<RemoteSubagentResult>(
        testClient().options.loadedDataConverter,
        0,
        payloads,
      ),
    );
  }
  return results;
}

/** The types of the activities a workflow scheduled, in order. */
async function activityTypes(handle: WorkflowHandle): Promise<string[]> {
  const events = (await handle.fetchHistory()).events ?? [];
  return events.flatMap((e) => e.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
}

describe('three loads on the real server', () => {
  const LEAD_PROMPT = 'Survey the workspace (LEAD-PROMPT-3301).';
  const ACP_ANSWER = 'ACP agent: the workspace holds no files.';

  type FakeTool = NonNullable<FakeChatRequest['tools']>[number];
  const toolNamed = (request: FakeChatRequest, name: string): FakeTool | undefined =>
    request.tools?.find((tool) => tool.function.name === name);
  const isLead = (request: FakeChatRequest) => toolNamed(request, 'subagent_acp') !== undefined;
  /** `Spawn` or `Fork`: the child's own task, whatever else its transcript holds. */
  const childTask = (request: FakeChatRequest) =>
    request.messages
      .map((m) => /(\w+) task: say what you saw/.exec(String(m.content ?? ''))?.[1])
      .find((task) => task !== undefined) ?? 'Unknown';

  /** The lead delegates once on each tool, then answers; each local child says what it saw. */
  function respond(request: FakeChatRequest): FakeReply {
    if (isLead(request)) {
      if (!request.messages.some((m) => m.role === 'tool')) {
        return {
          tool_calls: [
            {
              name: 'task',
              id: 't_spawn',
              args: {
                description: 'Spawn look',
                prompt: 'Spawn task: say what you saw.',
                subagent_type: 'general-purpose',
              },
            },
            {
              name: 'subagent_fork',
              id: 't_fork',
              args: { description: 'Fork look', prompt: 'Fork task: say what you saw.' },
            },
            {
              name: 'subagent_acp',
              id: 't_acp',
              args: {
                description: 'ACP look',
                prompt: scriptedPrompt('List the workspace.', [{ say: ACP_ANSWER }]),
              },
            },
          ],
        };
      }
      return { content: 'All three answered.' };
    }
    const sawLead = request.messages.some((m) => String(m.content ?? '').includes('LEAD-PROMPT-3301'));
    return { content: `${childTask(request)} task saw the lead turns: ${sawLead}` };
  }

  it('delegates through task (spawn), subagent_fork and subagent_acp in one run; the model saw the three wordings and the ACP answer as a success', async () => {
    const fake = await FakeOpenAI.start({ respond });
    try {
      const dir = tempDir('e2e-three-loads');
      const acpLog = join(dir, 'acp-events.jsonl');
      const input = leadInput({
        workspace: workspaceIn(dir),
        prompt: LEAD_PROMPT,
        config: {
          models: [{ name: 'fake', provider: 'openai', model: 'fake-model', base_url: fake.url }],
          subagent_providers: { local_acp: acpProvider(acpLog) },
          subagent_tools: [
            { tool_name: 'subagent_fork', provider: 'fork' },
            { tool_name: 'subagent_acp', provider: 'local_acp' },
          ],
        },
      });
      const taskQueue = uniqueTaskQueue('e2e-three-loads');
      const { result, children } = await withProjectWorker(taskQueue, async () => {
        const handle = await startLeadRun(testClient(), input, taskQueue);
        const result = await handle.result();
        const children: Record<string, { memo?: Record<string, unknown>; summary?: string; status: string }> =
          {};
        for (const id of ['t_spawn', 't_fork', 't_acp']) {
          const description = await childHandle(handle, id).describe();
          children[id] = {
            memo: description.memo,
            summary: await description.staticSummary(),
            status: description.status.name,
          };
        }
        return { result, children };
      });

      expect(result.status).toBe('completed');
      expect(result.final_output).toBe('All three answered.');
      expect(result.ledger.map((entry) => [entry.id, entry.subagent_type, entry.status])).toEqual([
        ['t_spawn', 'general-purpose', 'completed'],
        ['t_fork', 'subagent_fork', 'completed'],
        ['t_acp', 'subagent_acp', 'completed'],
      ]);

      // What the lead's model was shown: each tool worded after its provider.
      const [first, second] = fake.chatRequests.filter(isLead);
      const properties = (name: string) =>
        (
          toolNamed(first, name)?.function.parameters as {
            properties: Record<string, { description?: string }>;
          }
        ).properties;
      const wording = (name: string) => ({
        description: toolNamed(first, name)?.function.description ?? '',
        prompt: properties(name).prompt.description ?? '',
      });
      expect(wording('task').description).toContain('it does not see this conversation');
      expect(wording('subagent_fork').description).toContain(
        "The subagent is seeded with this conversation's completed turns",
      );
      expect(wording('subagent_fork').prompt).toContain('state only what is new');
      expect(wording('subagent_fork').description).not.toContain('does not see this conversation');
      expect(wording('subagent_acp').description).toContain('it does not see this conversation');
      expect(wording('subagent_acp').prompt).toContain('It does not see this conversation');
      expect(Object.keys(properties('subagent_acp'))).toEqual(['description', 'prompt']);
      expect(Object.keys(properties('task'))).toEqual(['description', 'prompt', 'subagent_type']);

      // What each delegation handed back to the lead's model.
      const toolResult = (id: string) =>
        String(second.messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content ?? '');
      expect(toolResult('t_acp')).toBe(`Task Succeeded. Result: ${ACP_ANSWER}`);
      expect(toolResult('t_spawn')).toBe('Task Succeeded. Result: Spawn task saw the lead turns: false');
      expect(toolResult('t_fork')).toBe('Task Succeeded. Result: Fork task saw the lead turns: true');

      // The ACP agent ran in the run's workspace, once, and is gone.
      const [spawned] = eventsNamed(acpLog, 'spawned');
      expect(eventsNamed(acpLog, 'spawned')).toHaveLength(1);
      expect(spawned.cwd).toBe(input.scope.workspace);
      expect(processAlive(spawned.pid)).toBe(false);

      // A remote delegation's child is shown like a local one's, with its provider (memo and summary).
      expect(children.t_acp).toEqual({
        memo: expect.objectContaining({
          subagent_type: 'subagent_acp',
          provider: 'local_acp',
          provider_type: 'acp',
        }) as unknown,
        summary: 'subagent_acp via local_acp (acp): ACP look',
        status: 'COMPLETED',
      });
      expect(children.t_fork).toMatchObject({
        memo: { subagent_type: 'subagent_fork', provider: 'fork', provider_type: 'fork' },
        summary: 'subagent_fork via fork: Fork look',
        status: 'COMPLETED',
      });
      expect(children.t_spawn).toMatchObject({
        memo: { subagent_type: 'general-purpose' },
        summary: 'general-purpose: Spawn look',
        status: 'COMPLETED',
      });
    } finally {
      await fake.close();
    }
  });
});

it('completes an A2A delegation whose worker is SIGKILLed while the remote task holds: re-attached, the prompt received once', async () => {
  agent = await startA2AAgentProcess({ script: A2A_SCRIPT });
  const input = remoteLead(
    'e2e-a2a-kill',
    [remoteCall('subagent_a2a', 'r_a2a', 'HOLD-A2A: count the rows.')],
    {
      a2aUrl: agent.url,
    },
  );
  const taskQueue = uniqueTaskQueue('e2e-a2a-kill');
  workers.push(await startProjectWorkerProcess(taskQueue));
  const lead = await startLeadRun(testClient(), input, taskQueue);
  const child = childHandle(lead, 'r_a2a');

  // The remote task holds, and the server holds its id in the activity's heartbeat.
  const { holding } = await agent.waitFor((stats) => stats.holding.length === 1);
  const taskId = holding[0];
  await waitFor(
    'the remote task id in the heartbeat details',
    async () => (await heartbeatedProgress(child))?.remote_task_id === taskId,
  );

  const [first] = workers;
  const killed = once(first, 'exit');
  first.kill('SIGKILL');
  await killed;
  const second = await startProjectWorkerProcess(taskQueue);
  workers.push(second);
  // The next attempt runs on the new worker (the dead one's heartbeat timed out), following the held task.
  await waitFor('the remote activity retried on the new worker', async () => {
    const pending = await pendingRemoteActivity(child);
    return (pending?.attempt ?? 0) >= 2 && pending?.lastWorkerIdentity === workerIdentity(second.pid ?? -1);
  });
  expect((await agent.stats()).tasks[taskId]?.state).toBe('working');
  await agent.release(taskId);

  const result = await workflowResult(lead);
  expect(result.status).toBe('completed');
  expect(result.final_output).toMatch(
    new RegExp(`^r_a2a=\\[Task Succeeded\\. Result: ${A2A_ANSWER.replace('.', '\\.')}\\n\\n\\(Resumed: `),
  );
  expect(result.final_output).toContain('re-attached to the same remote task');
  expect(result.ledger[0]).toMatchObject({ id: 'r_a2a', subagent_type: 'subagent_a2a', status: 'completed' });

  // The prompt arrived once; the agent's task is the one the first attempt started.
  const stats = await agent.stats();
  expect(stats.messages_by_id).toEqual({ [promptMessageId(child.workflowId)]: 1 });
  expect(stats.messages_total).toBe(1);
  expect(Object.keys(stats.tasks)).toEqual([taskId]);
  expect(stats.tasks[taskId]?.state).toBe('completed');
  expect(stats.cancels_total).toBe(0);

  // The attempt that completed re-attached (its result in the child's history says so).
  const results = await remoteResults(child);
  expect(results).toHaveLength(1);
  expect(results[0]).toMatchObject({
    end: 'completed',
    text: A2A_ANSWER,
    remote_task_id: taskId,
    resumed: 'reattached',
  });
  expect(await activityTypes(child)).toEqual([REMOTE_ACTIVITY]);
});

it('cancels a lead whose A2A and ACP delegations hold: the remote task is cancelled once, no agent process is left', async () => {
  agent = await startA2AAgentProcess({ script: A2A_SCRIPT });
  const dir = tempDir('e2e-cancel');
  const acpLog = join(dir, 'acp-events.jsonl');
  const input = remoteLead(
    'e2e-cancel',
    [
      remoteCall('subagent_a2a', 'r_a2a', 'HOLD-A2A: wait for me.'),
      remoteCall(
        'subagent_acp',
        'r_acp',
        scriptedPrompt('Wait for me.', [{ say: 'Working on it.' }, { hold: true }]),
      ),
    ],
    { a2aUrl: agent.url, acpLog },
  );
  const taskQueue = uniqueTaskQueue('e2e-cancel');
  workers.push(await startProjectWorkerProcess(taskQueue));
  const lead = await startLeadRun(testClient(), input, taskQueue);

  // Both hold, and the A2A activity knows its task (it heartbeated the id): a cancel now has a task to cancel.
  const { holding } = await agent.waitFor((stats) => stats.holding.length === 1);
  const taskId = holding[0];
  await waitFor(
    'the remote task id in the heartbeat details',
    async () => (await heartbeatedProgress(childHandle(lead, 'r_a2a')))?.remote_task_id === taskId,
  );
  const prompted = await waitForAgentEvent(acpLog, 'prompt');
  const agentPid = prompted.pid;
  expect(processAlive(agentPid)).toBe(true);

  // As `subagents cancel <run-id>` does.
  const run = new SubagentsClient(testClient(), testNamespace()).getRun(lead.workflowId);
  await run.cancel();
  const result: LeadRunResult = await run.result();

  expect(result.status).toBe('cancelled');
  expect((await lead.describe()).status.name).toBe('CANCELLED');
  expect(result.ledger.map((entry) => [entry.id, entry.status])).toEqual([
    ['r_a2a', 'cancelled'],
    ['r_acp', 'cancelled'],
  ]);
  // The children waited for their activities to cancel the remote side before they ended.
  const stats = await agent.stats();
  expect(stats.cancels_by_task).toEqual({ [taskId]: 1 });
  expect(stats.tasks[taskId]?.state).toBe('canceled');
  expect(eventsNamed(acpLog, 'cancel')).toHaveLength(1);
  expect(processAlive(agentPid)).toBe(false);
  expect(eventsNamed(acpLog, 'spawned').map((event) => event.pid)).toEqual([agentPid]);
});

it('hands max_tokens from ACP and failed from A2A to the lead as error results; the subagents are Failed in Temporal', async () => {
  agent = await startA2AAgentProcess({ script: A2A_SCRIPT });
  const dir = tempDir('e2e-errors');
  const acpLog = join(dir, 'acp-events.jsonl');
  const input = remoteLead(
    'e2e-errors',
    [
      remoteCall(
        'subagent_acp',
        'r_acp',
        scriptedPrompt('Write it all.', [{ say: 'Half of it' }, { stop: 'max_tokens' }]),
      ),
      remoteCall('subagent_a2a', 'r_a2a', 'FAIL-A2A: save the report.'),
    ],
    { a2aUrl: agent.url, acpLog },
  );
  const taskQueue = uniqueTaskQueue('e2e-errors');
  workers.push(await startProjectWorkerProcess(taskQueue));
  const lead = await startLeadRun(testClient(), input, taskQueue);
  const result = await workflowResult(lead);

  expect(result.status).toBe('completed');
  const [acpPart, a2aPart] = result.final_output.split(' r_a2a=');
  expect(acpPart).toMatch(
    /^r_acp=\[Task failed\. Error: local_acp \(acp\): the remote agent ran out of tokens \(max_tokens\): /,
  );
  expect(acpPart).toContain('Half of it');
  expect(acpPart).not.toContain('Task Succeeded');
  expect(a2aPart).toMatch(/^\[Task failed\. Error: team_a2a \(a2a\): the remote agent failed: /);
  expect(a2aPart).toContain('the disk is full');
  expect(a2aPart).not.toContain('Task Succeeded');
  expect(result.ledger.map((entry) => [entry.id, entry.subagent_type, entry.status])).toEqual([
    ['r_acp', 'subagent_acp', 'failed'],
    ['r_a2a', 'subagent_a2a', 'failed'],
  ]);

  for (const [id, provider, type] of [
    ['r_acp', 'local_acp', 'acp'],
    ['r_a2a', 'team_a2a', 'a2a'],
  ]) {
    const description = await childHandle(lead, id).describe();
    expect(description.status.name).toBe('FAILED');
    expect(description.memo).toMatchObject({ provider, provider_type: type });
    expect(await description.staticSummary()).toBe(
      `subagent_${type} via ${provider} (${type}): Remote ${id}`,
    );
  }
  const stats = await agent.stats();
  expect(stats.messages_total).toBe(1);
  expect(Object.values(stats.tasks).map((task) => task.state)).toEqual(['failed']);
});
