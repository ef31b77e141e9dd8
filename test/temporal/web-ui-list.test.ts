/**
 * What the Web UI shows, in headless Chromium against the suite's server, for one run of every ending: the
 * default list of workflows shows each non-success in a status that is not the green Completed (completed and
 * capped runs are Completed); each closed workflow's current details carry its final line, no stale `Now:`; the
 * answer command of a run waiting on a question reads, as rendered, exactly as the command to paste; and a
 * prompt with markdown's characters shows as written in the details of a lead, a subagent and a batch item.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { ModelScriptFileInput } from '../../activities/model/model-script';
import type { AdmissionSettings } from '../../contracts/admission';
import { leadStatusQuery, type LeadRunInput } from '../../contracts/lead';
import { SubagentsClient } from '../../client/api';
import { BatchesClient } from '../../client/batches';
import { workflowResult } from '../../client/results';
import { leadInput, scriptedBatchInput, tempDir, writeScript } from '../support/subagent-input';
import { artifactsDir } from '../support/outcomes';
import {
  describeInBrowser,
  listRows,
  metadataPanels,
  withBrowserPage,
  type ListRow,
  type MetadataPanels,
} from '../support/web-ui';
import {
  testNamespace,
  uniqueTaskQueue,
  useTestClient,
  waitFor,
  withProjectWorker,
} from '../harness/temporal';

const testClient = useTestClient();
const usage = { input_tokens: 400, output_tokens: 100 };
const SLOW_MS = 600_000;
/** What the UI's markdown would take as syntax or rewrite, over several lines, a fence inside. */
const PROMPT =
  'Check <tag> with --flag and *stars*, `code`, ``two`` and "quotes".\n' +
  '  An indented line (c) 1/2 ... done -- {namespace} {workflowId} {runId}\n' +
  '```\nfenced\n```';
const QUESTION = 'Which <region> --scope for the *report* in {namespace}, (c) 1/2...?';
const ROOMY: AdmissionSettings = {
  max_running: 10,
  max_queued: 64,
  admission_policy: 'queue',
  queue_timeout_seconds: 300,
};

function lead(
  label: string,
  script: ModelScriptFileInput,
  config: Record<string, unknown> = {},
): LeadRunInput {
  const dir = tempDir(label);
  const workspace = join(dir, 'workspace');
  mkdirSync(workspace);
  return leadInput({ workspace, scriptFile: writeScript(dir, script), config });
}

const task = (id: string, type: string, prompt = `Work on part ${id}.`) => ({
  name: 'task',
  id,
  args: { description: `Part ${id}`, prompt, subagent_type: type },
});
const custom = (description: string, extra: Record<string, unknown> = {}) => ({
  description,
  system_prompt: 'You help.',
  tools: { allow: ['ls'] },
  ...extra,
});
const ls = { name: 'ls', args: { path: '.' } };
const never = { content: 'never', delay_ms: SLOW_MS };

/** Each lead's input, by the ending it is run for. */
function inputs(): Record<string, LeadRunInput> {
  return {
    completed: {
      ...lead('wu-completed', { scripts: [{ agent: 'lead', turns: [{ content: 'Done.', usage }] }] }),
      prompt: PROMPT,
    },
    capped: {
      ...lead('wu-capped', {
        scripts: [
          { agent: 'lead', repeat_last: true, turns: [{ content: 'Looking.', tool_calls: [ls], usage }] },
        ],
      }),
      max_turns: 2,
    },
    failed: lead('wu-failed', {
      scripts: [{ agent: 'lead', turns: [{ error: { status: 400, message: 'bad request' } }] }],
    }),
    timed_out: {
      ...lead('wu-timed-out', { scripts: [{ agent: 'lead', turns: [never] }] }),
      timeout_seconds: 2,
    },
    cancelled: lead('wu-cancelled', {
      scripts: [
        {
          agent: 'lead',
          turns: [{ tool_calls: [task('slow', 'general-purpose')], usage }, { content: 'never' }],
        },
        { agent: 'general-purpose', turns: [never] },
      ],
    }),
    // Its subagents end completed (its prompt the one with markdown's characters), capped, failed, timed out.
    delegating: lead(
      'wu-delegating',
      {
        scripts: [
          {
            agent: 'lead',
            turns: [
              {
                tool_calls: [
                  task('ok', 'general-purpose', PROMPT),
                  task('capped', 'capper'),
                  task('broken', 'breaker'),
                  task('slow', 'sleeper'),
                ],
                usage,
              },
              { content: 'Combined.', usage },
            ],
          },
          { agent: 'general-purpose', turns: [{ content: 'Part done.', usage }] },
          {
            agent: 'capper',
            repeat_last: true,
            turns: [{ content: 'Still looking.', tool_calls: [ls], usage }],
          },
          { agent: 'breaker', turns: [{ error: { status: 400, message: 'bad request' } }] },
          { agent: 'sleeper', turns: [never] },
        ],
      },
      {
        subagent_runtime: { max_running: 4 },
        subagents: {
          max_concurrent: 4,
          custom_agents: {
            capper: custom('Runs out of tokens.', { token_budget: { max_tokens: 1200 } }),
            breaker: custom('Meets a provider error.'),
            sleeper: custom('Thinks for a long time.', { timeout_seconds: 2 }),
          },
        },
      },
    ),
    asking: lead(
      'wu-asking',
      {
        scripts: [
          {
            agent: 'lead',
            turns: [
              {
                tool_calls: [
                  {
                    name: 'ask_clarification',
                    id: 'ask1',
                    args: { question: QUESTION, clarification_type: 'missing_info' },
                  },
                ],
              },
              { content: 'never' },
            ],
          },
        ],
      },
      { clarification: { timeout_seconds: 600 } },
    ),
  };
}

/**
 * How each workflow of the test ends, as Temporal's visibility names it (the asking run still waits). A batch
 * whose item failed completed (every item ran; its counts say how each ended); the item is Failed.
 */
function expectedStatuses(prefix: string): Record<string, string> {
  const id = (suffix: string) => `${prefix}-${suffix}`;
  return {
    [id('completed')]: 'COMPLETED',
    [id('capped')]: 'COMPLETED',
    [id('failed')]: 'FAILED',
    [id('timed_out')]: 'FAILED',
    [id('cancelled')]: 'CANCELLED',
    [id('cancelled/task/slow')]: 'CANCELLED',
    [id('delegating')]: 'COMPLETED',
    [id('delegating/task/ok')]: 'COMPLETED',
    [id('delegating/task/capped')]: 'COMPLETED',
    [id('delegating/task/broken')]: 'FAILED',
    [id('delegating/task/slow')]: 'FAILED',
    [id('batch')]: 'COMPLETED',
    [id('batch/item/good/1')]: 'COMPLETED',
    [id('batch/item/bad/1')]: 'FAILED',
    [id('batch/item/unmet/1')]: 'FAILED',
    [id('asking')]: 'RUNNING',
  };
}

/** The first line of each closed workflow's final details (bold is only a style in the rendered text). */
function finalHeads(prefix: string): Record<string, string> {
  const id = (suffix: string) => `${prefix}-${suffix}`;
  return {
    [id('completed')]: 'lead · completed · 1 turn · 500 tokens',
    [id('capped')]: 'lead · completed · 2 turns · 1,000 tokens',
    [id('failed')]: 'lead · failed · 1 turn',
    [id('timed_out')]: 'lead · timed_out · 0 turns',
    [id('cancelled')]: 'lead · cancelled · 1 turn · 500 tokens',
    [id('cancelled/task/slow')]: 'general-purpose · cancelled · 0 turns',
    [id('delegating')]: 'lead · completed · 2 turns',
    [id('delegating/task/ok')]: 'general-purpose · completed · 1 turn · 500 tokens',
    [id('delegating/task/capped')]: 'capper · completed',
    [id('delegating/task/broken')]: 'breaker · failed',
    [id('delegating/task/slow')]: 'sleeper · timed_out',
    [id('batch')]: 'general-purpose batch · completed · 3 items: 1 completed, 2 failed, 0 cancelled',
    [id('batch/item/good/1')]: 'general-purpose · completed · 1 turn · 500 tokens',
    [id('batch/item/bad/1')]: 'general-purpose · failed',
    [id('batch/item/unmet/1')]: 'general-purpose · failed · 1 turn · 500 tokens',
  };
}

interface Seen {
  prefix: string;
  rows: ListRow[];
  /** The list an operator filters with `SubagentStatus = "failed"`. */
  failedRows: ListRow[];
  panels: Record<string, MetadataPanels>;
}

const screenshotName = (prefix: string, workflowId: string) =>
  `web-ui-list-${workflowId.slice(prefix.length + 1).replace(/[^\w-]+/g, '_')}.png`;

/** Each workflow's user metadata panels, read from its page, a screenshot of each saved. */
async function readPanels(
  page: Page,
  prefix: string,
  ids: string[],
): Promise<Record<string, MetadataPanels>> {
  const panels: Record<string, MetadataPanels> = {};
  for (const id of ids) {
    panels[id] = await metadataPanels(page, testNamespace(), id);
    await page.screenshot({ path: join(artifactsDir(), screenshotName(prefix, id)), fullPage: true });
  }
  return panels;
}

/**
 * Runs every lead and a batch with a failed item, waits until each has ended as expected (the asking run is at
 * its question), then reads the list and every page in the browser while the worker still answers the UI's
 * queries of current details.
 */
async function runAndLook(): Promise<Seen> {
  const client = testClient();
  const taskQueue = uniqueTaskQueue('web-ui-list');
  const prefix = taskQueue;
  const api = new SubagentsClient(client, testNamespace());
  return withProjectWorker(
    taskQueue,
    async () => {
      for (const [ending, input] of Object.entries(inputs())) {
        await api.startRun(input, { taskQueue, runId: `${prefix}-${ending}` });
      }
      await new BatchesClient(client).start(
        scriptedBatchInput(
          [
            { key: 'good', prompt: PROMPT },
            { key: 'bad', prompt: 'Break here.' },
            // Its answer ("Fine.") fails its criterion: the attempt is Failed, the batch counts it.
            { key: 'unmet', prompt: 'Answer with a verdict.', acceptance_criteria: ['contains: Verdict:'] },
          ],
          { max_live_items: 3, max_running_items: 3, max_attempts: 1 },
          {
            scripts: [
              {
                agent: 'general-purpose',
                prompt_contains: 'Break here',
                turns: [{ error: { status: 400, message: 'bad request' } }],
              },
              { agent: 'general-purpose', turns: [{ content: 'Fine.', usage }] },
            ],
          },
        ),
        { taskQueue, batchId: `${prefix}-batch` },
      );
      const cancelled = client.workflow.getHandle(`${prefix}-cancelled`);
      await waitFor(
        'the cancelled lead’s child to run',
        async () => (await cancelled.query(leadStatusQuery).catch(() => undefined))?.counts.in_progress === 1,
      );
      await cancelled.cancel();
      const asking = client.workflow.getHandle(`${prefix}-asking`);
      await waitFor(
        'the asking lead’s question',
        async () =>
          ((await asking.query(leadStatusQuery).catch(() => undefined))?.questions ?? []).length === 1,
      );
      const expected = expectedStatuses(prefix);
      const query = `WorkflowId STARTS_WITH "${prefix}-"`;
      let seen: Record<string, string> = {};
      await waitFor(
        'visibility to hold every workflow as it ended',
        async () => {
          seen = {};
          for await (const execution of client.workflow.list({ query })) {
            seen[execution.workflowId] = execution.status.name;
          }
          return (
            JSON.stringify(Object.entries(seen).sort()) === JSON.stringify(Object.entries(expected).sort())
          );
        },
        120_000,
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}: ${JSON.stringify(seen)}`);
      });

      try {
        return await withBrowserPage(async (page) => {
          const rows = await listRows(page, testNamespace(), query);
          await page.screenshot({ path: join(artifactsDir(), 'web-ui-list.png'), fullPage: true });
          const failedRows = await listRows(page, testNamespace(), `${query} AND SubagentStatus = "failed"`);
          await page.screenshot({
            path: join(artifactsDir(), 'web-ui-list-query-subagent-status-failed.png'),
            fullPage: true,
          });
          const panels = await readPanels(page, prefix, Object.keys(expected));
          return { prefix, rows, failedRows, panels };
        });
      } finally {
        await asking.cancel();
        await workflowResult(asking);
      }
    },
    { admission: ROOMY, runAdmission: ROOMY },
  );
}

/** The rendered text with the UI's curly quotes made straight: its markdown curls every quote outside code. */
const straightQuotes = (text: string) => text.replace(/[“”]/g, '"').replace(/[‘’]/g, "'");

describeInBrowser('web-ui-list')('the Web UI, for one run of every ending', () => {
  let seen: Seen;
  beforeAll(async () => {
    seen = await runAndLook();
  }, 300_000);

  it('lists each non-success in a status that is not the green Completed; completed and capped runs Completed', () => {
    const { prefix, rows } = seen;
    console.log(`web-ui list:\n${rows.map((row) => `${row.status} ${row.workflowId}`).join('\n')}`);
    const status = Object.fromEntries(rows.map((row) => [row.workflowId, row.status]));
    const name = { COMPLETED: 'Completed', FAILED: 'Failed', CANCELLED: 'Canceled', RUNNING: 'Running' };
    expect(status).toEqual(
      Object.fromEntries(
        Object.entries(expectedStatuses(prefix)).map(([id, ending]) => [
          id,
          name[ending as keyof typeof name],
        ]),
      ),
    );
    // Green is how the UI shows Completed (its `success` classes): no other row has those classes or that colour.
    const green = rows.filter((row) => row.status === 'Completed');
    expect(green.every((row) => row.badgeClass.includes('success'))).toBe(true);
    const greens = new Set(green.map((row) => row.badgeColour));
    expect(greens.size).toBe(1);
    const others = rows.filter((row) => row.status !== 'Completed');
    expect(others.filter((row) => row.badgeClass.includes('success') || greens.has(row.badgeColour))).toEqual(
      [],
    );
  });

  it('finds a batch item that failed its criteria, and its batch, with SubagentStatus = "failed"', () => {
    const { prefix, failedRows, panels } = seen;
    const found = Object.fromEntries(failedRows.map((row) => [row.workflowId, row.status]));
    expect(found).toMatchObject({
      [`${prefix}-batch`]: 'Completed',
      [`${prefix}-batch/item/unmet/1`]: 'Failed',
      [`${prefix}-batch/item/bad/1`]: 'Failed',
    });
    expect(panels[`${prefix}-batch/item/unmet/1`].currentDetails).toContain(
      'Error: acceptance criteria not met: contains: Verdict:',
    );
  });

  it('shows each closed workflow’s final line in its current details, no stale `Now:`', () => {
    const { prefix, panels } = seen;
    for (const [id, head] of Object.entries(finalHeads(prefix))) {
      const lines = panels[id].currentDetails;
      expect({
        id,
        head: lines[0]?.slice(0, head.length),
        now: lines.filter((line) => line.startsWith('Now:')),
      }).toEqual({ id, head, now: [] });
    }
    const lines = (suffix: string) => panels[`${prefix}-${suffix}`].currentDetails;
    expect(lines('capped')).toContain('Stop reason: turn_capped');
    expect(lines('delegating/task/capped')).toContain('Stop reason: token_capped');
    expect(lines('failed')).toEqual([expect.any(String), expect.stringMatching(/^Error: .*bad request/)]);
    expect(lines('timed_out')).toContain('Error: Run timed out after 2 seconds');
    expect(lines('delegating/task/slow')).toContain('Error: Execution timed out after 2 seconds');
  });

  it('shows the answer command of a run waiting on a question exactly as it is pasted', () => {
    const runId = `${seen.prefix}-asking`;
    const { currentDetails, currentCode } = seen.panels[runId];
    const command = `subagents answer ${runId} "<answer>" --question q1`;
    expect(currentCode).toEqual([command]);
    expect(currentDetails).toContain(`Answer with: ${command}`);
    expect(currentDetails.map(straightQuotes)).toContain(`Now: waiting for an answer to q1: "${QUESTION}"`);
  });

  it('shows a prompt as written in the details of a lead, a subagent and a batch item', () => {
    for (const suffix of ['completed', 'delegating/task/ok', 'batch/item/good/1']) {
      const { detailsBlock } = seen.panels[`${seen.prefix}-${suffix}`];
      // The word joiners that keep the UI from filling in `{namespace}`, `{workflowId}`, `{runId}` show as nothing.
      const shown = detailsBlock?.replace(/\n$/, '').replace(/\u2060/g, '');
      expect({ suffix, shown }).toEqual({ suffix, shown: PROMPT });
    }
  });
});
