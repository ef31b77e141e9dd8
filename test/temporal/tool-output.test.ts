/**
 * DeerFlow's `tool_output` and `read_before_write` in a real run (issue 46), a lead on an OpenAI-compatible fake
 * whose requests show what the model was given: a bash call printing 50k characters reaches the model as the
 * synopsis with its head and tail while the workspace holds the whole output, an exempt tool's result stays
 * whole; a write to an existing file this agent has not read is refused with DeerFlow's message, and lets
 * through after a read — a read made before the run continued as new.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LeadRunInput, LeadRunResult } from '../../contracts/lead';
import { readBeforeWriteRefusal } from '../../contracts/tool-output';
import { createProjectWorker } from '../../worker/worker';
import { leadRunWorkflow } from '../../workflows/lead-run';
import {
  connectClient,
  testWorkflowBundle,
  uniqueTaskQueue,
  withProjectWorker,
  type TestClient,
} from '../harness/temporal';
import { FakeOpenAI, type FakeChatRequest } from '../support/fake-openai';
import type { FakeReply } from '../support/fake-model-server';
import { executionHistories } from '../support/histories';
import { leadInput, tempDir } from '../support/subagent-input';
import { EAGER_CONTINUE_AS_NEW, useServerOfItsOwn } from '../harness/server-of-its-own';

const KEY_ENV = 'TOOL_OUTPUT_FAKE_KEY';
let testClient: TestClient;
beforeAll(async () => {
  process.env[KEY_ENV] = 'sk-tool-output';
  testClient = await connectClient();
});
afterAll(() => testClient.close());

function workspaceFor(label: string): string {
  const workspace = join(tempDir(label), 'workspace');
  mkdirSync(workspace);
  return workspace;
}

function inputFor(fake: FakeOpenAI, workspace: string, config: Record<string, unknown>): LeadRunInput {
  return leadInput({
    workspace,
    config: {
      models: [
        { name: 'fake', provider: 'openai', model: 'fake-model', base_url: fake.url, api_key: `$${KEY_ENV}` },
      ],
      ...config,
    },
  });
}

/** The tool results the model was sent in a request, by tool call id. */
function toolResults(request: FakeChatRequest): Record<string, string> {
  return Object.fromEntries(
    request.messages.filter((m) => m.role === 'tool').map((m) => [String(m.tool_call_id), String(m.content)]),
  );
}

const call = (id: string, name: string, args: Record<string, unknown>): FakeReply => ({
  tool_calls: [{ id, name, args }],
});

// 1,000 rows of 50 characters: `row 0001: ` and 40 letters.
const PRINT_50K =
  'i=1; while [ $i -le 1000 ]; do printf "row %04d: %s\\n" $i ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmn; i=$((i+1)); done';

it('saves a 50k bash output in the workspace and sends the model the synopsis with its head and tail; an exempt tool stays whole', async () => {
  const workspace = workspaceFor('tool-output');
  const notes = Array.from({ length: 100 }, (_, i) => `note ${i + 1}: ${'n'.repeat(30)}`).join('\n');
  writeFileSync(join(workspace, 'notes.txt'), `${notes}\n`);
  const fake = await FakeOpenAI.start({
    replies: [
      {
        tool_calls: [
          { id: 'call_bash', name: 'bash', args: { command: PRINT_50K } },
          { id: 'call_read', name: 'read_file', args: { path: 'notes.txt' } },
        ],
      },
      { content: 'Listed.' },
    ],
  });
  try {
    const input = inputFor(fake, workspace, {
      // bash's own cap comes first (DeerFlow's bash_output_max_chars): above the 50k here.
      sandbox: { bash_output_max_chars: 60_000 },
      tool_output: { externalize_min_chars: 1000 },
    });
    const taskQueue = uniqueTaskQueue('tool-output');
    const result = await withProjectWorker(taskQueue, async () =>
      testClient.client.workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      }),
    );
    expect(result).toMatchObject({ status: 'completed', final_output: 'Listed.' });

    const sent = toolResults(fake.chatRequests[1]);
    const preview = sent.call_bash;
    const savedAt =
      /^\[Full bash output saved to (\.tool-results\/bash-[0-9a-f]{12}\.log) \((\d+) chars/.exec(preview);
    expect(savedAt).not.toBeNull();
    expect(preview).toContain('Raw sample (head + tail, clipped to head_chars / tail_chars):');
    expect(preview).toContain('row 0001: ABCDEFGH');
    expect(preview).toContain('row 1000: ABCDEFGH');
    expect(preview).not.toContain('row 0500:');
    expect(preview.length).toBeLessThan(5000);

    const full = readFileSync(join(workspace, savedAt?.[1] ?? ''), 'utf8');
    expect(full.length).toBe(Number(savedAt?.[2]));
    expect(full.length).toBeGreaterThan(50_000);
    expect(full.match(/^row \d{4}: /gm)).toHaveLength(1000);

    // read_file is exempt by default (DeerFlow: no persist → read → persist loop): the model gets it whole.
    expect(sent.call_read).toContain('note 50:');
    expect(sent.call_read).not.toContain('saved to');
    expect(readdirSync(join(workspace, '.tool-results'))).toHaveLength(1);
  } finally {
    await fake.close();
  }
});

it('saves a delegation’s long result too (a result the workflow produced), the lead given the synopsis', async () => {
  const workspace = workspaceFor('tool-output-task');
  const answer = Array.from({ length: 60 }, (_, i) => `finding ${i + 1}: ${'f'.repeat(40)}`).join('\n');
  const fake = await FakeOpenAI.start({
    respond: (_body, _index, view) => {
      if (!view.tools.includes('task')) return { content: answer };
      if (view.tool_results.length === 0) {
        const args = {
          description: 'Collect findings',
          prompt: 'List the findings.',
          subagent_type: 'general-purpose',
        };
        return { tool_calls: [{ id: 'call_task', name: 'task', args }] };
      }
      return { content: 'Summarized.' };
    },
  });
  try {
    const input = inputFor(fake, workspace, {
      tool_output: { externalize_min_chars: 1000, preview_head_chars: 500, preview_tail_chars: 300 },
    });
    const taskQueue = uniqueTaskQueue('tool-output-task');
    const result = await withProjectWorker(taskQueue, async () =>
      testClient.client.workflow.execute(leadRunWorkflow, {
        taskQueue,
        workflowId: `${taskQueue}-lead`,
        args: [input],
      }),
    );
    expect(result).toMatchObject({ status: 'completed', final_output: 'Summarized.' });
    const last = fake.chatRequests.at(-1);
    const preview = last ? toolResults(last).call_task : '';
    const savedAt = /^\[Full task output saved to (\.tool-results\/task-[0-9a-f]{12}\.txt) /.exec(
      preview,
    )?.[1];
    expect(savedAt).toBeDefined();
    expect(preview).not.toContain('finding 30:');
    const full = readFileSync(join(workspace, savedAt ?? ''), 'utf8');
    expect(full).toMatch(/^Task Succeeded\. Result: finding 1: /);
    expect(full).toContain('finding 30:');
  } finally {
    await fake.close();
  }
});

describe('read_before_write across continue-as-new', () => {
  // A server of the file's own: a history of ~30 events suggests continue-as-new, every few turns here.
  const own = useServerOfItsOwn(EAGER_CONTINUE_AS_NEW);

  it('refuses a write to an existing unread file, lets it through after a read made before continue-as-new, and allows a new file', async () => {
    const workspace = workspaceFor('read-before-write');
    writeFileSync(join(workspace, 'report.md'), '# Report\n');
    // Six different calls (six alike would be a loop to the loop guard).
    const looks = Array.from({ length: 6 }, (_, k) => {
      mkdirSync(join(workspace, `d${k}`));
      return call(`call_ls${k}`, 'ls', { path: `d${k}` });
    });
    const fake = await FakeOpenAI.start({
      replies: [
        call('call_w1', 'write_file', { path: 'report.md', content: 'first\n', append: true }),
        call('call_r1', 'read_file', { path: 'report.md' }),
        // Six turns of more than 30 events: the run continues as new at least once between the read and the write.
        ...looks,
        call('call_w2', 'write_file', { path: 'report.md', content: 'second\n', append: true }),
        call('call_s1', 'str_replace', { path: 'report.md', old_str: 'second', new_str: 'third' }),
        call('call_n1', 'write_file', { path: 'fresh.md', content: 'new file\n' }),
        { content: 'Written.' },
      ],
    });
    try {
      const input = inputFor(fake, workspace, { read_before_write: { enabled: true } });
      const taskQueue = uniqueTaskQueue('read-before-write');
      const worker = await createProjectWorker({
        connection: own.native,
        namespace: own.server.namespace,
        taskQueue,
        workflowBundlePath: testWorkflowBundle(),
      });
      const { result, runs } = await worker.runUntil(async () => {
        const handle = await own.client.workflow.start(leadRunWorkflow, {
          taskQueue,
          workflowId: `${taskQueue}-lead`,
          args: [input],
        });
        const result: LeadRunResult = await handle.result();
        const histories = await executionHistories(own.client, handle.workflowId, handle.firstExecutionRunId);
        return { result, runs: histories.length };
      });
      expect(result).toMatchObject({ status: 'completed', final_output: 'Written.' });
      expect(runs).toBeGreaterThanOrEqual(2);

      const after = (id: string) => {
        const request = fake.chatRequests.find((r) => toolResults(r)[id] !== undefined);
        return request && toolResults(request)[id];
      };
      expect(after('call_w1')).toBe(readBeforeWriteRefusal('write_file', 'report.md'));
      expect(after('call_r1')).toContain('# Report');
      expect(after('call_w2')).toMatch(/^Appended/);
      // The write changed the file: the read before it no longer counts.
      expect(after('call_s1')).toBe(readBeforeWriteRefusal('str_replace', 'report.md'));
      expect(after('call_n1')).toMatch(/^Created/);
      expect(readFileSync(join(workspace, 'report.md'), 'utf8')).toBe('# Report\nsecond\n');
      expect(readFileSync(join(workspace, 'fresh.md'), 'utf8')).toBe('new file\n');
    } finally {
      await fake.close();
    }
  });
});
