/**
 * Per-user memory against the real server (issue 48), as the provider receives it over HTTP (a fake
 * OpenAI-compatible server): with `memory: {enabled: true, injection_enabled: true, mode: tool}`, alice's lead
 * stores a fact with `memory_add` (DeerFlow's arguments); her next run's lead requests carry it in their system
 * message, inside `<memory>`; bob's carry nothing of it; `subagents memory show --user alice --json` lists it, and
 * `forget` removes it. A change sent twice (a retried activity) is applied once.
 */
import { randomUUID } from 'node:crypto';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { memoryChangeUpdate, memoryWorkflowId, type MemoryFact } from '../../contracts/memory';
import { FakeOpenAI, type FakeChatRequest, type FakeReply } from '../support/fake-openai';
import { emptyWorkspace, leadInput } from '../support/subagent-input';
import { suiteCli, uniqueTaskQueue, useTestClient, withProjectWorker } from '../harness/temporal';

const testClient = useTestClient();

const FACT = 'Prefers answers in metric units';

const systemOf = (request: FakeChatRequest) => String(request.messages[0]?.content ?? '');
const hasTool = (request: FakeChatRequest, name: string) =>
  request.tools?.some((t) => t.function.name === name) ?? false;

/** The lead stores the fact when its task says so, then answers; otherwise it answers at once. */
function respond(request: FakeChatRequest): FakeReply {
  const stored = request.messages.some((m) => m.role === 'tool');
  const task = String(request.messages.find((m) => m.role === 'user')?.content ?? '');
  if (task.startsWith('Remember') && !stored) {
    return {
      tool_calls: [
        {
          name: 'memory_add',
          id: 'call_mem',
          args: { content: FACT, category: 'preference', confidence: 0.9 },
        },
      ],
    };
  }
  return { content: 'Done.' };
}

it("a fact alice's lead stored is in her next run's system message, in none of bob's; memory show lists it", async () => {
  const fake = await FakeOpenAI.start({ respond });
  const suffix = randomUUID().slice(0, 8);
  const alice = `alice-${suffix}`;
  const bob = `bob-${suffix}`;
  const taskQueue = uniqueTaskQueue('memory');
  const run = (user: string, prompt: string, n: number) =>
    testClient().workflow.execute(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-${user}-${n}`,
      args: [
        leadInput({
          workspace: emptyWorkspace(`memory-${user}-${n}`).workspace,
          prompt,
          config: {
            ...fake.modelsConfig(),
            lead: { user_id: user },
            memory: { enabled: true, injection_enabled: true, mode: 'tool' },
          },
        }),
      ],
    });
  try {
    await withProjectWorker(taskQueue, async () => {
      const first = await run(alice, 'Remember that I prefer metric units.', 1);
      expect(first.status).toBe('completed');
      const toolResult = fake.chatRequests
        .flatMap((r) => r.messages)
        .find((m) => m.role === 'tool' && m.tool_call_id === 'call_mem');
      expect(JSON.parse(String(toolResult?.content))).toEqual({ status: 'added', fact_id: 'fact_1' });
      // The lead was offered DeerFlow's four tools.
      const [firstRequest] = fake.chatRequests;
      for (const tool of ['memory_search', 'memory_add', 'memory_update', 'memory_delete']) {
        expect(hasTool(firstRequest, tool)).toBe(true);
      }
      const seen = fake.chatRequests.length;

      await run(alice, 'What units do I like?', 2);
      await run(bob, 'What units do I like?', 3);
      const aliceRequests = fake.chatRequests.slice(seen, seen + 1);
      const bobRequests = fake.chatRequests.slice(seen + 1);
      expect(aliceRequests).toHaveLength(1);
      expect(bobRequests.length).toBeGreaterThan(0);
      expect(systemOf(aliceRequests[0])).toContain(
        `<memory>\nFacts:\n- [preference | 0.90] ${FACT}\n</memory>`,
      );
      // One system message, the memory in it, the task untouched.
      expect(aliceRequests[0].messages.filter((m) => m.role === 'system')).toHaveLength(1);
      for (const request of bobRequests) {
        expect(systemOf(request)).not.toContain(FACT);
        expect(systemOf(request)).not.toContain('<memory>');
      }

      // A change sent again (a retried activity) is answered as before, not applied twice.
      const handle = testClient().workflow.getHandle(memoryWorkflowId(alice));
      const change = {
        op_id: `test/${suffix}`,
        op: { kind: 'add' as const, content: 'Lives in Lyon', category: 'personal', confidence: 0.8 },
        source_run: 'test',
        at: new Date().toISOString(),
      };
      const once = await handle.executeUpdate(memoryChangeUpdate, { args: [change] });
      const twice = await handle.executeUpdate(memoryChangeUpdate, { args: [change] });
      expect(once).toEqual({ status: 'added', fact_id: 'fact_2' });
      expect(twice).toEqual(once);

      const shown = await suiteCli(['memory', 'show', '--user', alice, '--json']);
      expect(shown.code).toBe(0);
      const facts = JSON.parse(shown.stdout) as MemoryFact[];
      expect(facts.map((f) => [f.id, f.content, f.category, f.confidence])).toEqual([
        ['fact_1', FACT, 'preference', 0.9],
        ['fact_2', 'Lives in Lyon', 'personal', 0.8],
      ]);
      expect(facts[0].source_run).toBe(`${taskQueue}-${alice}-1`);
      const none = await suiteCli(['memory', 'show', '--user', bob, '--json']);
      expect(JSON.parse(none.stdout)).toEqual([]);

      const forgotten = await suiteCli(['memory', 'forget', 'fact_1', '--user', alice]);
      expect(forgotten.code).toBe(0);
      const after = await suiteCli(['memory', 'show', '--user', alice, '--json']);
      expect((JSON.parse(after.stdout) as MemoryFact[]).map((f) => f.id)).toEqual(['fact_2']);
      const cleared = await suiteCli(['memory', 'clear', '--user', alice, '--json']);
      expect(JSON.parse(cleared.stdout)).toEqual({ user_id: alice, cleared: 1 });
    });
  } finally {
    await fake.close();
    for (const user of [alice, bob]) {
      await testClient()
        .workflow.getHandle(memoryWorkflowId(user))
        .terminate('test over')
        .catch(() => undefined);
    }
  }
});

it('a memory no worker can answer (its task queue has none) leaves the run without it, not stuck', async () => {
  const fake = await FakeOpenAI.start({ respond: () => ({ content: 'Done.' }) });
  const user = `carol-${randomUUID().slice(0, 8)}`;
  const taskQueue = uniqueTaskQueue('memory-unavailable');
  // The user's memory lives on a task queue nobody polls.
  await testClient().workflow.start('memoryWorkflow', {
    taskQueue: uniqueTaskQueue('memory-nobody'),
    workflowId: memoryWorkflowId(user),
    args: [{ user_id: user, max_facts: 10 }],
  });
  try {
    const result = await withProjectWorker(taskQueue, () =>
      testClient().workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [
          leadInput({
            workspace: emptyWorkspace('memory-unavailable').workspace,
            config: {
              ...fake.modelsConfig(),
              lead: { user_id: user },
              memory: { mode: 'tool' },
            },
          }),
        ],
      }),
    );
    expect(result).toMatchObject({ status: 'completed', final_output: 'Done.' });
    expect(systemOf(fake.chatRequests[0])).not.toContain('<memory>');
    expect(systemOf(fake.chatRequests[0])).toContain('<memory_tool_system>');
  } finally {
    await fake.close();
    await testClient().workflow.getHandle(memoryWorkflowId(user)).terminate('test over');
  }
}, 150_000);
