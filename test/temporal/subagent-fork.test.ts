/**
 * Fork of one subagent on the real server (docs/fork.md), the model a fake Chat Completions server that counts
 * its requests: a completed subagent of a fan-out run, forked at its turn 1 (which ran a tool), reruns as a
 * subagent run of its own with one model request (its turn 2) that carries the reused tool result; an id that
 * names no subagent is refused, saying what it names; the fork runs on the files as they were at its turn.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForkRefusedError, SubagentsClient } from '../../client/api';
import { workflowResult } from '../../client/results';
import type { LeadRunInput, LeadRunResult } from '../../contracts/lead';
import { FORK_TURN, FORKED_FROM, LEAD_RUN_ID } from '../../contracts/search-attributes';
import type { SubagentResult } from '../../contracts/subagent';
import { leadRunWorkflow } from '../../workflows/lead-run';
import {
  connectClient,
  testNamespace,
  uniqueTaskQueue,
  withProjectWorker,
  type TestClient,
} from '../harness/temporal';
import { FakeOpenAI, type FakeReply } from '../support/fake-openai';
import type { FakeRequestView } from '../support/fake-model-server';
import { cliEnv, runCli } from '../support/cli-process';
import { cliServerArgs, notesWriter, snapshottingHost } from '../support/fork-files';
import { leadInput, tempDir } from '../support/subagent-input';

const KEY_ENV = 'FAKE_PROVIDER_API_KEY';
const PARTS = ['a', 'b'];

let testClient: TestClient;
const fakes: FakeOpenAI[] = [];
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-test-key';
  testClient = await connectClient();
});
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});
afterAll(() => testClient.close());

function workspace(label: string): string {
  const dir = join(tempDir(label), 'workspace');
  mkdirSync(dir);
  return dir;
}

function modelConfig(fake: FakeOpenAI) {
  return {
    name: 'fake',
    provider: 'openai',
    model: 'fake-model',
    base_url: fake.url,
    api_key: `$${KEY_ENV}`,
  };
}

/**
 * The lead delegates two parts at once, then answers. Each subagent's turn 1 runs a tool (its output names its
 * part), its turn 2 answers with what the tool said.
 */
function delegateTwo(_body: unknown, _index: number, view: FakeRequestView): FakeReply {
  if (!view.tools.includes('task')) {
    const part = PARTS.find((name) => view.last_user_text.includes(`part ${name}`)) ?? '?';
    if (view.tool_results.length === 0)
      return {
        content: 'Looking first.',
        tool_calls: [{ name: 'bash', id: 'look', args: { command: `echo tool-output-of-part-${part}` } }],
        usage: { input_tokens: 10, output_tokens: 5 },
      };
    return {
      content: `Part ${part} is done: ${view.tool_results[0].split('\n')[0].trim()}`,
      usage: { input_tokens: 20, output_tokens: 7 },
    };
  }
  if (view.tool_results.length === 0) {
    return {
      content: 'Two parts at once.',
      tool_calls: PARTS.map((part) => ({
        name: 'task',
        id: `part-${part}`,
        args: { description: `Part ${part}`, prompt: `Do part ${part}.`, subagent_type: 'general-purpose' },
      })),
      usage: { input_tokens: 100, output_tokens: 20 },
    };
  }
  return { content: 'Both parts are done.', usage: { input_tokens: 200, output_tokens: 10 } };
}

async function runLead(taskQueue: string, args: LeadRunInput): Promise<LeadRunResult> {
  const handle = await testClient.client.workflow.start(leadRunWorkflow, {
    taskQueue,
    workflowId: `${taskQueue}-lead`,
    args: [args],
  });
  return workflowResult(handle);
}

/** The messages of an error and its causes, one text. */
function messagesOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = e.cause) parts.push(e.message);
  return parts.join(' / ');
}

/** The bodies of the requests made since `before`, as JSON text. */
function requestsSince(fake: FakeOpenAI, before: number): string[] {
  return fake.chatRequests.slice(before).map((request) => JSON.stringify(request));
}

it('forks a completed subagent at its turn 1 as a run of its own, with one model request', async () => {
  const fake = await FakeOpenAI.start({ respond: delegateTwo });
  fakes.push(fake);
  const taskQueue = uniqueTaskQueue('subagent-fork');
  const runs = new SubagentsClient(testClient.client, testNamespace());
  await withProjectWorker(taskQueue, async () => {
    const original = await runLead(
      taskQueue,
      leadInput({ workspace: workspace('subagent-fork'), config: { models: [modelConfig(fake)] } }),
    );
    expect(original.status).toBe('completed');
    const entry = original.ledger.find((delegation) => delegation.id === 'part-a');
    expect(entry?.status).toBe('completed');
    const subagentId = entry?.workflow_id ?? '';
    const before = fake.chatRequests.length;

    const fork = await runs.forkSubagent(subagentId, {
      turn: 1,
      workspace: workspace('subagent-fork-copy'),
    });
    const result: SubagentResult & { run_id: string } = await fork.result();

    // Only the subagent's second turn was asked; its first turn's tool result was read from history.
    const requests = requestsSince(fake, before);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toContain('tool-output-of-part-a');
    expect(requests[0]).toContain('Do part a.');
    expect(result).toMatchObject({
      run_id: fork.runId,
      status: 'completed',
      turns: 2,
      result: 'Part a is done: tool-output-of-part-a',
    });
    expect(result.run_id).not.toBe(subagentId);
    expect(result.run_id).not.toBe(original.run_id);
    // Its own call's tokens only; the reused turn's are shown as reused.
    expect(result.token_usage?.total_tokens).toBe(27);
    expect(result.forked_from).toMatchObject({ from_run_id: subagentId, turn: 1, reused_delegations: 0 });
    expect(result.forked_from?.reused_usage?.total_tokens).toBe(15);
    const attributes = (await testClient.client.workflow.getHandle(fork.runId).describe())
      .typedSearchAttributes;
    expect(attributes.get(FORKED_FROM)).toBe(subagentId);
    expect(attributes.get(FORK_TURN)).toBe('1');
    expect(attributes.get(LEAD_RUN_ID)).toBe(fork.runId);
  });
}, 180_000);

it('refuses a fork of an id that names no subagent, saying what it names', async () => {
  const fake = await FakeOpenAI.start({ respond: delegateTwo });
  fakes.push(fake);
  const taskQueue = uniqueTaskQueue('subagent-fork-bad-id');
  const runs = new SubagentsClient(testClient.client, testNamespace());
  await withProjectWorker(taskQueue, async () => {
    const original = await runLead(
      taskQueue,
      leadInput({ workspace: workspace('subagent-fork-bad-id'), config: { models: [modelConfig(fake)] } }),
    );
    const before = fake.chatRequests.length;
    const refusal = (id: string) =>
      runs.forkSubagent(id, { turn: 1, workspace: workspace('subagent-fork-bad-copy') }).then(
        () => undefined,
        (err: unknown) => err,
      );

    const unknown = await refusal(`${taskQueue}-no-such-subagent`);
    expect(unknown).toBeInstanceOf(ForkRefusedError);
    expect((unknown as Error).message).toMatch(/-no-such-subagent is no run or subagent in namespace/);
    const lead = await refusal(original.run_id);
    expect(lead).toBeInstanceOf(ForkRefusedError);
    expect((lead as Error).message).toContain(`${original.run_id} is a lead run, not a subagent`);
    // Past its completed turns: refused by the fork itself, before any model call.
    const subagentId = original.ledger[0].workflow_id;
    const pastEnd = await runs.forkSubagent(subagentId, {
      turn: 3,
      workspace: workspace('subagent-fork-past-copy'),
    });
    const pastEndError = await pastEnd.result().then(() => undefined, messagesOf);
    expect(pastEndError).toContain(`--turn 3 is past subagent ${subagentId}'s completed turns (2)`);
    expect(fake.chatRequests.length).toBe(before);
  });
}, 180_000);

it("subagents fork <subagent-id> --turn 1 --json prints the fork's result with its own run_id", async () => {
  const fake = await FakeOpenAI.start({ respond: delegateTwo });
  fakes.push(fake);
  const taskQueue = uniqueTaskQueue('cli-subagent-fork');
  const server = cliServerArgs(fake.url, KEY_ENV, 'cli-subagent-fork', taskQueue);
  await withProjectWorker(taskQueue, async () => {
    const original = await runLead(
      taskQueue,
      leadInput({ workspace: workspace('cli-subagent-fork'), config: { models: [modelConfig(fake)] } }),
    );
    const subagentId = original.ledger.find((entry) => entry.id === 'part-b')?.workflow_id ?? '';

    // An id that is neither a run nor a subagent: a usage error that says so, nothing started.
    const admission = `subagents-admission/${taskQueue}`;
    const refused = await runCli(['fork', admission, '--turn', '1', '--json', ...server], cliEnv());
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`fork: ${admission} is the admission workflow`);
    expect(refused.stderr).toContain('only a lead run or a subagent forks');

    const before = fake.chatRequests.length;
    const forked = await runCli(
      [
        'fork',
        subagentId,
        '--turn',
        '1',
        '--json',
        ...server,
        '--workspace',
        workspace('cli-subagent-fork-copy'),
      ],
      cliEnv(),
    );
    expect(forked.code).toBe(0);
    const result = JSON.parse(forked.stdout) as SubagentResult & { run_id: string };
    expect(result).toMatchObject({ status: 'completed', result: 'Part b is done: tool-output-of-part-b' });
    expect(result.run_id).toMatch(/^run-/);
    expect(result.forked_from).toMatchObject({ from_run_id: subagentId, turn: 1 });
    expect(fake.chatRequests.length - before).toBe(1);

    // The fork's own id reads as a subagent's: its status names where it came from, its steps are its own.
    const status = await runCli(['status', result.run_id, ...server], cliEnv());
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`${result.run_id}: completed`);
    expect(status.stdout).toContain(`${result.run_id} is a fork of subagent ${subagentId}, a run of its own`);
    const statusJson = await runCli(['status', result.run_id, '--json', ...server], cliEnv());
    expect(JSON.parse(statusJson.stdout)).toMatchObject({
      workflow_id: result.run_id,
      kind: 'subagent_fork',
      forked_from: subagentId,
      state: 'finished',
    });
    const steps = await runCli(['steps', result.run_id, ...server], cliEnv());
    expect(steps.code).toBe(0);
    expect(steps.stdout).toContain('Part b is done: tool-output-of-part-b');
    // A command that reads a lead run says what the id is and what reads it.
    const ledger = await runCli(['ledger', result.run_id, ...server], cliEnv());
    expect(ledger.code).toBe(2);
    expect(ledger.stderr).toContain(`its steps: subagents steps ${result.run_id}`);
  });
}, 240_000);

it("gives a subagent's fork the files as they were at its turn, restored from the snapshot", async () => {
  const fake = await FakeOpenAI.start({
    respond: (_body, _index, view) => {
      const results = view.tool_results;
      if (view.tools.includes('task'))
        return results.length === 0
          ? {
              tool_calls: [
                {
                  name: 'task',
                  id: 'notes',
                  args: {
                    description: 'Write notes',
                    prompt: 'Write the notes.',
                    subagent_type: 'general-purpose',
                  },
                },
              ],
            }
          : { content: 'Done.' };
      return notesWriter(view);
    },
  });
  fakes.push(fake);
  const folder = workspace('subagent-fork-files');
  const taskQueue = uniqueTaskQueue('subagent-fork-files');
  const workspaces = snapshottingHost(taskQueue);
  const runs = new SubagentsClient(testClient.client, testNamespace());
  await withProjectWorker(taskQueue, checkForkedFiles, { workspaces });

  async function checkForkedFiles(): Promise<void> {
    const original = await runLead(
      taskQueue,
      leadInput({ workspace: folder, config: { models: [modelConfig(fake)] } }),
    );
    expect(original.status).toBe('completed');
    expect(original.ledger[0].result_brief).toContain('Written twice.');

    const fork = await runs.forkSubagent(original.ledger[0].workflow_id, {
      turn: 1,
      message: 'READ the notes.',
    });
    const result = await fork.result();

    expect(result.status).toBe('completed');
    expect(result.result).toContain('first version');
    expect(readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('second version');
  }
}, 180_000);
