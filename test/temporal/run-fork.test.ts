/**
 * Fork and resume of a lead run on the real server (docs/fork.md), the model a fake Chat Completions server that
 * counts its requests: a fork keeps the original's turns and the results of the delegations they made without
 * asking the model again, a `--message` reaches the first live request, and a resume of a run failed by a
 * provider outage completes once the provider is back, without running a completed tool call again.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SubagentsClient } from '../../client/api';
import { workflowResult } from '../../client/results';
import type { LeadRunInput, LeadRunResult } from '../../contracts/lead';
import { FORK_TURN, FORKED_FROM } from '../../contracts/search-attributes';
import { leadRunWorkflow } from '../../workflows/lead-run';
import {
  connectClient,
  testNamespace,
  uniqueTaskQueue,
  waitFor,
  withProjectWorker,
  type TestClient,
} from '../harness/temporal';
import { FakeOpenAI, type FakeReply } from '../support/fake-openai';
import type { FakeRequestView } from '../support/fake-model-server';
import { cliEnv, runCli } from '../support/cli-process';
import { cliServerArgs, notesWriter, snapshottingHost } from '../support/fork-files';
import { leadInput, tempDir } from '../support/subagent-input';

const KEY_ENV = 'FAKE_PROVIDER_API_KEY';
const PARTS = ['a', 'b', 'c'];

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

function input(fake: FakeOpenAI, folder: string, retry?: Record<string, number>): LeadRunInput {
  return leadInput({
    workspace: folder,
    config: {
      models: [
        {
          name: 'fake',
          provider: 'openai',
          model: 'fake-model',
          base_url: fake.url,
          api_key: `$${KEY_ENV}`,
          ...(retry && { retry }),
        },
      ],
    },
  });
}

/** The lead delegates three parts at once, then answers with what came back; each subagent answers its part. */
function delegateThree(_body: unknown, _index: number, view: FakeRequestView): FakeReply {
  if (!view.tools.includes('task')) {
    const part = PARTS.find((name) => view.last_user_text.includes(`part ${name}`)) ?? '?';
    return { content: `Part ${part} is done.`, usage: { input_tokens: 10, output_tokens: 5 } };
  }
  if (view.tool_results.length === 0) {
    return {
      content: 'Three parts at once.',
      tool_calls: PARTS.map((part) => ({
        name: 'task',
        id: `part-${part}`,
        args: { description: `Part ${part}`, prompt: `Do part ${part}.`, subagent_type: 'general-purpose' },
      })),
      usage: { input_tokens: 100, output_tokens: 20 },
    };
  }
  const hint = view.last_user_text.includes('HINT') ? ' (with the hint)' : '';
  return { content: `All three parts are done${hint}.`, usage: { input_tokens: 200, output_tokens: 10 } };
}

async function runLead(taskQueue: string, args: LeadRunInput): Promise<LeadRunResult> {
  const handle = await testClient.client.workflow.start(leadRunWorkflow, {
    taskQueue,
    workflowId: `${taskQueue}-lead`,
    args: [args],
  });
  return workflowResult(handle);
}

it('forks a three-subagent run at turn 1 with one model request, its delegations reused', async () => {
  const fake = await FakeOpenAI.start({ respond: delegateThree });
  fakes.push(fake);
  const taskQueue = uniqueTaskQueue('run-fork');
  const runs = new SubagentsClient(testClient.client, testNamespace());
  await withProjectWorker(taskQueue, async () => {
    const original = await runLead(taskQueue, input(fake, workspace('run-fork')));
    expect(original.status).toBe('completed');
    expect(original.ledger).toHaveLength(3);
    const before = fake.chatRequests.length;

    const fork = await runs.getRun(original.run_id).fork({ turn: 1, workspace: workspace('run-fork-copy') });
    const result = await fork.result();

    // Only the lead's second turn was asked: the first turn and the three subagents were read from history.
    expect(fake.chatRequests.length - before).toBe(1);
    expect(result).toMatchObject({ run_id: fork.runId, status: 'completed', turns: 2 });
    expect(result.run_id).not.toBe(original.run_id);
    expect(result.final_output).toBe('All three parts are done.');
    expect(result.ledger.map((entry) => [entry.id, entry.status, entry.reused, entry.result_brief])).toEqual(
      original.ledger.map((entry) => [entry.id, 'completed', true, entry.result_brief]),
    );
    // Reused usage is shown, not billed again: the fork's own tokens are its one call's.
    expect(result.token_usage.total?.total_tokens).toBe(210);
    expect(result.forked_from).toMatchObject({
      from_run_id: original.run_id,
      turn: 1,
      reused_delegations: 3,
    });
    expect(result.forked_from?.reused_usage?.total_tokens).toBe(120 + 3 * 15);
    const attributes = (await testClient.client.workflow.getHandle(fork.runId).describe())
      .typedSearchAttributes;
    expect(attributes.get(FORKED_FROM)).toBe(original.run_id);
    expect(attributes.get(FORK_TURN)).toBe('1');
    // Linked both ways: the original lists its fork (visibility may lag a moment behind the start).
    await waitFor('the original to list its fork', async () =>
      (await runs.getRun(original.run_id).forks()).some(
        (link) => link.run_id === fork.runId && link.turn === 1,
      ),
    );
  });
});

it('adds --message before the first live turn, in the request the fork sends', async () => {
  const fake = await FakeOpenAI.start({ respond: delegateThree });
  fakes.push(fake);
  const taskQueue = uniqueTaskQueue('run-fork-message');
  const runs = new SubagentsClient(testClient.client, testNamespace());
  await withProjectWorker(taskQueue, async () => {
    const original = await runLead(taskQueue, input(fake, workspace('run-fork-message')));
    const before = fake.chatRequests.length;
    const fork = await runs
      .getRun(original.run_id)
      .fork({ turn: 1, message: 'HINT: say so.', workspace: workspace('run-fork-message-copy') });
    const result = await fork.result();
    expect(fake.chatRequests.length - before).toBe(1);
    expect(JSON.stringify(fake.chatRequests[before])).toContain('HINT: say so.');
    expect(result.final_output).toBe('All three parts are done (with the hint).');
  });
});

it('refuses a fork with no workspace snapshot at that turn, saying to pass --workspace', async () => {
  const fake = await FakeOpenAI.start({ respond: delegateThree });
  fakes.push(fake);
  const taskQueue = uniqueTaskQueue('run-fork-no-snapshot');
  const runs = new SubagentsClient(testClient.client, testNamespace());
  await withProjectWorker(taskQueue, async () => {
    const original = await runLead(taskQueue, input(fake, workspace('run-fork-no-snapshot')));
    const fork = await runs.getRun(original.run_id).fork({ turn: 1 });
    const refused = await fork.result().then(
      () => undefined,
      (err: Error) => (err.cause instanceof Error ? err.cause.message : err.message),
    );
    expect(refused).toMatch(/no workspace snapshot at lead turn 1.*--workspace DIR/s);
  });
});

it('resumes a run failed by a provider outage without running its completed tool call again', async () => {
  let outage = true;
  const fake = await FakeOpenAI.start({
    respond: (_body, _index, view) => {
      if (view.tool_results.length === 0)
        return {
          content: 'Journal first.',
          tool_calls: [{ name: 'bash', args: { command: 'echo ran >> journal.txt; cat journal.txt' } }],
        };
      return outage
        ? { status: 500, error_message: 'Provider down.' }
        : { content: 'Done after the outage.' };
    },
  });
  fakes.push(fake);
  const folder = workspace('run-resume');
  const taskQueue = uniqueTaskQueue('run-resume');
  const runs = new SubagentsClient(testClient.client, testNamespace());
  await withProjectWorker(taskQueue, async () => {
    const retry = { initial_interval_seconds: 0.5, max_interval_seconds: 1, max_retry_seconds: 3 };
    const original = await runLead(taskQueue, input(fake, folder, retry));
    expect(original.status).toBe('failed');
    outage = false;

    const resumed = await runs.getRun(original.run_id).fork({ workspace: folder });
    const result = await resumed.result();

    expect(result).toMatchObject({ status: 'completed', final_output: 'Done after the outage.', turns: 2 });
    expect(result.forked_from).toMatchObject({ from_run_id: original.run_id, turn: 1 });
    expect(readFileSync(join(folder, 'journal.txt'), 'utf8')).toBe('ran\n');
    // The original keeps its outcome.
    expect((await runs.getRun(original.run_id).result()).status).toBe('failed');
  });
}, 120_000);

it("subagents fork --turn 1 --json prints the fork's result as run --json does, after one model request", async () => {
  const fake = await FakeOpenAI.start({ respond: delegateThree });
  fakes.push(fake);
  const taskQueue = uniqueTaskQueue('cli-fork');
  const server = cliServerArgs(fake.url, KEY_ENV, 'cli-fork', taskQueue);
  await withProjectWorker(taskQueue, async () => {
    const run = await runCli(
      ['run', '--json', ...server, '--workspace', workspace('cli-fork'), 'Do the three parts.'],
      cliEnv(),
    );
    expect(run.code).toBe(0);
    const original = JSON.parse(run.stdout) as LeadRunResult;
    const before = fake.chatRequests.length;

    const forked = await runCli(
      [
        'fork',
        original.run_id,
        '--turn',
        '1',
        '--json',
        ...server,
        '--workspace',
        workspace('cli-fork-copy'),
      ],
      cliEnv(),
    );

    expect(forked.code).toBe(0);
    const result = JSON.parse(forked.stdout) as LeadRunResult;
    expect(result).toMatchObject({ status: 'completed', final_output: 'All three parts are done.' });
    expect(result.run_id).not.toBe(original.run_id);
    expect(fake.chatRequests.length - before).toBe(1);
  });
}, 180_000);

it('gives a fork the files as they were at its turn, restored from the snapshot into a new folder', async () => {
  const fake = await FakeOpenAI.start({ respond: (_body, _index, view) => notesWriter(view) });
  fakes.push(fake);
  const folder = workspace('run-fork-files');
  const taskQueue = uniqueTaskQueue('run-fork-files');
  const workspaces = snapshottingHost(taskQueue);
  const runs = new SubagentsClient(testClient.client, testNamespace());
  await withProjectWorker(taskQueue, checkForkedFiles, { workspaces });

  async function checkForkedFiles(): Promise<void> {
    const original = await runLead(taskQueue, input(fake, folder));
    expect(original).toMatchObject({ status: 'completed', final_output: 'Written twice.' });

    const fork = await runs.getRun(original.run_id).fork({ turn: 1, message: 'READ the notes.' });
    const result = await fork.result();

    expect(result.status).toBe('completed');
    expect(result.final_output).toContain('first version');
    expect(readFileSync(join(folder, 'notes.txt'), 'utf8')).toBe('second version');
  }
}, 120_000);
