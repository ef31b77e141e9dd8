/**
 * `memory.mode: middleware` against the real server (issue 48): facts are extracted after a run ends, by a model
 * call the user's memory workflow makes once no run of the user has ended for `debounce_seconds`, never by the
 * lead itself. Two of alice's runs that end close together make one extraction over both conversations (the
 * model answers in DeerMem's JSON; what its write gate or the confidence threshold refuses is not kept); her
 * next run's lead is told the facts in its system message, bob's is not. And a worker SIGKILLed while the
 * extraction is in flight loses nothing: another worker makes the call again and the facts are applied once.
 */
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { leadRunWorkflow } from '../../workflows/lead-run';
import { memoryFactsQuery, memoryWorkflowId, type MemoryFact } from '../../contracts/memory';
import { MEMORY_EXTRACTION_PROMPT } from '../../contracts/memory-extraction';
import { FakeOpenAI, type FakeChatRequest, type FakeReply } from '../support/fake-openai';
import { emptyWorkspace, leadInput, scriptedWorkspace } from '../support/subagent-input';
import {
  connectClient,
  startProjectWorkerProcess,
  suiteCli,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();

const systemOf = (request: FakeChatRequest) => String(request.messages[0]?.content ?? '');
const isExtraction = (request: FakeChatRequest) => systemOf(request) === MEMORY_EXTRACTION_PROMPT;
const userOf = (request: FakeChatRequest) =>
  String(request.messages.find((m) => m.role === 'user')?.content ?? '');

/** A new fact as DeerMem's extraction writes one: labelled for its write gate. */
const userFact = (content: string, category: string, confidence: number, scope = 'user') => ({
  content,
  category,
  confidence,
  scope,
  durability: 'durable',
  authority: 'descriptive',
});

/** The extraction answers from what the conversations say; the lead answers at once. */
function respond(request: FakeChatRequest): FakeReply {
  if (!isExtraction(request)) return { content: 'Noted.' };
  const text = userOf(request);
  const newFacts = [
    ...(text.includes('metric units') ? [userFact('Prefers metric units', 'preference', 0.95)] : []),
    ...(text.includes('Lyon') ? [userFact('Lives in Lyon', 'context', 0.9)] : []),
    // Below the threshold (0.7), and a one-off constraint: neither is kept.
    userFact('Might like tea', 'preference', 0.5),
    userFact('Wants this reply short', 'preference', 0.9, 'thread'),
  ];
  return { content: JSON.stringify({ newFacts, factsToRemove: [] }) };
}

it("a fact stated in alice's runs is extracted once over both, told to her next lead and not to bob's", async () => {
  const fake = await FakeOpenAI.start({ respond });
  const suffix = randomUUID().slice(0, 8);
  const alice = `alice-${suffix}`;
  const bob = `bob-${suffix}`;
  const taskQueue = uniqueTaskQueue('memory-middleware');
  const run = (user: string, prompt: string, n: number) =>
    testClient().workflow.execute(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-${user}-${n}`,
      args: [
        leadInput({
          workspace: emptyWorkspace(`memory-mw-${user}-${n}`).workspace,
          prompt,
          config: {
            ...fake.modelsConfig(),
            lead: { user_id: user },
            // DeerFlow's default mode; a debounce long enough for two runs ending together on a busy machine.
            memory: { backend_config: { debounce_seconds: 10 } },
          },
        }),
      ],
    });
  const facts = () =>
    testClient()
      .workflow.getHandle(memoryWorkflowId(alice))
      .query(memoryFactsQuery)
      .catch((): MemoryFact[] => []);
  try {
    await withProjectWorker(taskQueue, async () => {
      const ended = await Promise.all([
        run(alice, 'Please always use metric units with me.', 1),
        run(alice, 'I live in Lyon, what is the weather like?', 2),
      ]);
      expect(ended.map((r) => r.status)).toEqual(['completed', 'completed']);
      // The lead itself was given no memory tool in middleware mode.
      const toolNames = fake.chatRequests.flatMap((r) => r.tools?.map((t) => t.function.name) ?? []);
      expect(toolNames.filter((name) => name.startsWith('memory_'))).toEqual([]);
      await waitFor('the extraction applied', async () => (await facts()).length >= 2, 120_000);

      const extractions = fake.chatRequests.filter(isExtraction);
      expect(extractions).toHaveLength(1);
      expect(userOf(extractions[0])).toContain('metric units');
      expect(userOf(extractions[0])).toContain('Lyon');
      const kept = await facts();
      expect(kept.map((f) => [f.content, f.category, f.confidence]).sort()).toEqual([
        ['Lives in Lyon', 'context', 0.9],
        ['Prefers metric units', 'preference', 0.95],
      ]);

      const seen = fake.chatRequests.length;
      await run(alice, 'How tall is Mont Blanc?', 3);
      const aliceNext = fake.chatRequests.slice(seen).filter((r) => !isExtraction(r));
      expect(aliceNext.length).toBeGreaterThan(0);
      expect(systemOf(aliceNext[0])).toContain('- [preference | 0.95] Prefers metric units');
      expect(systemOf(aliceNext[0])).toContain('- [context | 0.90] Lives in Lyon');
      const beforeBob = fake.chatRequests.length;
      await run(bob, 'How tall is Mont Blanc?', 4);
      const bobs = fake.chatRequests.slice(beforeBob).filter((r) => !isExtraction(r));
      expect(bobs.length).toBeGreaterThan(0);
      for (const request of bobs) {
        expect(systemOf(request)).not.toContain('metric units');
        expect(systemOf(request)).not.toContain('<memory>');
      }
      const shown = await suiteCli(['memory', 'show', '--user', alice, '--json']);
      expect((JSON.parse(shown.stdout) as MemoryFact[]).map((f) => f.content).sort()).toEqual([
        'Lives in Lyon',
        'Prefers metric units',
      ]);
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
}, 240_000);

it('a worker SIGKILLed during the extraction loses nothing: another makes the call, the facts are applied once', async () => {
  const { client, close } = await connectClient();
  const workers: ChildProcess[] = [];
  const user = `dora-${randomUUID().slice(0, 8)}`;
  const extraction = {
    newFacts: [
      userFact('Prefers metric units', 'preference', 0.95),
      userFact('Lives in Lyon', 'context', 0.9),
    ],
    factsToRemove: [],
  };
  try {
    const { workspace, scriptFile } = scriptedWorkspace('memory-crash', {
      scripts: [
        { agent: 'lead', turns: [{ content: 'Noted.' }] },
        // The worker is killed while this call is in flight.
        { agent: 'memory', turns: [{ content: JSON.stringify(extraction), delay_ms: 8000 }] },
      ],
    });
    const taskQueue = uniqueTaskQueue('memory-crash');
    workers.push(await startProjectWorkerProcess(taskQueue));
    const result = await client.workflow.execute(leadRunWorkflow, {
      taskQueue,
      workflowId: `${taskQueue}-lead`,
      args: [
        leadInput({
          workspace,
          scriptFile,
          prompt: 'I live in Lyon; always use metric units with me.',
          config: { lead: { user_id: user }, memory: { backend_config: { debounce_seconds: 1 } } },
        }),
      ],
    });
    expect(result.status).toBe('completed');
    const memory = client.workflow.getHandle(memoryWorkflowId(user));
    await waitFor(
      'the extraction in flight on the first worker',
      async () => {
        const { raw } = await memory.describe().catch(() => ({ raw: { pendingActivities: [] } }));
        return (raw.pendingActivities ?? []).some(
          (a) => a.activityType?.name === 'extractMemory' && a.lastStartedTime != null,
        );
      },
      120_000,
    );
    workers[0].kill('SIGKILL');
    await once(workers[0], 'exit');
    workers.push(await startProjectWorkerProcess(taskQueue));

    await waitFor(
      'the facts applied',
      async () => (await memory.query(memoryFactsQuery)).length > 0,
      180_000,
    );
    const facts = await memory.query(memoryFactsQuery);
    expect(facts.map((f) => [f.id, f.content]).sort()).toEqual([
      ['fact_1', 'Prefers metric units'],
      ['fact_2', 'Lives in Lyon'],
    ]);
    // One extraction completed, on a second attempt: the first was lost with the worker.
    const events = (await memory.fetchHistory()).events ?? [];
    const scheduled = events.filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'extractMemory',
    );
    expect(scheduled).toHaveLength(1);
    expect(events.filter((e) => e.activityTaskCompletedEventAttributes)).toHaveLength(1);
    const started = events.flatMap((e) => e.activityTaskStartedEventAttributes ?? []);
    expect(started).toHaveLength(1);
    expect(started[0].attempt).toBeGreaterThanOrEqual(2);
  } finally {
    for (const worker of workers) worker.kill('SIGKILL');
    await client.workflow
      .getHandle(memoryWorkflowId(user))
      .terminate('test over')
      .catch(() => undefined);
    await close();
  }
}, 300_000);
